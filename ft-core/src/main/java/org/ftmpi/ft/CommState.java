package org.ftmpi.ft;

/**
 * FT-MPI's communicator states (seed 004, section 3; FT_OK ... FT_FAILED), as reported by
 * {@code mpi.MPI.getCommState(comm)}. See docs/fault-tolerance.md, "States".
 */
public enum CommState {
    /** No failure is known that a recovery has not covered. */
    OK,
    /** A process failure is known and no recovery has covered it yet: communication fails. */
    DETECTED,
    /** The recovery is running (the survivors agree on the failed set and rebuild COMM_WORLD). */
    RECOVER,
    /** The recovery has rebuilt COMM_WORLD; the recovery listeners are running. */
    RECOVERED,
    /** The communicator is gone: invalidated by a recovery, or freed. */
    FAILED
}
