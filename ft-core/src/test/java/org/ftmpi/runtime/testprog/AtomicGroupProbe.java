package org.ftmpi.runtime.testprog;

import mpi.Group;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;

/**
 * MPI program for FT-MPI collective mode ATOMIC and {@code createGroup}, which is collective
 * over the group only ({@code FtModesSystemTest}): np 5, comm-mode SHRINK, recovery MANUAL,
 * {@code --coll-mode atomic}. The evens (0, 2, 4) and the odds (1, 3) make their communicators
 * at the same time, each agreeing over its own members; an allReduce on each and on COMM_WORLD
 * follows. Then rank 3 (an odd) dies and both groups call createGroup again: the evens, whom the
 * death does not concern, either all get the communicator or all raise (which one depends on
 * when each hears of the death: a member that hears of it first fails its part); rank 1, the
 * odds' survivor, raises. After the recovery the groups of the new COMM_WORLD are made again.
 * Output lines start with {@code rank R} (R: the original world rank).
 */
public final class AtomicGroupProbe {
    private AtomicGroupProbe() {}

    private static final int VICTIM = 3;
    private static int me;

    public static void main(String[] args) throws Exception {
        Intracomm w = ProbeLines.init(args);
        me = w.getRank();
        say("fault-free " + groupSum(w, 1));
        ProbeLines.syncThenDie(w, me == VICTIM);
        try {
            Intracomm c = make(w, 2);
            say((me % 2 == 0 ? "evens" : "odds") + " createGroup returned size " + c.getSize());
        } catch (MPIException e) {
            say((me % 2 == 0 ? "evens" : "odds") + " createGroup raised class " + e.getErrorClass());
        }
        ProbeLines.recoverFrom(w, VICTIM); // a member that returned may not have heard of the death yet
        say("after recovery " + groupSum(w, 3));
        MPI.Finalize();
        say("finalized");
    }

    /** The evens and the odds of {@code w} make their groups with {@code tag}; the sums over each, and over {@code w}. */
    private static String groupSum(Intracomm w, int tag) throws MPIException {
        Intracomm c = make(w, tag);
        int[] s = {me};
        c.allReduce(s, 1, MPI.INT, MPI.SUM);
        int[] t = {me};
        w.allReduce(t, 1, MPI.INT, MPI.SUM);
        return "group size " + c.getSize() + " sum " + s[0] + " world sum " + t[0];
    }

    private static Intracomm make(Intracomm w, int tag) throws MPIException {
        int n = w.getSize(), r = w.getRank();
        int[] ranks = new int[(n - r % 2 + 1) / 2];
        for (int i = 0; i < ranks.length; i++) ranks[i] = r % 2 + 2 * i;
        Group g = w.getGroup().incl(ranks);
        return w.createGroup(g, tag + 10 * (r % 2));
    }

    private static void say(String s) {
        ProbeLines.say(me, s);
    }
}
