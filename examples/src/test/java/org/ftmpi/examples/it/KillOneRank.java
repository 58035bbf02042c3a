package org.ftmpi.examples.it;

import org.ftmpi.testutil.Await;
import mpi.MPI;
import mpi.MPIException;

/**
 * Rank 2 kills itself with SIGKILL while every other rank waits in a receive from it; prints
 * each rank's pid first so the test can check that no process survives.
 */
public final class KillOneRank {
    private KillOneRank() {}

    public static void main(String[] args) throws Exception {
        MPI.Init(args);
        int rank = MPI.COMM_WORLD.getRank();
        System.out.println("pid " + ProcessHandle.current().pid() + " rank " + rank);
        System.out.flush();
        MPI.COMM_WORLD.barrier();
        if (rank == 2) Await.killSelf();
        try {
            MPI.COMM_WORLD.recv(new int[1], 1, MPI.INT, 2, 0);
        } catch (MPIException e) {
            System.out.println("rank " + rank + " got " + e.getMessage());
        }
        Await.endedFromOutside(); // the launcher aborts the job
        MPI.Finalize();
    }
}
