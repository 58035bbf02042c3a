package org.ftmpi.api;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import mpi.*;
import org.ftmpi.LocalJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every blocking collective against a sequential reference, at 1..8 ranks, with seeded random
 * roots and counts (every rank draws the same sequence, so they agree), in place and not, with
 * predefined, commutative and non-commutative user operations.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CollectivesTest {

    /** The value rank {@code r} contributes at index {@code i} in round {@code round}. */
    static int v(int round, int r, int i) {
        return (round * 7919 + r * 131 + i * 17) % 1000 - 300;
    }

    static int[] data(int round, int r, int count) {
        int[] a = new int[count];
        for (int i = 0; i < count; i++) a[i] = v(round, r, i);
        return a;
    }

    /** 2x2 integer matrix product, element-wise on groups of four longs: associative, not commutative. */
    static final class MatMul extends UserFunction {
        @Override
        public void call(Object inVec, Object inOutVec, int count, Datatype datatype) {
            long[] a = (long[]) inVec, b = (long[]) inOutVec;
            for (int k = 0; k + 3 < count; k += 4) {
                long a0 = a[k], a1 = a[k + 1], a2 = a[k + 2], a3 = a[k + 3];
                long b0 = b[k], b1 = b[k + 1], b2 = b[k + 2], b3 = b[k + 3];
                b[k] = a0 * b0 + a1 * b2;
                b[k + 1] = a0 * b1 + a1 * b3;
                b[k + 2] = a2 * b0 + a3 * b2;
                b[k + 3] = a2 * b1 + a3 * b3;
            }
        }
    }

    static long[] matrices(int round, int r, int count) {
        long[] a = new long[count];
        for (int i = 0; i < count; i++) a[i] = Math.floorMod(v(round, r, i), 5) - 1;
        return a;
    }

    static long[] matProduct(int round, int from, int to, int count) throws MPIException {
        long[] acc = matrices(round, to - 1, count);
        MatMul f = new MatMul();
        for (int r = to - 2; r >= from; r--) f.call(matrices(round, r, count), acc, count, MPI.LONG);
        return acc;
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8})
    void everyCollectiveMatchesTheSequentialReference(int n) throws Exception {
        LocalJob.run(n, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int me = world.getRank();
            Random rnd = new Random(1234 + n);
            Op matmul = new Op(new MatMul(), false);
            Op userSum = new Op(new UserFunction() {
                @Override
                public void call(Object in, Object inout, int count, Datatype t) {
                    int[] a = (int[]) in, b = (int[]) inout;
                    for (int i = 0; i < count; i++) b[i] += a[i];
                }
            }, true);
            for (int round = 0; round < 6; round++) {
                int root = rnd.nextInt(n);
                int count = round == 0 ? 0 : rnd.nextInt(6);
                int[] mine = data(round, me, count);

                // bcast
                int[] b = me == root ? mine.clone() : new int[count];
                world.bcast(b, count, MPI.INT, root);
                assertArrayEquals(data(round, root, count), b, "bcast");

                // reduce / allReduce with SUM, MAX and a commutative user op
                int[] sum = new int[count], max = new int[count];
                Arrays.fill(max, Integer.MIN_VALUE);
                for (int r = 0; r < n; r++) {
                    for (int i = 0; i < count; i++) {
                        sum[i] += v(round, r, i);
                        max[i] = Math.max(max[i], v(round, r, i));
                    }
                }
                int[] out = new int[count];
                world.reduce(mine, out, count, MPI.INT, MPI.SUM, root);
                if (me == root) assertArrayEquals(sum, out, "reduce SUM");
                int[] inPlace = mine.clone();
                world.reduce(inPlace, count, MPI.INT, MPI.MAX, root);
                if (me == root) assertArrayEquals(max, inPlace, "reduce MAX in place");
                else assertArrayEquals(mine, inPlace, "reduce must not change a non-root's buffer");
                out = new int[count];
                world.allReduce(mine, out, count, MPI.INT, userSum);
                assertArrayEquals(sum, out, "allReduce user SUM");
                inPlace = mine.clone();
                world.allReduce(inPlace, count, MPI.INT, MPI.MAX);
                assertArrayEquals(max, inPlace, "allReduce MAX in place");
                double[] dmine = Arrays.stream(mine).asDoubleStream().toArray();
                double[] dsum = new double[count];
                world.allReduce(dmine, dsum, count, MPI.DOUBLE, MPI.SUM);
                assertArrayEquals(Arrays.stream(sum).asDoubleStream().toArray(), dsum, "allReduce DOUBLE SUM");

                // non-commutative: matrix products in rank order
                int mcount = 4 * (count % 3);
                long[] mats = matrices(round, me, mcount);
                long[] prod = new long[mcount];
                world.reduce(mats, prod, mcount, MPI.LONG, matmul, root);
                if (me == root) assertArrayEquals(matProduct(round, 0, n, mcount), prod, "reduce non-commutative");
                long[] all = mats.clone();
                world.allReduce(all, mcount, MPI.LONG, matmul);
                assertArrayEquals(matProduct(round, 0, n, mcount), all, "allReduce non-commutative");
                long[] sc = new long[mcount];
                world.scan(mats, sc, mcount, MPI.LONG, matmul);
                assertArrayEquals(matProduct(round, 0, me + 1, mcount), sc, "scan non-commutative");
                long[] ex = new long[mcount];
                Arrays.fill(ex, 99);
                world.exScan(mats, ex, mcount, MPI.LONG, matmul);
                if (me == 0) assertTrue(Arrays.stream(ex).allMatch(x -> x == 99), "exScan leaves rank 0 alone");
                else assertArrayEquals(matProduct(round, 0, me, mcount), ex, "exScan non-commutative");
                long[] scIn = mats.clone();
                world.scan(scIn, mcount, MPI.LONG, matmul);
                assertArrayEquals(sc, scIn, "scan in place");
                long[] exIn = mats.clone();
                world.exScan(exIn, mcount, MPI.LONG, matmul);
                if (me > 0) assertArrayEquals(ex, exIn, "exScan in place");

                // gather / scatter
                int[] expectAll = new int[count * n];
                for (int r = 0; r < n; r++) System.arraycopy(data(round, r, count), 0, expectAll, r * count, count);
                int[] g = new int[count * n];
                world.gather(mine, count, MPI.INT, g, count, MPI.INT, root);
                if (me == root) assertArrayEquals(expectAll, g, "gather");
                int[] gi;
                if (me == root) {
                    gi = new int[count * n];
                    System.arraycopy(mine, 0, gi, root * count, count);
                } else {
                    gi = mine.clone();
                }
                world.gather(gi, count, MPI.INT, root);
                if (me == root) assertArrayEquals(expectAll, gi, "gather in place");
                int[] s = new int[count];
                world.scatter(me == root ? expectAll : null, count, MPI.INT, s, count, MPI.INT, root);
                assertArrayEquals(mine, s, "scatter");
                int[] si = me == root ? expectAll.clone() : new int[count];
                world.scatter(si, count, MPI.INT, root);
                if (me == root) assertArrayEquals(expectAll, si, "scatter in place leaves the root's buffer");
                else assertArrayEquals(mine, si, "scatter in place");

                // v-variants: rank r has r % 3 + round % 2 elements, displaced with gaps
                int[] counts = new int[n], displs = new int[n];
                int at = 1;
                for (int r = 0; r < n; r++) {
                    counts[r] = (r + round) % 3;
                    displs[r] = at;
                    at += counts[r] + 2;
                }
                int[] vmine = data(round, me, counts[me]);
                int[] vexpect = new int[at];
                Arrays.fill(vexpect, -1);
                for (int r = 0; r < n; r++) System.arraycopy(data(round, r, counts[r]), 0, vexpect, displs[r], counts[r]);
                int[] gv = new int[at];
                Arrays.fill(gv, -1);
                world.gatherv(vmine, counts[me], MPI.INT, gv, counts, displs, MPI.INT, root);
                if (me == root) assertArrayEquals(vexpect, gv, "gatherv");
                if (me == root) {
                    int[] gvi = new int[at];
                    Arrays.fill(gvi, -1);
                    System.arraycopy(vmine, 0, gvi, displs[me], counts[me]);
                    world.gatherv(gvi, counts, displs, MPI.INT, root);
                    assertArrayEquals(vexpect, gvi, "gatherv in place");
                } else {
                    world.gatherv(vmine, counts[me], MPI.INT, root);
                }
                int[] sv = new int[counts[me]];
                world.scatterv(me == root ? vexpect : null, counts, displs, MPI.INT, sv, counts[me], MPI.INT, root);
                assertArrayEquals(vmine, sv, "scatterv");
                if (me == root) {
                    world.scatterv(vexpect.clone(), counts, displs, MPI.INT, root);
                } else {
                    int[] svi = new int[counts[me]];
                    world.scatterv(svi, counts[me], MPI.INT, root);
                    assertArrayEquals(vmine, svi, "scatterv in place");
                }

                // allGather(v)
                int[] ag = new int[count * n];
                world.allGather(mine, count, MPI.INT, ag, count, MPI.INT);
                assertArrayEquals(expectAll, ag, "allGather");
                int[] agi = new int[count * n];
                System.arraycopy(mine, 0, agi, me * count, count);
                world.allGather(agi, count, MPI.INT);
                assertArrayEquals(expectAll, agi, "allGather in place");
                int[] agv = new int[at];
                Arrays.fill(agv, -1);
                world.allGatherv(vmine, counts[me], MPI.INT, agv, counts, displs, MPI.INT);
                assertArrayEquals(vexpect, agv, "allGatherv");
                int[] agvi = new int[at];
                Arrays.fill(agvi, -1);
                System.arraycopy(vmine, 0, agvi, displs[me], counts[me]);
                world.allGatherv(agvi, counts, displs, MPI.INT);
                assertArrayEquals(vexpect, agvi, "allGatherv in place");

                // allToAll(v): block for j from r holds v(round, 1000 * r + j, i)
                int[] a2a = new int[count * n];
                for (int j = 0; j < n; j++) {
                    for (int i = 0; i < count; i++) a2a[j * count + i] = v(round, 1000 * me + j, i);
                }
                int[] a2aOut = new int[count * n];
                world.allToAll(a2a, count, MPI.INT, a2aOut, count, MPI.INT);
                for (int r = 0; r < n; r++) {
                    for (int i = 0; i < count; i++) assertEquals(v(round, 1000 * r + me, i), a2aOut[r * count + i], "allToAll");
                }
                // allToAllv: r sends (r + j) % 3 elements to j, packed at the end of a gap
                int[] sc2 = new int[n], sd = new int[n], rc = new int[n], rd = new int[n];
                int sat = 0, rat = 0;
                for (int j = 0; j < n; j++) {
                    sc2[j] = (me + j) % 3;
                    sd[j] = sat + 1;
                    sat += sc2[j] + 1;
                    rc[j] = (j + me) % 3;
                    rd[j] = rat;
                    rat += rc[j];
                }
                int[] vs = new int[sat];
                for (int j = 0; j < n; j++) {
                    for (int i = 0; i < sc2[j]; i++) vs[sd[j] + i] = v(round, 1000 * me + j, i);
                }
                int[] vr = new int[rat];
                world.allToAllv(vs, sc2, sd, MPI.INT, vr, rc, rd, MPI.INT);
                for (int r = 0; r < n; r++) {
                    for (int i = 0; i < rc[r]; i++) assertEquals(v(round, 1000 * r + me, i), vr[rd[r] + i], "allToAllv");
                }

                // reduceScatter(Block)
                int total = 0;
                for (int c : counts) total += c;
                int[] rsIn = data(round, me, total), rsOut = new int[counts[me]];
                world.reduceScatter(rsIn, rsOut, counts, MPI.INT, MPI.SUM);
                int off = 0;
                for (int r = 0; r < me; r++) off += counts[r];
                for (int i = 0; i < counts[me]; i++) {
                    int e = 0;
                    for (int r = 0; r < n; r++) e += v(round, r, off + i);
                    assertEquals(e, rsOut[i], "reduceScatter");
                }
                int[] rsi = rsIn.clone();
                world.reduceScatter(rsi, counts, MPI.INT, MPI.SUM);
                assertArrayEquals(rsOut, Arrays.copyOf(rsi, counts[me]), "reduceScatter in place");
                int[] rbIn = data(round, me, count * n), rbOut = new int[count];
                world.reduceScatterBlock(rbIn, rbOut, count, MPI.INT, MPI.SUM);
                for (int i = 0; i < count; i++) {
                    int e = 0;
                    for (int r = 0; r < n; r++) e += v(round, r, me * count + i);
                    assertEquals(e, rbOut[i], "reduceScatterBlock");
                }
                world.reduceScatterBlock(rbIn, count, MPI.INT, MPI.SUM);
                assertArrayEquals(rbOut, Arrays.copyOf(rbIn, count), "reduceScatterBlock in place");

                // scan with SUM
                int[] psum = new int[count];
                world.scan(mine, psum, count, MPI.INT, MPI.SUM);
                for (int i = 0; i < count; i++) {
                    int e = 0;
                    for (int r = 0; r <= me; r++) e += v(round, r, i);
                    assertEquals(e, psum[i], "scan SUM");
                }
            }
            // booleans: LAND / LOR
            boolean[] flag = {me % 2 == 0, true, me == n - 1};
            boolean[] land = new boolean[3], lor = new boolean[3];
            world.allReduce(flag, land, 3, MPI.BOOLEAN, MPI.LAND);
            world.allReduce(flag, lor, 3, MPI.BOOLEAN, MPI.LOR);
            assertArrayEquals(new boolean[] {n == 1, true, n == 1}, land);
            assertArrayEquals(new boolean[] {true, true, true}, lor);
            matmul.free();
            userSum.free();
        });
    }

    @Test
    void collectivesAndPointToPointDoNotInterfere() throws Exception {
        LocalJob.run(4, world -> {
            int me = world.getRank();
            int[] token = {100 + me};
            // every rank sends a p2p message to its right neighbour before the collectives ...
            world.send(token, 1, MPI.INT, (me + 1) % 4, 5);
            int[] b = {me == 2 ? 42 : 0};
            world.bcast(b, 1, MPI.INT, 2);
            int[] sum = new int[1];
            world.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
            int[] all = new int[4];
            world.allGather(new int[] {me}, 1, MPI.INT, all, 1, MPI.INT);
            world.barrier();
            // ... and a wildcard receive afterwards gets exactly that message, not collective traffic.
            int[] got = new int[1];
            Status s = world.recv(got, 1, MPI.INT, MPI.ANY_SOURCE, MPI.ANY_TAG);
            assertEquals(100 + (me + 3) % 4, got[0]);
            assertEquals(5, s.getTag());
            assertEquals(42, b[0]);
            assertEquals(6, sum[0]);
            assertArrayEquals(new int[] {0, 1, 2, 3}, all);
            assertNull(world.iProbe(MPI.ANY_SOURCE, MPI.ANY_TAG), "no collective message is visible to p2p");
        });
    }

    @Test
    void argumentErrorsNameTheArgument() throws Exception {
        LocalJob.run(2, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int[] x = new int[4];
            MPIException e = assertThrows(MPIException.class, () -> world.bcast(x, 1, MPI.INT, 2));
            assertEquals(MPI.ERR_ROOT, e.getErrorClass());
            assertTrue(e.getMessage().contains("root 2"), e.getMessage());
            e = assertThrows(MPIException.class, () -> world.reduce(x, x, 1, MPI.INT, MPI.SUM, -1));
            assertEquals(MPI.ERR_ROOT, e.getErrorClass());
            e = assertThrows(MPIException.class, () -> world.allReduce(x, new int[4], -1, MPI.INT, MPI.SUM));
            assertEquals(MPI.ERR_COUNT, e.getErrorClass());
            e = assertThrows(MPIException.class, () -> world.allGather(x, 1, MPI.INT, new int[4], -2, MPI.INT));
            assertEquals(MPI.ERR_COUNT, e.getErrorClass());
            assertTrue(e.getMessage().contains("recvcount"), e.getMessage());
            e = assertThrows(MPIException.class,
                    () -> world.allGatherv(x, 1, MPI.INT, new int[4], new int[] {1, -1}, new int[] {0, 1}, MPI.INT));
            assertEquals(MPI.ERR_COUNT, e.getErrorClass());
            assertTrue(e.getMessage().contains("recvcount[1]"), e.getMessage());
            double[] d = new double[2];
            e = assertThrows(MPIException.class, () -> world.allReduce(d, new double[2], 2, MPI.DOUBLE, MPI.BAND));
            assertEquals(MPI.ERR_OP, e.getErrorClass());
            assertTrue(e.getMessage().contains("MPI.BAND") && e.getMessage().contains("MPI.DOUBLE"), e.getMessage());
            e = assertThrows(MPIException.class,
                    () -> world.allReduce(new boolean[1], new boolean[1], 1, MPI.BOOLEAN, MPI.MAX));
            assertEquals(MPI.ERR_OP, e.getErrorClass());
            e = assertThrows(MPIException.class, () -> world.allReduce(x, new int[4], 1, MPI.INT, MPI.REPLACE));
            assertEquals(MPI.ERR_OP, e.getErrorClass());
            e = assertThrows(MPIException.class,
                    () -> world.allReduce(new double[2], new double[2], 1, MPI.DOUBLE_COMPLEX, MPI.MAX));
            assertEquals(MPI.ERR_OP, e.getErrorClass());
            // The communicator still works after argument errors (nothing was sent).
            int[] sum = new int[1];
            world.allReduce(new int[] {1}, sum, 1, MPI.INT, MPI.SUM);
            assertEquals(2, sum[0]);
            Intracomm d2 = world.dup();
            d2.free();
            e = assertThrows(MPIException.class, () -> d2.bcast(x, 1, MPI.INT, 0));
            assertEquals(MPI.ERR_COMM, e.getErrorClass());
        });
    }

    @Test
    void userFunctionErrorsReachTheCaller() throws Exception {
        LocalJob.run(2, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            Op bad = new Op(new UserFunction() {
                @Override
                public void call(Object in, Object inout, int count, Datatype t) throws MPIException {
                    throw new MPIException("deliberate");
                }
            }, true);
            int[] r = new int[1];
            if (world.getRank() == 0) {
                MPIException e = assertThrows(MPIException.class, () -> world.reduce(new int[1], r, 1, MPI.INT, bad, 0));
                assertTrue(e.getMessage().contains("deliberate"), e.getMessage());
            } else {
                world.reduce(new int[1], r, 1, MPI.INT, bad, 0);
            }
        });
    }

    @Test
    void reduceLocalAndPredefinedOpsPerType() throws MPIException {
        int[] in = {0b1100, 5, -3}, io = {0b1010, 7, 2};
        Comm.reduceLocal(in, io, 3, MPI.INT, MPI.BXOR);
        assertArrayEquals(new int[] {0b0110, 2, -3 ^ 2}, io);
        char[] c = {65535, 1}, ci = {1, 2};
        Comm.reduceLocal(c, ci, 2, MPI.CHAR, MPI.MAX);
        assertArrayEquals(new char[] {65535, 2}, ci, "CHAR is unsigned");
        byte[] b = {-128, 3}, bi = {1, 4};
        Comm.reduceLocal(b, bi, 2, MPI.BYTE, MPI.SUM);
        assertArrayEquals(new byte[] {-127, 7}, bi);
        long[] l = {Long.MAX_VALUE, 3}, li = {1, 0};
        Comm.reduceLocal(l, li, 2, MPI.LONG, MPI.LAND);
        assertArrayEquals(new long[] {1, 0}, li);
        float[] f = {1.5f, -2f}, fi = {2f, 3f};
        Comm.reduceLocal(f, fi, 2, MPI.FLOAT, MPI.PROD);
        assertArrayEquals(new float[] {3f, -6f}, fi);
        double[] z = {1, 2}, zi = {3, 4}; // (1+2i)(3+4i) = -5+10i
        Comm.reduceLocal(z, zi, 1, MPI.DOUBLE_COMPLEX, MPI.PROD);
        assertArrayEquals(new double[] {-5, 10}, zi);
        boolean[] p = {true, false}, pi = {true, true};
        Comm.reduceLocal(p, pi, 2, MPI.BOOLEAN, MPI.LXOR);
        assertArrayEquals(new boolean[] {false, true}, pi);
        short[] s = {-5, 9}, si = {3, 3};
        Comm.reduceLocal(s, si, 2, MPI.SHORT, MPI.MIN);
        assertArrayEquals(new short[] {-5, 3}, si);
        assertEquals(MPI.ERR_OP, assertThrows(MPIException.class,
                () -> Comm.reduceLocal(new float[1], new float[1], 1, MPI.FLOAT, MPI.LOR)).getErrorClass());
        assertEquals(MPI.ERR_OP, assertThrows(MPIException.class,
                () -> Comm.reduceLocal(new byte[1], new byte[1], 1, MPI.PACKED, MPI.SUM)).getErrorClass());
        assertTrue(MPI.SUM.isCommute());
        assertEquals(MPI.ERR_OP, assertThrows(MPIException.class, MPI.SUM::free).getErrorClass());
        Op user = new Op(new CollectivesTest.MatMul(), false);
        assertFalse(user.isCommute());
        user.free();
        assertTrue(user.isNull());
        assertEquals(MPI.ERR_OP, assertThrows(MPIException.class,
                () -> Comm.reduceLocal(new long[4], new long[4], 4, MPI.LONG, user)).getErrorClass());
    }

    @Test
    void largeMessagesAndDirectBuffersUseTheRendezvousPathWithoutDeadlock() throws Exception {
        int n = 3;
        int count = 40_000; // 160 KB of ints per block: above the tcp eager limit
        LocalJob.run(n, world -> {
            int me = world.getRank();
            java.nio.IntBuffer send = MPI.newIntBuffer(count * n), recv = MPI.newIntBuffer(count * n);
            for (int i = 0; i < count * n; i++) send.put(i, me * 1_000_000 + i);
            world.allToAll(send, count, MPI.INT, recv, count, MPI.INT);
            for (int r = 0; r < n; r++) {
                assertEquals(r * 1_000_000 + me * count, recv.get(r * count));
                assertEquals(r * 1_000_000 + me * count + count - 1, recv.get(r * count + count - 1));
            }
            world.allGather(send, count, MPI.INT, recv, count, MPI.INT);
            for (int r = 0; r < n; r++) assertEquals(r * 1_000_000 + count - 1, recv.get(r * count + count - 1));
            long[] big = new long[count];
            Arrays.fill(big, me + 1);
            long[] sum = new long[count];
            world.allReduce(big, sum, count, MPI.LONG, MPI.SUM);
            assertEquals(n * (n + 1) / 2, sum[count - 1]);
            double[] b = new double[count];
            if (me == 1) Arrays.fill(b, 2.5);
            world.bcast(b, count, MPI.DOUBLE, 1);
            assertEquals(2.5, b[count - 1]);
        });
    }

    @Test
    void collectivesOnTwoCommunicatorsFromTwoThreadsDoNotMix() throws Exception {
        LocalJob.run(4, world -> {
            Intracomm a = world.dup(), b = world.dup();
            int me = world.getRank();
            java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
            Thread t = Thread.ofPlatform().start(() -> {
                try {
                    for (int i = 0; i < 50; i++) {
                        int[] s = new int[1];
                        b.allReduce(new int[] {1000 + me}, s, 1, MPI.INT, MPI.SUM);
                        assertEquals(4006, s[0]);
                    }
                } catch (Throwable e) {
                    failure.set(e);
                }
            });
            for (int i = 0; i < 50; i++) {
                int[] s = new int[1];
                a.allReduce(new int[] {me}, s, 1, MPI.INT, MPI.MAX);
                assertEquals(3, s[0]);
                int[] x = {me == i % 4 ? i : -1};
                a.bcast(x, 1, MPI.INT, i % 4);
                assertEquals(i, x[0]);
            }
            t.join();
            if (failure.get() != null) throw new AssertionError(failure.get());
            a.free();
            b.free();
        });
    }

    @Test
    void theDefaultAlgorithmsAreFoundThroughServiceLoader() {
        assertEquals("default", org.ftmpi.coll.Collectives.load().name());
        assertTrue(java.util.ServiceLoader.load(org.ftmpi.coll.Collectives.class).stream()
                .anyMatch(p -> p.type() == org.ftmpi.coll.DefaultCollectives.class));
    }

    /**
     * A user function's operand buffers are reused from call to call: whatever sizes came
     * before, each call sees direct buffers of exactly its operands' bytes in native order, and
     * a reduction inside the user function gets buffers of its own.
     */
    @Test
    void userFunctionsSeeExactlyTheirOperandsAcrossSizesAndNesting() throws Exception {
        LocalJob.run(3, world -> {
            Op inner = new Op(new UserFunction() {
                @Override
                public void call(java.nio.ByteBuffer in, java.nio.ByteBuffer io, int count, Datatype t) {
                    for (int i = 0; i < count; i++) io.putLong(8 * i, io.getLong(8 * i) + in.getLong(8 * i));
                }
            }, true);
            Op outer = new Op(new UserFunction() {
                @Override
                public void call(java.nio.ByteBuffer in, java.nio.ByteBuffer io, int count, Datatype t) throws MPIException {
                    assertEquals(8 * count, in.capacity());
                    assertEquals(8 * count, io.limit());
                    assertEquals(java.nio.ByteOrder.nativeOrder(), io.order());
                    long[] x = new long[count], y = new long[count];
                    java.util.Arrays.fill(x, 7);
                    java.util.Arrays.fill(y, 1);
                    Comm.reduceLocal(x, y, count, MPI.LONG, inner); // a user function while this one runs
                    for (long v : y) assertEquals(8, v);
                    // this call's operands are still intact: the nested call had buffers of its own
                    for (int i = 0; i < count; i++) io.putLong(8 * i, io.getLong(8 * i) + in.getLong(8 * i));
                }
            }, true);
            for (int n : new int[] {1000, 10, 5000, 1, 5000}) {
                long[] s = new long[n], r = new long[n];
                for (int i = 0; i < n; i++) s[i] = (world.getRank() + 1) * (long) (i + n);
                world.allReduce(s, r, n, MPI.LONG, outer);
                for (int i = 0; i < n; i++) assertEquals(6L * (i + n), r[i], "size " + n + ", element " + i);
            }
        });
    }

    /**
     * Vectors of 64 KiB and more are all-reduced by reduce-scatter + allgather (Rabenseifner):
     * every size of communicator, powers of two or not (the first ranks folded in pairs), block
     * counts that do not divide the vector, in place and not, give the exact sums and maxima, and
     * every member ends with the same bits of a floating-point sum.
     */
    @Test
    void largeVectorsAreReducedExactlyAndIdenticallyEverywhere() throws Exception {
        for (int n : new int[] {2, 3, 4, 5, 6, 8}) {
            LocalJob.run(n, world -> {
                int rank = world.getRank(), size = world.getSize();
                for (int count : new int[] {8192 + 3, 20_011, 70_001}) {
                    long[] s = new long[count], r = new long[count];
                    for (int i = 0; i < count; i++) s[i] = (long) (rank + 1) * (i % 1009) - i;
                    world.allReduce(s, r, count, MPI.LONG, MPI.SUM);
                    for (int i = 0; i < count; i++) {
                        assertEquals((long) size * (size + 1) / 2 * (i % 1009) - (long) size * i, r[i],
                                "np " + size + ", count " + count + ", element " + i);
                    }
                    world.allReduce(s, count, MPI.LONG, MPI.MAX); // in place
                    for (int i = 0; i < count; i++) assertEquals(Math.max((long) size * (i % 1009) - i, (i % 1009) - i), s[i]);
                    double[] d = new double[count], e = new double[count];
                    java.util.Random rnd = new java.util.Random(rank * 31L + count);
                    for (int i = 0; i < count; i++) d[i] = rnd.nextGaussian() * 1e3;
                    world.allReduce(d, e, count, MPI.DOUBLE, MPI.SUM);
                    long[] bits = {java.util.Arrays.hashCode(e)}, all = new long[size];
                    world.allGather(bits, 1, MPI.LONG, all, 1, MPI.LONG);
                    for (long b : all) assertEquals(bits[0], b, "np " + size + ": the members' sums differ");
                }
            });
        }
    }

    /**
     * A rooted reduce of vectors larger than the scratch regions once were (the binomial tree's
     * partial results in kept scratch regions): every communicator size, roots at either end and
     * in between, odd counts, and in place at the root, give the exact sums at the root.
     */
    @Test
    void largeVectorsAreReducedExactlyToAnyRoot() throws Exception {
        for (int n : new int[] {2, 3, 4, 5, 6, 8}) {
            LocalJob.run(n, world -> {
                int rank = world.getRank(), size = world.getSize();
                for (int root : new int[] {0, 1, size - 1}) {
                    for (int count : new int[] {8192 + 5, 30_001}) {
                        long[] s = new long[count], r = new long[count];
                        for (int i = 0; i < count; i++) s[i] = (long) (rank + 1) * (i % 1013) - i + root;
                        world.reduce(s, r, count, MPI.LONG, MPI.SUM, root);
                        if (rank == root) {
                            for (int i = 0; i < count; i++) {
                                assertEquals((long) size * (size + 1) / 2 * (i % 1013) - (long) size * (i - root), r[i],
                                        "np " + size + ", root " + root + ", count " + count + ", element " + i);
                            }
                        }
                        world.reduce(s, count, MPI.LONG, MPI.MAX, root); // in place at the root
                        if (rank == root) {
                            for (int i = 0; i < count; i++) assertEquals((long) size * (i % 1013) - i + root, s[i]);
                        }
                    }
                }
            });
        }
    }
}
