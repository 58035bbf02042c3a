package org.ftmpi.api;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.IntBuffer;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import mpi.*;
import org.ftmpi.LocalJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Intercommunicators: creation, remote groups, point-to-point, merge, dup, the intercommunicator collectives. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class IntercommTest {

    /** Splits the world by {@code colour[rank]} and joins the two halves; the world is the peer communicator. */
    static Intercomm join(Intracomm world, int[] colour) throws MPIException {
        int me = world.getRank();
        Intracomm half = world.split(colour[me], me);
        int remoteLeader = 0;
        while (colour[remoteLeader] == colour[me]) remoteLeader++;
        Intercomm ic = world.createIntercomm(half, 0, remoteLeader, 77);
        half.free(); // the intercommunicator does not depend on the local communicator staying alive
        return ic;
    }

    static int[] remoteWorld(Intercomm ic, Intracomm world) throws MPIException {
        int m = ic.getRemoteSize();
        int[] ranks = new int[m];
        for (int i = 0; i < m; i++) ranks[i] = i;
        return Group.translateRanks(ic.getRemoteGroup(), ranks, world.getGroup());
    }

    @Test
    void createQueriesAndPointToPoint() throws Exception {
        int[] colour = {0, 1, 0, 1, 0};
        LocalJob.run(5, world -> {
            int me = world.getRank();
            Intercomm ic = join(world, colour);
            assertTrue(ic.isInter());
            assertFalse(world.isInter());
            int n = colour[me] == 0 ? 3 : 2, m = 5 - n;
            assertEquals(n, ic.getSize());
            assertEquals(m, ic.getRemoteSize());
            assertEquals(me / 2, ic.getRank());
            int[] rw = remoteWorld(ic, world);
            assertArrayEquals(colour[me] == 0 ? new int[] {1, 3} : new int[] {0, 2, 4}, rw);
            assertEquals(MPI.UNDEFINED, ic.getRemoteGroup().getRank());
            // Every process sends its world rank to every remote rank; ranks name remote processes.
            for (int j = 0; j < m; j++) ic.send(new int[] {me}, 1, MPI.INT, j, 5);
            for (int j = 0; j < m; j++) {
                int[] x = new int[1];
                Status s = ic.recv(x, 1, MPI.INT, j, 5);
                assertEquals(rw[j], x[0]);
                assertEquals(j, s.getSource());
            }
            ic.send(new int[] {me}, 1, MPI.INT, 0, 6);
            if (ic.getRank() == 0) {
                for (int k = 0; k < m; k++) {
                    int[] x = new int[1];
                    Status s = ic.recv(x, 1, MPI.INT, MPI.ANY_SOURCE, 6);
                    assertEquals(rw[s.getSource()], x[0]);
                }
            }
            ic.setErrhandler(MPI.ERRORS_RETURN);
            MPIException e = assertThrows(MPIException.class, () -> ic.send(new int[1], 1, MPI.INT, m, 0));
            assertEquals(MPI.ERR_RANK, e.getErrorClass());
            assertTrue(e.getMessage().contains("remote group"), e.getMessage());
            ic.free();
            assertTrue(ic.isNull());
        });
    }

    @Test
    void mergeOrdersGroupsByHighThenByLeader() throws Exception {
        int[] colour = {1, 0, 0, 1, 0, 1};
        LocalJob.run(6, world -> {
            int me = world.getRank();
            Intercomm ic = join(world, colour);
            // colour 0 = {1, 2, 4}, colour 1 = {0, 3, 5}
            Intracomm a = ic.merge(colour[me] == 0);      // colour 1 passes high = false: first
            assertArrayEquals(new int[] {0, 3, 5, 1, 2, 4}, members(a, me));
            Intracomm b = ic.merge(colour[me] == 1);
            assertArrayEquals(new int[] {1, 2, 4, 0, 3, 5}, members(b, me));
            Intracomm c = ic.merge(true);                 // same value: the group of world rank 0 first
            assertArrayEquals(new int[] {0, 3, 5, 1, 2, 4}, members(c, me));
            int[] sum = new int[1];
            c.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
            assertEquals(15, sum[0]);
            a.free();
            b.free();
            c.free();
            ic.free();
        });
    }

    /** World ranks of the members of {@code c}, in rank order ({@code me}: the caller's world rank). */
    static int[] members(Intracomm c, int me) throws MPIException {
        int[] all = new int[c.getSize()];
        c.allGather(new int[] {me}, 1, MPI.INT, all, 1, MPI.INT);
        return all;
    }

    @Test
    void dupIsIsolatedAndCongruent() throws Exception {
        int[] colour = {0, 0, 1, 1};
        LocalJob.run(4, world -> {
            Intercomm ic = join(world, colour);
            int key = Comm.createKeyval();
            ic.setAttr(key, "x");
            Intercomm d = ic.dup();
            assertTrue(d.isInter());
            assertEquals("x", d.getAttr(key));
            assertEquals(MPI.CONGRUENT, Comm.compare(ic, d));
            assertEquals(MPI.IDENT, Comm.compare(ic, ic));
            assertEquals(MPI.UNEQUAL, Comm.compare(ic, world));
            int r = ic.getRank();
            // A message on the duplicate is not received on the original, even with wildcards.
            d.send(new int[] {1}, 1, MPI.INT, r, 0);
            ic.send(new int[] {2}, 1, MPI.INT, r, 0);
            int[] x = new int[1];
            ic.recv(x, 1, MPI.INT, MPI.ANY_SOURCE, MPI.ANY_TAG);
            assertEquals(2, x[0]);
            d.recv(x, 1, MPI.INT, MPI.ANY_SOURCE, MPI.ANY_TAG);
            assertEquals(1, x[0]);
            Intercomm e = d.clone();
            e.barrier();
            e.free();
            d.free();
            ic.free();
            Comm.freeKeyval(key);
        });
    }

    @Test
    void collectivesMatchTheStandardsIntercommSemantics() throws Exception {
        checkCollectives(5, new int[] {0, 1, 0, 1, 0});
        checkCollectives(4, new int[] {1, 0, 0, 0});
        checkCollectives(2, new int[] {0, 1});
    }

    private static void checkCollectives(int np, int[] colour) throws Exception {
        LocalJob.run(np, world -> {
            int me = world.getRank();
            int col = colour[me];
            Intercomm ic = join(world, colour);
            int r = ic.getRank(), n = ic.getSize(), m = ic.getRemoteSize();
            int[] rw = remoteWorld(ic, world);
            ic.barrier();

            // bcast from colour 0's last rank to colour 1
            int bRoot = col == 0 ? n - 1 : m - 1;
            int[] b = {-1, -1};
            if (col == 0) {
                if (r == bRoot) b = new int[] {7, me};
                ic.bcast(b, 2, MPI.INT, r == bRoot ? MPI.ROOT : MPI.PROC_NULL);
                if (r != bRoot) assertArrayEquals(new int[] {-1, -1}, b); // PROC_NULL: untouched
            } else {
                ic.bcast(b, 2, MPI.INT, bRoot);
                assertArrayEquals(new int[] {7, rw[bRoot]}, b);
            }

            // reduce to colour 1's rank 0 from colour 0
            int[] red = new int[2];
            if (col == 1) {
                ic.reduce(null, red, 2, MPI.INT, MPI.SUM, r == 0 ? MPI.ROOT : MPI.PROC_NULL);
                if (r == 0) assertArrayEquals(new int[] {Arrays.stream(rw).sum(), m}, red);
            } else {
                ic.reduce(new int[] {me, 1}, red, 2, MPI.INT, MPI.SUM, 0);
            }

            // allReduce: each group gets the other's sum; non-commutative op in rank order as well
            int[] all = new int[2];
            ic.allReduce(new int[] {me, 1}, all, 2, MPI.INT, MPI.SUM);
            assertArrayEquals(new int[] {Arrays.stream(rw).sum(), m}, all);

            // gather / gatherv at colour 0's rank 0
            if (col == 0) {
                int root = r == 0 ? MPI.ROOT : MPI.PROC_NULL;
                int[] g = new int[2 * m];
                ic.gather(null, 0, MPI.INT, g, 2, MPI.INT, root);
                int[] counts = new int[m], displs = new int[m];
                int total = 0;
                for (int j = m - 1; j >= 0; j--) { counts[j] = j + 1; displs[j] = total; total += j + 1; }
                int[] gv = new int[total];
                ic.gatherv(null, 0, MPI.INT, gv, counts, displs, MPI.INT, root);
                if (r == 0) {
                    for (int j = 0; j < m; j++) {
                        assertEquals(rw[j], g[2 * j]);
                        assertEquals(j, g[2 * j + 1]);
                        for (int k = 0; k < j + 1; k++) assertEquals(rw[j], gv[displs[j] + k]);
                    }
                }
            } else {
                ic.gather(new int[] {me, r}, 2, MPI.INT, null, 0, MPI.INT, 0);
                int[] mine = new int[r + 1];
                Arrays.fill(mine, me);
                ic.gatherv(mine, r + 1, MPI.INT, 0); // the non-root form
            }

            // scatter / scatterv from colour 1's rank 0
            if (col == 1) {
                int root = r == 0 ? MPI.ROOT : MPI.PROC_NULL;
                int[] s = new int[m];
                for (int j = 0; j < m; j++) s[j] = 100 + j;
                ic.scatter(s, 1, MPI.INT, null, 0, MPI.INT, root);
                int[] counts = new int[m], displs = new int[m];
                int total = 0;
                for (int j = 0; j < m; j++) { counts[j] = j + 1; displs[j] = total; total += j + 1; }
                int[] sv = new int[total];
                for (int j = 0; j < m; j++) Arrays.fill(sv, displs[j], displs[j] + j + 1, 200 + j);
                ic.scatterv(sv, counts, displs, MPI.INT, null, 0, MPI.INT, root);
            } else {
                int[] x = new int[1];
                ic.scatter(null, 0, MPI.INT, x, 1, MPI.INT, 0);
                assertEquals(100 + r, x[0]);
                int[] y = new int[r + 1];
                ic.scatterv(y, r + 1, MPI.INT, 0); // the non-root form
                for (int v : y) assertEquals(200 + r, v);
            }

            // allGather / allGatherv: blocks from every member of the other group
            int[] ag = new int[m];
            ic.allGather(new int[] {me}, 1, MPI.INT, ag, 1, MPI.INT);
            assertArrayEquals(rw, ag);
            int[] counts = new int[m], displs = new int[m];
            int total = 0;
            for (int j = 0; j < m; j++) { counts[j] = j + 1; displs[j] = total; total += j + 1; }
            int[] agv = new int[total];
            int[] mine = new int[r + 1];
            Arrays.fill(mine, me);
            ic.allGatherv(mine, r + 1, MPI.INT, agv, counts, displs, MPI.INT);
            for (int j = 0; j < m; j++) for (int k = 0; k <= j; k++) assertEquals(rw[j], agv[displs[j] + k]);

            // allToAll / allToAllv: block j to remote rank j; p -> q carries p + q + 1 elements in v
            int[] a2s = new int[m], a2r = new int[m];
            for (int j = 0; j < m; j++) a2s[j] = me * 100 + j;
            ic.allToAll(a2s, 1, MPI.INT, a2r, 1, MPI.INT);
            for (int j = 0; j < m; j++) assertEquals(rw[j] * 100 + r, a2r[j]);
            int[] sc = new int[m], sd = new int[m], rc = new int[m], rd = new int[m];
            int st = 0, rt = 0;
            for (int j = 0; j < m; j++) {
                sc[j] = rc[j] = r + j + 1;
                sd[j] = st; st += sc[j];
                rd[j] = rt; rt += rc[j];
            }
            int[] vs = new int[st], vr = new int[rt];
            for (int j = 0; j < m; j++) Arrays.fill(vs, sd[j], sd[j] + sc[j], me * 1000 + j);
            ic.allToAllv(vs, sc, sd, MPI.INT, vr, rc, rd, MPI.INT);
            for (int j = 0; j < m; j++) for (int k = 0; k < rc[j]; k++) assertEquals(rw[j] * 1000 + r, vr[rd[j] + k]);

            // reduceScatterBlock / reduceScatter: n * m elements in both groups
            int len = n * m;
            int[] in = new int[len];
            for (int i = 0; i < len; i++) in[i] = me + i;
            int[] blk = new int[m];
            ic.reduceScatterBlock(in, blk, m, MPI.INT, MPI.SUM);
            for (int k = 0; k < m; k++) assertEquals(expected(rw, r * m + k), blk[k]);
            int[] rcounts = new int[n];
            Arrays.fill(rcounts, m);
            if (n > 1) { rcounts[0] = 0; rcounts[n - 1] += m; }
            int start = 0;
            for (int i = 0; i < r; i++) start += rcounts[i];
            int[] rs = new int[rcounts[r]];
            ic.reduceScatter(in, rs, rcounts, MPI.INT, MPI.SUM);
            for (int k = 0; k < rcounts[r]; k++) assertEquals(expected(rw, start + k), rs[k]);
            ic.barrier();
            ic.free();
        });
    }

    @Test
    void nonBlockingCollectivesMatchTheBlockingOnes() throws Exception {
        checkNonBlocking(5, new int[] {0, 1, 0, 1, 0});
        checkNonBlocking(3, new int[] {1, 0, 0});
    }

    static IntBuffer ints(int... v) {
        IntBuffer b = MPI.newIntBuffer(Math.max(1, v.length));
        for (int i = 0; i < v.length; i++) b.put(i, v[i]);
        return b;
    }

    static int[] array(IntBuffer b, int n) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) a[i] = b.get(i);
        return a;
    }

    /** Several non-blocking collectives outstanding at once, with a blocking one started meanwhile. */
    private static void checkNonBlocking(int np, int[] colour) throws Exception {
        LocalJob.run(np, world -> {
            int me = world.getRank();
            int col = colour[me];
            Intercomm ic = join(world, colour);
            int r = ic.getRank(), n = ic.getSize(), m = ic.getRemoteSize();
            int[] rw = remoteWorld(ic, world);
            int sumRemote = Arrays.stream(rw).sum();

            Request barrier = ic.iBarrier();
            IntBuffer b = ints(-1, -1);
            if (col == 0 && r == 0) b = ints(7, me);
            Request bcast = ic.iBcast(b, 2, MPI.INT, col == 0 ? (r == 0 ? MPI.ROOT : MPI.PROC_NULL) : 0);
            IntBuffer all = ints(0, 0);
            Request allReduce = ic.iAllReduce(ints(me, 1), all, 2, MPI.INT, MPI.SUM);
            IntBuffer red = ints(0, 0);
            Request reduce = col == 1
                    ? ic.iReduce(ints(0, 0), red, 2, MPI.INT, MPI.SUM, r == 0 ? MPI.ROOT : MPI.PROC_NULL)
                    : ic.iReduce(ints(me, 1), red, 2, MPI.INT, MPI.SUM, 0);
            // a blocking collective while those are outstanding: isolated by tag
            int[] blocking = new int[2];
            ic.allReduce(new int[] {me, 2}, blocking, 2, MPI.INT, MPI.SUM);
            assertArrayEquals(new int[] {sumRemote, 2 * m}, blocking);

            IntBuffer ag = MPI.newIntBuffer(m);
            Request allGather = ic.iAllGather(ints(me), 1, MPI.INT, ag, 1, MPI.INT);
            IntBuffer a2s = MPI.newIntBuffer(m), a2r = MPI.newIntBuffer(m);
            for (int j = 0; j < m; j++) a2s.put(j, me * 100 + j);
            Request allToAll = ic.iAllToAll(a2s, 1, MPI.INT, a2r, 1, MPI.INT);
            IntBuffer g = MPI.newIntBuffer(2 * m);
            Request gather = col == 0
                    ? ic.iGather(ints(), 0, MPI.INT, g, 2, MPI.INT, r == 0 ? MPI.ROOT : MPI.PROC_NULL)
                    : ic.iGather(ints(me, r), 2, MPI.INT, g, 0, MPI.INT, 0);
            IntBuffer sc = MPI.newIntBuffer(Math.max(1, m)), x = ints(-1);
            for (int j = 0; j < m; j++) sc.put(j, 100 + j);
            Request scatter = col == 1
                    ? ic.iScatter(sc, 1, MPI.INT, x, 0, MPI.INT, r == 0 ? MPI.ROOT : MPI.PROC_NULL)
                    : ic.iScatter(sc, 0, MPI.INT, x, 1, MPI.INT, 0);
            int len = n * m;
            IntBuffer in = MPI.newIntBuffer(len), blk = MPI.newIntBuffer(m);
            for (int i = 0; i < len; i++) in.put(i, me + i);
            Request rsb = ic.iReduceScatterBlock(in, blk, m, MPI.INT, MPI.SUM);

            // the v forms: remote rank j contributes j + 1 copies of its world rank
            int[] counts = new int[m], displs = new int[m];
            int total = 0;
            for (int j = 0; j < m; j++) { counts[j] = j + 1; displs[j] = total; total += j + 1; }
            IntBuffer mine = MPI.newIntBuffer(r + 1);
            for (int k = 0; k <= r; k++) mine.put(k, me);
            IntBuffer agv = MPI.newIntBuffer(total);
            Request allGatherv = ic.iAllGatherv(mine, r + 1, MPI.INT, agv, counts, displs, MPI.INT);
            IntBuffer gv = MPI.newIntBuffer(total);
            Request gatherv = col == 0
                    ? ic.iGatherv(ints(), 0, MPI.INT, gv, counts, displs, MPI.INT, r == 0 ? MPI.ROOT : MPI.PROC_NULL)
                    : ic.iGatherv(mine, r + 1, MPI.INT, 0);
            int[] rcounts = new int[n];
            Arrays.fill(rcounts, m);
            if (n > 1) { rcounts[0] = 0; rcounts[n - 1] += m; }
            int start = 0;
            for (int i = 0; i < r; i++) start += rcounts[i];
            IntBuffer rs = MPI.newIntBuffer(Math.max(1, rcounts[r]));
            Request reduceScatter = ic.iReduceScatter(in, rs, rcounts, MPI.INT, MPI.SUM);

            Request.waitAll(new Request[] {barrier, bcast, allReduce, reduce, allGather, allToAll, gather, scatter, rsb,
                    allGatherv, gatherv, reduceScatter});
            for (int j = 0; j < m; j++) {
                for (int k = 0; k <= j; k++) {
                    assertEquals(rw[j], agv.get(displs[j] + k));
                    if (col == 0 && r == 0) assertEquals(rw[j], gv.get(displs[j] + k));
                }
            }
            for (int k = 0; k < rcounts[r]; k++) assertEquals(expected(rw, start + k), rs.get(k));
            if (col == 1) assertArrayEquals(new int[] {7, rw[0]}, array(b, 2));
            else if (r != 0) assertArrayEquals(new int[] {-1, -1}, array(b, 2));
            assertArrayEquals(new int[] {sumRemote, m}, array(all, 2));
            if (col == 1 && r == 0) assertArrayEquals(new int[] {sumRemote, m}, array(red, 2));
            assertArrayEquals(rw, array(ag, m));
            for (int j = 0; j < m; j++) assertEquals(rw[j] * 100 + r, a2r.get(j));
            if (col == 0 && r == 0) {
                for (int j = 0; j < m; j++) assertArrayEquals(new int[] {rw[j], j}, new int[] {g.get(2 * j), g.get(2 * j + 1)});
            }
            if (col == 0) assertEquals(100 + r, x.get(0));
            for (int k = 0; k < m; k++) assertEquals(expected(rw, r * m + k), blk.get(k));
            ic.free();
        });
    }

    /** Element i of the other group's SUM of (world rank + i). */
    static int expected(int[] rw, int i) {
        int s = 0;
        for (int w : rw) s += w + i;
        return s;
    }

    @Test
    void errorsNameTheArgument() throws Exception {
        int[] colour = {0, 1, 0};
        LocalJob.run(3, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int me = world.getRank();
            Intracomm half = world.split(colour[me], me);
            half.setErrhandler(MPI.ERRORS_RETURN);
            MPIException e = assertThrows(MPIException.class, () -> world.createIntercomm(half, 5, 1, 0));
            assertEquals(MPI.ERR_RANK, e.getErrorClass());
            assertTrue(e.getMessage().contains("localLeader"), e.getMessage());
            // A bad remoteLeader at the leaders: every member of both groups gets an error, none waits.
            e = assertThrows(MPIException.class, () -> world.createIntercomm(half, 0, 9, 3));
            assertEquals(half.getRank() == 0 ? MPI.ERR_RANK : MPI.ERR_OTHER, e.getErrorClass());
            assertTrue(e.getMessage().contains(half.getRank() == 0 ? "remoteLeader" : "leader"), e.getMessage());
            Intercomm ic = world.createIntercomm(half, 0, colour[me] == 0 ? 1 : 0, 3);
            ic.setErrhandler(MPI.ERRORS_RETURN);
            int[] x = new int[4];
            e = assertThrows(MPIException.class, () -> ic.bcast(x, 1, MPI.INT, 7));
            assertEquals(MPI.ERR_ROOT, e.getErrorClass());
            assertTrue(e.getMessage().contains("MPI.ROOT"), e.getMessage());
            e = assertThrows(MPIException.class, () -> ic.allReduce(x, 1, MPI.INT, MPI.SUM)); // in place
            assertEquals(MPI.ERR_COMM, e.getErrorClass());
            e = assertThrows(MPIException.class, () -> ic.iAllReduce(MPI.newIntBuffer(1), 1, MPI.INT, MPI.SUM));
            assertEquals(MPI.ERR_COMM, e.getErrorClass()); // in place
            e = assertThrows(MPIException.class, () -> ic.shrink());
            assertEquals(MPI.ERR_COMM, e.getErrorClass());
            e = assertThrows(MPIException.class, () -> ic.neighborAllGather(x, 1, MPI.INT, x, 1, MPI.INT));
            assertEquals(MPI.ERR_TOPOLOGY, e.getErrorClass());
            ic.free();
            half.free();
        });
    }

    @Test
    void iDupCompletesWhileBlockingCollectivesRunOnTheOriginal() throws Exception {
        int[] colour = {0, 1, 1, 0, 1};
        LocalJob.run(5, world -> {
            int me = world.getRank();
            Intercomm ic = join(world, colour);
            int key = Comm.createKeyval();
            ic.setAttr(key, "kept");
            Intercomm d = ic.iDup(); // usable once its request completes
            // Blocking traffic on the original before waiting does not disturb the duplication.
            ic.barrier();
            int[] sum = new int[1];
            ic.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
            d.getRequest().waitFor();
            assertTrue(d.isInter());
            assertEquals(ic.getSize(), d.getSize());
            assertEquals(ic.getRemoteSize(), d.getRemoteSize());
            assertEquals(ic.getRank(), d.getRank());
            assertEquals(MPI.CONGRUENT, Comm.compare(ic, d));
            assertEquals("kept", d.getAttr(key));
            // The duplicate has contexts of its own: the same tag on both never crosses.
            int m = d.getRemoteSize();
            for (int j = 0; j < m; j++) {
                d.send(new int[] {1000 + me}, 1, MPI.INT, j, 4);
                ic.send(new int[] {me}, 1, MPI.INT, j, 4);
            }
            int[] rw = remoteWorld(ic, world);
            for (int j = 0; j < m; j++) {
                int[] a = new int[1], b = new int[1];
                ic.recv(a, 1, MPI.INT, j, 4);
                d.recv(b, 1, MPI.INT, j, 4);
                assertEquals(rw[j], a[0]);
                assertEquals(1000 + rw[j], b[0]);
            }
            int[] other = new int[1];
            d.allReduce(new int[] {me}, other, 1, MPI.INT, MPI.SUM);
            int remoteSum = 0;
            for (int w : rw) remoteSum += w;
            assertEquals(remoteSum, other[0]); // an intercommunicator allreduce gives the other group's sum
            d.free();
            ic.free();
            Comm.freeKeyval(key);
        });
    }
}
