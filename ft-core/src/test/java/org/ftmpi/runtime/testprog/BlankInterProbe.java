package org.ftmpi.runtime.testprog;

import java.nio.IntBuffer;
import java.util.Arrays;
import mpi.Intercomm;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.Request;
import mpi.Status;

/**
 * MPI program for comm-mode BLANK on an intercommunicator ({@code
 * FtModesSystemTest.blankSkipsTheBlankInIntercommunicatorCollectives}): np 5, rank 3 kills
 * itself, the others recover (MANUAL); an agreement on COMM_WORLD right after the recovery gets
 * its own result, not the decision of the same instance before it. Then group A = world ranks (0, 2, 4) and group B = world
 * ranks (3, 1) are made with {@code create}, so B's rank 0 is the blank and its only live member
 * is its rank 1. An intercommunicator between them runs every kind of collective, non-blocking
 * ones, point-to-point and a probe naming the blank, dup and merge. Receive buffers start at -1,
 * so the blank's untouched blocks show as -1. Output lines start with {@code rank R}.
 */
public final class BlankInterProbe {
    private BlankInterProbe() {}

    private static final int BLANK = 3;
    private static int me;

    public static void main(String[] args) throws Exception {
        Intracomm w = ProbeLines.init(args);
        me = w.getRank();
        int before = w.agree(1);
        ProbeLines.killAndRecover(w, BLANK);
        // a new generation's agreements start afresh: not the decisions of the old one's instances
        say("agree before " + before + " after " + w.agree(me == 0 ? 0 : 1));
        boolean inA = me % 2 == 0;
        Intracomm a = w.create(w.getGroup().incl(new int[] {0, 2, 4}));
        Intracomm b = w.create(w.getGroup().incl(new int[] {BLANK, 1}));
        Intracomm mine = inA ? a : b;
        mine.setErrhandler(MPI.ERRORS_RETURN);
        if (!inA) {
            try {
                w.createIntercomm(b, 0, 0, 7);
                say("blank leader accepted");
            } catch (MPIException e) {
                say("blank leader class " + e.getErrorClass());
            }
        }
        // the leaders: A's rank 0 (world 0) and B's rank 1 (world 1)
        Intercomm ic = inA ? w.createIntercomm(a, 0, 1, 7) : w.createIntercomm(b, 1, 0, 7);
        int r = ic.getRank(), remote = ic.getRemoteSize();
        boolean aRoot = inA && r == 0;
        ic.barrier();

        int[] bc = {aRoot ? 77 : -1}, bb = {-1};
        ic.bcast(bc, 1, MPI.INT, inA ? (aRoot ? MPI.ROOT : MPI.PROC_NULL) : 0);
        ic.bcast(bb, 1, MPI.INT, inA ? 0 : MPI.PROC_NULL); // root: B's rank 0, the blank
        int[] sum = {-1};
        ic.allReduce(new int[] {me + 1}, sum, 1, MPI.INT, MPI.SUM);
        int[] ag = ProbeLines.filled(remote);
        ic.allGather(new int[] {me + 10}, 1, MPI.INT, ag, 1, MPI.INT);
        say("bcast " + bc[0] + " blank-root " + bb[0] + " sum " + sum[0] + " allgather " + Arrays.toString(ag));

        int[] g = ProbeLines.filled(2), sc = {-1};
        ic.gather(new int[] {me + 10}, 1, MPI.INT, g, 1, MPI.INT, inA ? (aRoot ? MPI.ROOT : MPI.PROC_NULL) : 0);
        ic.scatter(new int[] {20, 21, 22}, 1, MPI.INT, sc, 1, MPI.INT, inA ? 1 : MPI.ROOT);
        int[] send = new int[remote], a2a = ProbeLines.filled(remote);
        for (int j = 0; j < remote; j++) send[j] = 100 * me + j;
        ic.allToAll(send, 1, MPI.INT, a2a, 1, MPI.INT);
        int[] red = {-1};
        ic.reduce(new int[] {me}, red, 1, MPI.INT, MPI.SUM, inA ? 1 : MPI.ROOT);
        int[] rs = ProbeLines.filled(inA ? 1 : 2);
        ic.reduceScatter(new int[] {me + 1, 10 * (me + 1), 100 * (me + 1)}, rs, inA ? new int[] {1, 1, 1}
                : new int[] {2, 1}, MPI.INT, MPI.SUM);
        say("gather " + (aRoot ? Arrays.toString(g) : "-") + " scatter " + sc[0] + " alltoall " + Arrays.toString(a2a)
                + " reduce " + (inA ? "-" : red[0]) + " reducescatter " + Arrays.toString(rs));

        IntBuffer nsum = ProbeLines.direct(1), nbc = ProbeLines.direct(1);
        if (aRoot) nbc.put(0, 88);
        Request[] rq = {
            ic.iAllReduce(ProbeLines.direct(1).put(0, me + 1), nsum, 1, MPI.INT, MPI.SUM),
            ic.iBcast(nbc, 1, MPI.INT, inA ? (aRoot ? MPI.ROOT : MPI.PROC_NULL) : 0),
        };
        Request.waitAll(rq);
        say("nb: sum " + nsum.get(0) + " bcast " + nbc.get(0));

        if (aRoot) {
            ic.send(new int[] {5}, 1, MPI.INT, 0, 3); // to the blank: returns at once, as to PROC_NULL
            Status s = ic.recv(new int[] {-1}, 1, MPI.INT, 0, 3);
            Status p = ic.iProbe(0, MPI.ANY_TAG);
            say("p2p blank: recv source " + s.getSource() + " probe source " + p.getSource());
        }
        Intercomm d = ic.dup();
        int[] dsum = {-1};
        d.allReduce(new int[] {me + 1}, dsum, 1, MPI.INT, MPI.SUM);
        Intracomm m = d.merge(!inA);
        int[] msum = {-1};
        m.allReduce(new int[] {me}, msum, 1, MPI.INT, MPI.SUM);
        say("dup sum " + dsum[0] + " merged size " + m.getSize() + " rank " + m.getRank() + " sum " + msum[0]);
        MPI.Finalize();
        say("finalized");
    }

    private static void say(String s) {
        ProbeLines.say(me, s);
    }
}
