package org.ftmpi.api;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import mpi.*;
import org.ftmpi.LocalJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every non-blocking collective against a sequential reference at 1..8 ranks, all of one round
 * outstanding at once and interleaved with point-to-point traffic and a blocking collective on
 * the same communicator; in-place forms; iDup; argument errors.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NonBlockingCollectivesTest {

    static int v(int round, int r, int i) {
        return (round * 7919 + r * 131 + i * 17) % 1000 - 300;
    }

    static IntBuffer ints(int n) {
        return MPI.newIntBuffer(Math.max(n, 0));
    }

    static IntBuffer fill(int round, int r, int n) {
        IntBuffer b = ints(n);
        for (int i = 0; i < n; i++) b.put(i, v(round, r, i));
        return b;
    }

    static int[] arr(IntBuffer b, int n) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) a[i] = b.get(i);
        return a;
    }

    /** What a check compares once every request of the round is complete. */
    interface Check {
        void run();
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8})
    void everyNonBlockingCollectiveMatchesTheSequentialReference(int n) throws Exception {
        LocalJob.run(n, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int me = world.getRank();
            Random rnd = new Random(99 + n);
            for (int round = 0; round < 5; round++) {
                int root = rnd.nextInt(n);
                int count = round == 0 ? 0 : 1 + rnd.nextInt(5);
                int rd = round;
                int[] cnt = new int[n], displs = new int[n];
                int total = 0;
                for (int j = n - 1; j >= 0; j--) { // blocks laid out in reverse rank order
                    cnt[j] = round == 0 ? 0 : (j + round) % 3;
                    displs[j] = total;
                    total += cnt[j];
                }
                int tot = total;
                List<Request> reqs = new ArrayList<>();
                List<Check> checks = new ArrayList<>();

                // point-to-point ring on the same communicator, posted first
                IntBuffer ringIn = ints(1), ringOut = ints(1);
                ringOut.put(0, 1000 + me);
                reqs.add(world.iRecv(ringIn, 1, MPI.INT, (me - 1 + n) % n, 7));

                reqs.add(world.iBarrier());

                IntBuffer bc = me == root ? fill(rd, root, count) : ints(count);
                reqs.add(world.iBcast(bc, count, MPI.INT, root));
                checks.add(() -> assertArrayEquals(arr(fill(rd, root, count), count), arr(bc, count), "iBcast"));

                IntBuffer redIn = fill(rd, me, count), redOut = ints(count);
                reqs.add(world.iReduce(redIn, redOut, count, MPI.INT, MPI.SUM, root));
                IntBuffer arIn = fill(rd, me, count), arOut = ints(count);
                reqs.add(world.iAllReduce(arIn, arOut, count, MPI.INT, MPI.SUM));
                IntBuffer arPlace = fill(rd, me, count);
                reqs.add(world.iAllReduce(arPlace, count, MPI.INT, MPI.MAX));
                checks.add(() -> {
                    int[] sum = new int[count], max = new int[count];
                    java.util.Arrays.fill(max, Integer.MIN_VALUE);
                    for (int r = 0; r < n; r++) {
                        for (int i = 0; i < count; i++) {
                            sum[i] += v(rd, r, i);
                            max[i] = Math.max(max[i], v(rd, r, i));
                        }
                    }
                    if (me == root) assertArrayEquals(sum, arr(redOut, count), "iReduce");
                    assertArrayEquals(sum, arr(arOut, count), "iAllReduce");
                    assertArrayEquals(max, arr(arPlace, count), "iAllReduce in place");
                });

                // a p2p send and a blocking collective while the above are outstanding
                reqs.add(world.iSend(ringOut, 1, MPI.INT, (me + 1) % n, 7));
                int[] blocking = {me};
                world.allReduce(blocking, 1, MPI.INT, MPI.SUM);
                assertEquals(n * (n - 1) / 2, blocking[0], "blocking allReduce amid i-collectives");

                IntBuffer gIn = fill(rd, me, count), gOut = ints(count * n);
                reqs.add(world.iGather(gIn, count, MPI.INT, gOut, count, MPI.INT, root));
                IntBuffer agOut = ints(count * n);
                reqs.add(world.iAllGather(fill(rd, me, count), count, MPI.INT, agOut, count, MPI.INT));
                IntBuffer agPlace = ints(count * n);
                for (int i = 0; i < count; i++) agPlace.put(me * count + i, v(rd, me, i));
                reqs.add(world.iAllGather(agPlace, count, MPI.INT));
                checks.add(() -> {
                    int[] all = new int[count * n];
                    for (int r = 0; r < n; r++) for (int i = 0; i < count; i++) all[r * count + i] = v(rd, r, i);
                    if (me == root) assertArrayEquals(all, arr(gOut, count * n), "iGather");
                    assertArrayEquals(all, arr(agOut, count * n), "iAllGather");
                    assertArrayEquals(all, arr(agPlace, count * n), "iAllGather in place");
                });

                IntBuffer sOut = ints(count);
                reqs.add(world.iScatter(fill(rd, root, count * n), count, MPI.INT, sOut, count, MPI.INT, root));
                checks.add(() -> {
                    for (int i = 0; i < count; i++) assertEquals(v(rd, root, me * count + i), sOut.get(i), "iScatter");
                });

                IntBuffer gvOut = ints(tot);
                reqs.add(world.iGatherv(fill(rd, me, cnt[me]), cnt[me], MPI.INT, gvOut, cnt, displs, MPI.INT, root));
                IntBuffer agvOut = ints(tot);
                reqs.add(world.iAllGatherv(fill(rd, me, cnt[me]), cnt[me], MPI.INT, agvOut, cnt, displs, MPI.INT));
                IntBuffer svIn = fill(rd, root, tot), svOut = ints(cnt[me]);
                reqs.add(world.iScatterv(svIn, cnt, displs, MPI.INT, svOut, cnt[me], MPI.INT, root));
                checks.add(() -> {
                    for (int r = 0; r < n; r++) {
                        for (int i = 0; i < cnt[r]; i++) {
                            if (me == root) assertEquals(v(rd, r, i), gvOut.get(displs[r] + i), "iGatherv");
                            assertEquals(v(rd, r, i), agvOut.get(displs[r] + i), "iAllGatherv");
                        }
                    }
                    for (int i = 0; i < cnt[me]; i++) assertEquals(v(rd, root, displs[me] + i), svOut.get(i), "iScatterv");
                });

                // all-to-all: rank r sends value 10000*r + 100*j + i as element i of block j
                IntBuffer aaIn = ints(count * n), aaOut = ints(count * n);
                for (int j = 0; j < n; j++) for (int i = 0; i < count; i++) aaIn.put(j * count + i, 10000 * me + 100 * j + i);
                reqs.add(world.iAllToAll(aaIn, count, MPI.INT, aaOut, count, MPI.INT));
                int[] scnt = new int[n], sdis = new int[n], rcnt = new int[n], rdis = new int[n];
                int st = 0, rt = 0;
                for (int j = 0; j < n; j++) {
                    scnt[j] = (me + j + rd) % 3; // what me sends to j; j receives (j' + me ...) symmetric below
                    rcnt[j] = (j + me + rd) % 3;
                    sdis[j] = st;
                    rdis[j] = rt;
                    st += scnt[j];
                    rt += rcnt[j];
                }
                IntBuffer avIn = ints(st), avOut = ints(rt);
                for (int j = 0; j < n; j++) for (int i = 0; i < scnt[j]; i++) avIn.put(sdis[j] + i, 10000 * me + 100 * j + i);
                reqs.add(world.iAllToAllv(avIn, scnt, sdis, MPI.INT, avOut, rcnt, rdis, MPI.INT));
                checks.add(() -> {
                    for (int j = 0; j < n; j++) {
                        for (int i = 0; i < count; i++) assertEquals(10000 * j + 100 * me + i, aaOut.get(j * count + i), "iAllToAll");
                        for (int i = 0; i < rcnt[j]; i++) assertEquals(10000 * j + 100 * me + i, avOut.get(rdis[j] + i), "iAllToAllv");
                    }
                });

                int[] rsCnt = new int[n];
                int rsTot = 0;
                for (int j = 0; j < n; j++) rsTot += rsCnt[j] = (j + rd) % 3;
                int rsT = rsTot;
                IntBuffer rsOut = ints(rsCnt[me]);
                reqs.add(world.iReduceScatter(fill(rd, me, rsT), rsOut, rsCnt, MPI.INT, MPI.SUM));
                IntBuffer rsbOut = ints(count);
                reqs.add(world.iReduceScatterBlock(fill(rd, me, count * n), rsbOut, count, MPI.INT, MPI.SUM));
                IntBuffer scOut = ints(count), exOut = ints(count);
                for (int i = 0; i < count; i++) exOut.put(i, -77);
                reqs.add(world.iScan(fill(rd, me, count), scOut, count, MPI.INT, MPI.SUM));
                reqs.add(world.iExScan(fill(rd, me, count), exOut, count, MPI.INT, MPI.SUM));
                checks.add(() -> {
                    int off = 0;
                    for (int j = 0; j < me; j++) off += rsCnt[j];
                    for (int i = 0; i < rsCnt[me]; i++) {
                        int s = 0;
                        for (int r = 0; r < n; r++) s += v(rd, r, off + i);
                        assertEquals(s, rsOut.get(i), "iReduceScatter");
                    }
                    for (int i = 0; i < count; i++) {
                        int s = 0, pre = 0;
                        for (int r = 0; r < n; r++) s += v(rd, r, me * count + i);
                        assertEquals(s, rsbOut.get(i), "iReduceScatterBlock");
                        for (int r = 0; r < me; r++) pre += v(rd, r, i);
                        assertEquals(pre + v(rd, me, i), scOut.get(i), "iScan");
                        assertEquals(me == 0 ? -77 : pre, exOut.get(i), "iExScan");
                    }
                });

                Request.waitAll(reqs.toArray(new Request[0]));
                assertEquals(1000 + (me - 1 + n) % n, ringIn.get(0), "p2p ring amid i-collectives");
                for (Check c : checks) c.run();
            }
        });
    }

    @Test
    void largeNonBlockingBroadcastUsesRendezvousAndTestPolls() throws Exception {
        LocalJob.run(3, world -> {
            int me = world.getRank();
            int count = 50_000; // 200 KB: above the TCP eager limit
            IntBuffer b = ints(count);
            if (me == 1) for (int i = 0; i < count; i++) b.put(i, i * 3);
            Request r = world.iBcast(b, count, MPI.INT, 1);
            while (!r.test()) Thread.onSpinWait();
            assertTrue(r.isNull());
            for (int i = 0; i < count; i += 997) assertEquals(i * 3, b.get(i));
        });
    }

    @Test
    void inPlaceRootFormsAndWaitAny() throws Exception {
        LocalJob.run(5, world -> {
            int me = world.getRank();
            int n = 5, root = 3, count = 2;
            IntBuffer g = ints(count * n);
            if (me == root) {
                for (int i = 0; i < count; i++) g.put(root * count + i, v(0, root, i));
            } else {
                for (int i = 0; i < count; i++) g.put(i, v(0, me, i));
            }
            Request gr = world.iGather(g, count, MPI.INT, root);
            IntBuffer s = ints(count * n);
            if (me == root) for (int i = 0; i < count * n; i++) s.put(i, 5 * i);
            Request sr = world.iScatter(s, count, MPI.INT, root);
            IntBuffer red = fill(0, me, count);
            Request rr = world.iReduce(red, count, MPI.INT, MPI.SUM, root);
            Request[] all = {gr, sr, rr};
            int done = 0;
            while (done < 3) {
                int idx = Request.waitAny(all);
                assertNotEquals(MPI.UNDEFINED, idx);
                done++;
            }
            assertEquals(MPI.UNDEFINED, Request.waitAny(all));
            if (me == root) {
                for (int r = 0; r < n; r++) for (int i = 0; i < count; i++) assertEquals(v(0, r, i), g.get(r * count + i));
                for (int i = 0; i < count; i++) {
                    int sum = 0;
                    for (int r = 0; r < n; r++) sum += v(0, r, i);
                    assertEquals(sum, red.get(i));
                }
            } else {
                for (int i = 0; i < count; i++) assertEquals(5 * (me * count + i), s.get(i));
            }
        });
    }

    @Test
    void iDupGivesAnIsolatedCommunicatorOnceComplete() throws Exception {
        LocalJob.run(4, world -> {
            int me = world.getRank();
            Intracomm d1 = world.iDup();
            Intracomm d2 = world.dup(); // a blocking construction while the iDup is pending
            Intracomm d3 = world.iDup();
            assertNull(world.getRequest());
            Request.waitAll(new Request[] {d1.getRequest(), d3.getRequest()});
            assertEquals(MPI.CONGRUENT, Comm.compare(world, d1));
            assertEquals(MPI.CONGRUENT, Comm.compare(d1, d3));
            assertNotEquals(MPI.IDENT, Comm.compare(d1, d3));
            int[] x = {me};
            d1.allReduce(x, 1, MPI.INT, MPI.SUM);
            assertEquals(6, x[0]);
            int[] y = {1};
            d3.allReduce(y, 1, MPI.INT, MPI.SUM);
            assertEquals(4, y[0]);
            d1.free();
            d2.free();
            d3.free();
        });
    }

    @Test
    void argumentErrorsAreRaisedAtTheCallAndRuntimeErrorsAtTheWait() throws Exception {
        LocalJob.run(2, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            MPIException e = assertThrows(MPIException.class, () -> world.iBcast(IntBuffer.allocate(4), 4, MPI.INT, 0));
            assertEquals(MPI.ERR_BUFFER, e.getErrorClass());
            assertTrue(e.getMessage().contains("direct"), e.getMessage());
            e = assertThrows(MPIException.class, () -> world.iBcast(ints(4), 4, MPI.INT, 2));
            assertEquals(MPI.ERR_ROOT, e.getErrorClass());
            assertTrue(e.getMessage().contains("root 2"), e.getMessage());
            e = assertThrows(MPIException.class, () -> world.iAllReduce(ints(4), ints(4), -1, MPI.INT, MPI.SUM));
            assertEquals(MPI.ERR_COUNT, e.getErrorClass());
            e = assertThrows(MPIException.class, () -> world.iAllReduce(ints(4), ints(4), 4, MPI.INT, null));
            assertEquals(MPI.ERR_OP, e.getErrorClass());
            e = assertThrows(MPIException.class, () -> world.iAllToAllv(ints(4), new int[] {1}, new int[] {0, 0},
                    MPI.INT, ints(4), new int[] {1, 1}, new int[] {0, 1}, MPI.INT));
            assertEquals(MPI.ERR_ARG, e.getErrorClass());
            assertTrue(e.getMessage().contains("sendcount"), e.getMessage());
            // A failing user function surfaces at the wait, with its error class.
            Op bad = new Op(new UserFunction() {
                @Override
                public void call(Object in, Object inout, int count, Datatype t) throws MPIException {
                    throw new MPIException("boom");
                }
            }, true);
            Request r = world.iAllReduce(ints(1), ints(1), 1, MPI.INT, bad);
            MPIException w = assertThrows(MPIException.class, r::waitFor);
            assertTrue(w.getMessage().contains("iAllReduce"), w.getMessage());
            world.barrier();
            Intracomm d = world.dup();
            d.setErrhandler(MPI.ERRORS_RETURN);
            d.free();
            e = assertThrows(MPIException.class, d::iBarrier);
            assertEquals(MPI.ERR_COMM, e.getErrorClass());
        });
    }
}
