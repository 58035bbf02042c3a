package mpi;

/**
 * A process that the operation depends on has failed. Its error class is {@code MPI.ERR_OTHER}
 * as the FT-MPI specification requires, or ULFM's {@code MPI.ERR_PROC_FAILED} when the job runs
 * with the job option {@code ulfm-error-classes=true} ({@code ftmpirun --opt ulfm-error-classes=true});
 * an interrupted {@code ANY_SOURCE} receive that stays pending ({@link #isPending()}) has class
 * {@code MPI.ERR_PROC_FAILED_PENDING} under that option, {@code MPI.ERR_OTHER} otherwise.
 */
public class ProcFailedException extends MPIException {
    private static final long serialVersionUID = 1L;
    private final int failedRank;
    private final boolean pending;
    private final boolean hasFlag;
    private final int agreedFlag;

    ProcFailedException(int clazz, String message, int failedRank) {
        this(clazz, message, failedRank, false);
    }

    ProcFailedException(int clazz, String message, int failedRank, boolean pending) {
        super(clazz, clazz, message);
        this.failedRank = failedRank;
        this.pending = pending;
        this.hasFlag = false;
        this.agreedFlag = 0;
    }

    /** The error of {@code agree}: the agreement completed with {@code agreedFlag}, but a failure was unacknowledged. */
    ProcFailedException(int clazz, String message, int failedRank, boolean pending, int agreedFlag) {
        super(clazz, clazz, message);
        this.failedRank = failedRank;
        this.pending = pending;
        this.hasFlag = true;
        this.agreedFlag = agreedFlag;
    }

    /**
     * Whether this error comes from {@link Comm#agree} (or the wait of {@link Comm#iAgree}),
     * which still completed: the agreed value is {@link #getAgreedFlag()} (ULFM sets the output
     * flag also when it raises {@code MPI_ERR_PROC_FAILED}).
     */
    public boolean hasAgreedFlag() { return hasFlag; }

    /** The value agreed by {@link Comm#agree} when it raised (see {@link #hasAgreedFlag()}); 0 otherwise. */
    public int getAgreedFlag() { return agreedFlag; }

    /**
     * Whether the operation is still pending (ULFM's {@code MPI_ERR_PROC_FAILED_PENDING}): a
     * non-blocking receive from {@code MPI.ANY_SOURCE} was interrupted because a member of its
     * communicator failed and the failure is not acknowledged yet; the request stays active and
     * may still match after {@link Comm#ackFailed()}.
     */
    public boolean isPending() { return pending; }

    /** Rank in MPI.COMM_WORLD of the failed process, or -1 when unknown. */
    public int getFailedRank() { return failedRank; }
}
