package mpi;

/**
 * A process that the operation depends on has failed. Its error class is {@code MPI.ERR_OTHER}
 * as the FT-MPI specification requires, or ULFM's {@code MPI.ERR_PROC_FAILED} when the job runs
 * with {@code ftmpirun --ulfm-error-classes}.
 */
public class ProcFailedException extends MPIException {
    private static final long serialVersionUID = 1L;
    private final int failedRank;

    ProcFailedException(int clazz, String message, int failedRank) {
        super(clazz, clazz, message);
        this.failedRank = failedRank;
    }

    /** Rank in MPI.COMM_WORLD of the failed process, or -1 when unknown. */
    public int getFailedRank() { return failedRank; }
}
