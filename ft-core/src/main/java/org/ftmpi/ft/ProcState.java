package org.ftmpi.ft;

/**
 * FT-MPI's process states (seed 004, section 3), as reported by {@code mpi.MPI.getProcState(rank)}
 * for a rank of the job's initial MPI_COMM_WORLD. See docs/fault-tolerance.md, "States".
 */
public enum ProcState {
    /** Running and a member of the job. */
    OK,
    /** Known failed here, but no recovery has covered it yet ("we have no vote to remove it yet"). */
    UNAVAILABLE,
    /** Failed, and its replacement (comm-mode REBUILD) has registered but not joined yet. */
    JOINING,
    /** Failed, and a recovery agreed so: removed (SHRINK) or a blank (BLANK). */
    FAILED
}
