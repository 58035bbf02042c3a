package org.ftmpi.examples.it;

import mpi.MPI;
import mpi.MPIException;

/** Rank 1 sends to a rank that does not exist; under ERRORS_ARE_FATAL the job aborts. */
public final class BadRank {
    private BadRank() {}

    public static void main(String[] args) throws MPIException, InterruptedException {
        MPI.Init(args);
        if (MPI.COMM_WORLD.getRank() == 1) {
            MPI.COMM_WORLD.send(new int[1], 1, MPI.INT, 99, 0);
        } else {
            MPI.COMM_WORLD.recv(new int[1], 1, MPI.INT, 1, 0);
        }
        MPI.Finalize();
    }
}
