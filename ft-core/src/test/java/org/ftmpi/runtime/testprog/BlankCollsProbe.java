package org.ftmpi.runtime.testprog;

import java.nio.IntBuffer;
import java.util.Arrays;
import mpi.Intracomm;
import mpi.MPI;
import mpi.Request;
import mpi.Status;

/**
 * MPI program for comm-mode BLANK's collectives beyond the basic ones ({@code
 * RecoverySystemTest.blankSkipsTheBlankInEveryCollective}): np 4, rank 2 kills itself, the others
 * recover (MANUAL) and run the v-variants, all-to-all(v), scans, reduce-scatter, the in-place and
 * non-blocking forms, probes of the blank, dup and split over a COMM_WORLD with a blank. Buffers
 * start at -1, so an untouched block of the blank shows as -1. Output lines start with {@code rank R}.
 */
public final class BlankCollsProbe {
    private BlankCollsProbe() {}

    private static final int BLANK = 2;
    private static int me;

    public static void main(String[] args) throws Exception {
        Intracomm w = ProbeLines.init(args);
        me = w.getRank();
        ProbeLines.killAndRecover(w, BLANK);
        int[] g = ProbeLines.filled(5);
        int[] counts = {1, 2, 1, 1}, displs = {0, 1, 3, 4};
        int[] mine = new int[counts[me]];
        Arrays.fill(mine, me + 100);
        w.gatherv(mine, counts[me], MPI.INT, g, counts, displs, MPI.INT, 0);
        int[] gb = ProbeLines.filled(5);
        w.gatherv(mine, counts[me], MPI.INT, gb, counts, displs, MPI.INT, BLANK);
        int[] sv = ProbeLines.filled(1);
        w.scatterv(new int[] {10, 11, 12, 13}, new int[] {1, 1, 1, 1}, new int[] {0, 1, 2, 3}, MPI.INT, sv, 1, MPI.INT, 0);
        int[] agv = ProbeLines.filled(4);
        w.allGatherv(new int[] {me + 200}, 1, MPI.INT, agv, new int[] {1, 1, 1, 1}, new int[] {0, 1, 2, 3}, MPI.INT);
        say("v: gatherv " + (me == 0 ? Arrays.toString(g) : "-") + " blank-root " + Arrays.toString(gb) + " scatterv "
                + sv[0] + " allgatherv " + Arrays.toString(agv));

        int[] a2a = ProbeLines.filled(4), a2av = ProbeLines.filled(4), send = new int[4];
        for (int j = 0; j < 4; j++) send[j] = me * 10 + j;
        w.allToAll(send, 1, MPI.INT, a2a, 1, MPI.INT);
        int[] ones = {1, 1, 1, 1}, at = {0, 1, 2, 3};
        w.allToAllv(send, ones, at, MPI.INT, a2av, ones, at, MPI.INT);
        say("alltoall " + Arrays.toString(a2a) + " alltoallv " + Arrays.toString(a2av));

        int[] scan = ProbeLines.filled(1), exscan = ProbeLines.filled(1), prod = ProbeLines.filled(1), rs = ProbeLines.filled(1);
        w.scan(new int[] {me + 1}, scan, 1, MPI.INT, MPI.SUM);
        w.exScan(new int[] {me + 1}, exscan, 1, MPI.INT, MPI.SUM);
        w.scan(new int[] {me + 2}, prod, 1, MPI.INT, MPI.PROD);
        int[] rsIn = new int[4];
        for (int i = 0; i < 4; i++) rsIn[i] = (me + 1) * (i + 1);
        w.reduceScatter(rsIn, rs, new int[] {1, 1, 1, 1}, MPI.INT, MPI.SUM);
        say("scan " + scan[0] + " exscan " + exscan[0] + " prodscan " + prod[0] + " reducescatter " + rs[0]);

        IntBuffer b = buf(1), bb = buf(1), mn = buf(1), ig = buf(4), isc = buf(1);
        if (me == 0) b.put(0, 42);
        Request[] rq = {
            w.iBcast(b, 1, MPI.INT, 0),
            w.iBcast(bb, 1, MPI.INT, BLANK),
            w.iAllReduce(ints(me + 5), mn, 1, MPI.INT, MPI.MIN),
            w.iGather(ints(me + 300), 1, MPI.INT, ig, 1, MPI.INT, 0),
            w.iScan(ints(me + 1), isc, 1, MPI.INT, MPI.SUM),
        };
        Request.waitAll(rq);
        say("nb: bcast " + b.get(0) + " blank-root " + bb.get(0) + " min " + mn.get(0)
                + (me == 0 ? " gather [" + ig.get(0) + ", " + ig.get(1) + ", " + ig.get(2) + ", " + ig.get(3) + "]" : "")
                + " scan " + isc.get(0));

        Status p = w.iProbe(BLANK, MPI.ANY_TAG);
        Intracomm dup = w.dup();
        int[] sum = new int[1];
        dup.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
        Intracomm half = w.split(me % 2, me);
        say("probe blank source " + p.getSource() + " dup sum " + sum[0] + " split size " + half.getSize());
        MPI.Finalize();
        say("finalized");
    }


    private static IntBuffer buf(int n) {
        IntBuffer x = MPI.newIntBuffer(n);
        for (int i = 0; i < n; i++) x.put(i, -1);
        return x;
    }

    private static IntBuffer ints(int v) {
        IntBuffer x = MPI.newIntBuffer(1);
        x.put(0, v);
        return x;
    }

    private static void say(String s) {
        ProbeLines.say(me, s);
    }
}
