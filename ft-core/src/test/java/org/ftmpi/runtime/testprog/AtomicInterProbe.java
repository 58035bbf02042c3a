package org.ftmpi.runtime.testprog;

import java.nio.IntBuffer;
import java.util.Arrays;
import mpi.Intercomm;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;

/**
 * MPI program for FT-MPI collective mode ATOMIC on an intercommunicator ({@code FtModesSystemTest}):
 * np 5, comm-mode SHRINK, recovery MANUAL, {@code --coll-mode atomic}. Group A holds the even
 * world ranks (0, 2, 4), group B the odd ones (1, 3). Fault-free, an allGather, an iAllGather, a
 * dup and a merge give the plain results. Then rank 3 (in B) dies: in the allGather and the
 * iAllGather that follow, rank 1's own part succeeds (it receives only from A, all alive), yet
 * every survivor raises and no receive buffer changed (they start at -1); a dup raises at every
 * survivor too. After the recovery COMM_WORLD works again. Output lines start with {@code rank R}.
 */
public final class AtomicInterProbe {
    private AtomicInterProbe() {}

    private static final int VICTIM = 3;
    private static int me;

    public static void main(String[] args) throws Exception {
        Intracomm w = ProbeLines.init(args);
        me = w.getRank();
        int colour = me % 2;
        Intracomm half = w.split(colour, me);
        Intercomm ic = w.createIntercomm(half, 0, 1 - colour, 9);
        int remote = ic.getRemoteSize();
        int[] ag = ProbeLines.filled(remote);
        ic.allGather(new int[] {me + 10}, 1, MPI.INT, ag, 1, MPI.INT);
        IntBuffer nb = ProbeLines.direct(remote);
        ic.iAllGather(ProbeLines.direct(1).put(0, me + 20), 1, MPI.INT, nb, 1, MPI.INT).waitFor();
        Intercomm d = ic.dup();
        Intracomm m = d.merge(colour == 1);
        int[] sum = {me};
        m.allReduce(sum, 1, MPI.INT, MPI.SUM);
        say("fault-free allgather " + Arrays.toString(ag) + " iallgather " + ProbeLines.contents(nb) + " merged rank "
                + m.getRank() + " sum " + sum[0]);
        ProbeLines.syncThenDie(w, me == VICTIM);
        int[] ag2 = ProbeLines.filled(remote);
        try {
            ic.allGather(new int[] {me + 10}, 1, MPI.INT, ag2, 1, MPI.INT);
            say("allgather returned " + Arrays.toString(ag2));
        } catch (MPIException e) {
            say("allgather raised class " + e.getErrorClass() + ", buffer " + Arrays.toString(ag2));
        }
        IntBuffer nb2 = ProbeLines.direct(remote);
        try {
            ic.iAllGather(ProbeLines.direct(1).put(0, me + 20), 1, MPI.INT, nb2, 1, MPI.INT).waitFor();
            say("iallgather returned " + ProbeLines.contents(nb2));
        } catch (MPIException e) {
            say("iallgather raised, buffer " + ProbeLines.contents(nb2));
        }
        try {
            ic.dup();
            say("dup returned");
        } catch (MPIException e) {
            say("dup raised");
        }
        MPI.recover();
        int[] after = ProbeLines.filled(4);
        w.allGather(new int[] {me + 10}, 1, MPI.INT, after, 1, MPI.INT);
        say("after recovery allgather " + Arrays.toString(after));
        MPI.Finalize();
        say("finalized");
    }


    private static void say(String s) {
        ProbeLines.say(me, s);
    }
}
