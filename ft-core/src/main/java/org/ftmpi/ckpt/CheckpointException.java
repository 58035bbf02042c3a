package org.ftmpi.ckpt;

import mpi.MPI;
import mpi.MPIException;

/**
 * An error of a {@link DisklessCheckpoint}: a bad argument ({@link MPI#ERR_ARG}), or a version
 * that cannot be rebuilt because more of it was lost than its redundancy covers
 * ({@link MPI#ERR_OTHER}; every process of the restore gets it). Thrown directly, whatever the
 * communicator's error handler: the checkpoint is a library on top of MPI, not an MPI call.
 */
public final class CheckpointException extends MPIException {
    private static final long serialVersionUID = 1L;

    CheckpointException(int errorClass, String message) {
        super(errorClass, errorClass, message);
    }

    static CheckpointException badArgument(String message) {
        return new CheckpointException(MPI.ERR_ARG, message);
    }
}
