package org.ftmpi.ddt;

/**
 * Every error raised by the datatype engine. The {@link Kind} tells the {@code mpi} facade which
 * MPI error class to report ({@code MPI_ERR_TYPE}, {@code MPI_ERR_COUNT}, {@code MPI_ERR_ARG},
 * {@code MPI_ERR_BUFFER}, {@code MPI_ERR_TRUNCATE}, {@code MPI_ERR_OTHER}).
 */
public final class DatatypeException extends RuntimeException {
    /** Error class of a datatype failure. */
    public enum Kind {
        /** Type not committed, type unusable for the operation (e.g. overlapping receive type). */
        TYPE,
        /** Negative or overflowing count. */
        COUNT,
        /** Bad constructor or option argument. */
        ARG,
        /** User or transport buffer too small, read-only, or unsupported. */
        BUFFER,
        /** More packed data than the receive type and count can take. */
        TRUNCATE,
        /** Anything else. */
        OTHER
    }

    private final Kind kind;

    public DatatypeException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }

    static DatatypeException arg(String message) {
        return new DatatypeException(Kind.ARG, message);
    }

    static DatatypeException count(String message) {
        return new DatatypeException(Kind.COUNT, message);
    }

    static DatatypeException buffer(String message) {
        return new DatatypeException(Kind.BUFFER, message);
    }
}
