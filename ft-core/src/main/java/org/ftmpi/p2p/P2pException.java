package org.ftmpi.p2p;

/** An error raised by the engine; the facade turns it into an {@code mpi.MPIException}. */
public class P2pException extends Exception {
    private final int errorClass;
    /** World rank of the failed process, or -1 when the error is not a process failure. */
    private final int failedRank;

    public P2pException(int errorClass, String message) {
        this(errorClass, message, -1);
    }

    public P2pException(int errorClass, String message, int failedRank) {
        super(message);
        this.errorClass = errorClass;
        this.failedRank = failedRank;
    }

    public int errorClass() { return errorClass; }
    public int failedRank() { return failedRank; }
}
