package org.ftmpi.runtime.testprog;

import mpi.Intercomm;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;

/**
 * MPI program for {@code createIntercomm} with a process dying inside it ({@code
 * FtModesSystemTest}): np 5, comm-mode SHRINK, recovery MANUAL, {@code --coll-mode atomic}, the
 * victim (argument) killed by {@code --inject rank=V,at-call=N} at a step of the construction.
 * Group A holds the even world ranks (leader 0), group B the odd ones (leader 1); the leaders
 * talk over COMM_WORLD. Call 1 is the split, call 2 {@code createIntercomm}; inside it the
 * leaders' exchanges are calls of their own (3 and 4: the lengths and the lists of the groups;
 * 5 and 6: whether the candidate context id is free in the group). After the failure every
 * survivor recovers and both groups make the intercommunicator again; with a second argument
 * {@code ulfm} (recovery mode IGNORE) the survivors shrink COMM_WORLD instead and make it over the
 * shrunk communicator. Output lines start with {@code rank R} (R: the original world rank).
 */
public final class AtomicCreateInterProbe {
    private AtomicCreateInterProbe() {}

    private static int me;

    public static void main(String[] args) throws Exception {
        Intracomm w = ProbeLines.init(args);
        me = w.getRank();
        int victim = Integer.parseInt(args[0]);
        try {
            say("createIntercomm returned remote size " + make(w).getRemoteSize());
        } catch (MPIException e) {
            say("createIntercomm raised class " + e.getErrorClass());
        }
        if (args.length > 1 && args[1].equals("ulfm")) {
            w = w.shrink(); // no recovery under IGNORE: the survivors go on over a shrunk COMM_WORLD
        } else {
            ProbeLines.recoverFrom(w, victim);
        }
        Intercomm ic = make(w);
        int[] sum = {-1};
        ic.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM); // each group gets the other's sum
        say("after recovery remote size " + ic.getRemoteSize() + " sum " + sum[0]);
        MPI.Finalize();
        say("finalized");
    }

    /** Splits {@code w} into its even and odd ranks and joins the two halves, leaders 0 and 1. */
    private static Intercomm make(Intracomm w) throws MPIException {
        int colour = w.getRank() % 2;
        Intracomm half = w.split(colour, w.getRank());
        return w.createIntercomm(half, 0, 1 - colour, 9);
    }

    private static void say(String s) {
        ProbeLines.say(me, s);
    }
}
