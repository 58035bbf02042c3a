package org.ftmpi.ft;

/**
 * A callback run at the end of every FT-MPI recovery, registered with
 * {@code mpi.MPI.addRecoveryListener}. The listeners of a process run in registration order,
 * on the thread that ran the recovery, after MPI.COMM_WORLD has been rebuilt (the
 * specification's attribute delete functions of MPI_COMM_WORLD, in Java form; seed 001,
 * Appendix A, 6.3). They may communicate on the new MPI.COMM_WORLD.
 */
@FunctionalInterface
public interface RecoveryListener {
    /**
     * @param failedRanks ranks, in MPI.COMM_WORLD as it was before this recovery, of the processes
     *                    whose failure this recovery covered, in increasing order
     */
    void recovered(int[] failedRanks) throws Exception;
}
