package org.ftmpi.runtime.testprog;

import mpi.Intracomm;
import mpi.MPI;

/**
 * MPI program for FT-MPI message mode CONT when the program does not re-create a communicator
 * ({@code FtModesSystemTest}): np 3, comm-mode SHRINK, recovery MANUAL, {@code --msg-mode cont}.
 * On a duplicate of COMM_WORLD, rank 0 sends rank 1 two messages that rank 1 never receives, and
 * rank 1 posts a receive that nobody matches; then rank 2 dies, the survivors recover and do not
 * re-create the duplicate. At MPI_Finalize rank 1 reports the two messages and the receive on
 * stderr. Output lines start with {@code rank R}.
 */
public final class ContStaleProbe {
    private ContStaleProbe() {}

    public static void main(String[] args) throws Exception {
        Intracomm w = ProbeLines.init(args);
        int me = w.getRank();
        Intracomm d = w.dup();
        if (me == 0) {
            d.send(new int[] {11}, 1, MPI.INT, 1, 5);
            d.send(new int[] {12}, 1, MPI.INT, 1, 5);
        }
        if (me == 1) {
            d.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, 0, 6);
            int[] n = new int[1];
            // both messages are here before the failure (the sends came first on that link)
            w.recv(n, 1, MPI.INT, 0, 7);
        }
        if (me == 0) w.send(new int[] {1}, 1, MPI.INT, 1, 7);
        ProbeLines.killAndRecover(w, 2);
        w.barrier();
        ProbeLines.say(me, "recovered size " + w.getSize());
        MPI.Finalize();
        ProbeLines.say(me, "finalized");
    }
}
