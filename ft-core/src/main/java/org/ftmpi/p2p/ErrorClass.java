package org.ftmpi.p2p;

/**
 * MPI error classes, with Open MPI's numeric values (the {@code mpi} facade exposes the same
 * numbers as {@code MPI.ERR_*}).
 */
public final class ErrorClass {
    public static final int SUCCESS = 0;
    public static final int ERR_BUFFER = 1;
    public static final int ERR_COUNT = 2;
    public static final int ERR_TYPE = 3;
    public static final int ERR_TAG = 4;
    public static final int ERR_COMM = 5;
    public static final int ERR_RANK = 6;
    public static final int ERR_REQUEST = 7;
    public static final int ERR_ROOT = 8;
    public static final int ERR_GROUP = 9;
    public static final int ERR_OP = 10;
    public static final int ERR_TOPOLOGY = 11;
    public static final int ERR_DIMS = 12;
    public static final int ERR_ARG = 13;
    public static final int ERR_UNKNOWN = 14;
    public static final int ERR_TRUNCATE = 15;
    public static final int ERR_OTHER = 16;
    public static final int ERR_INTERN = 17;
    public static final int ERR_IN_STATUS = 18;
    public static final int ERR_PENDING = 19;
    public static final int ERR_INFO_KEY = 31;
    public static final int ERR_INFO_NOKEY = 32;
    public static final int ERR_INFO_VALUE = 33;
    public static final int ERR_INFO = 34;
    public static final int ERR_KEYVAL = 36;
    public static final int ERR_PROC_FAILED = 75;
    public static final int ERR_PROC_FAILED_PENDING = 76;
    public static final int ERR_REVOKED = 77;

    private ErrorClass() {}

    public static String name(int c) {
        return switch (c) {
            case SUCCESS -> "MPI_SUCCESS";
            case ERR_BUFFER -> "MPI_ERR_BUFFER";
            case ERR_COUNT -> "MPI_ERR_COUNT";
            case ERR_TYPE -> "MPI_ERR_TYPE";
            case ERR_TAG -> "MPI_ERR_TAG";
            case ERR_COMM -> "MPI_ERR_COMM";
            case ERR_RANK -> "MPI_ERR_RANK";
            case ERR_REQUEST -> "MPI_ERR_REQUEST";
            case ERR_ROOT -> "MPI_ERR_ROOT";
            case ERR_GROUP -> "MPI_ERR_GROUP";
            case ERR_OP -> "MPI_ERR_OP";
            case ERR_TOPOLOGY -> "MPI_ERR_TOPOLOGY";
            case ERR_DIMS -> "MPI_ERR_DIMS";
            case ERR_ARG -> "MPI_ERR_ARG";
            case ERR_UNKNOWN -> "MPI_ERR_UNKNOWN";
            case ERR_TRUNCATE -> "MPI_ERR_TRUNCATE";
            case ERR_OTHER -> "MPI_ERR_OTHER";
            case ERR_INTERN -> "MPI_ERR_INTERN";
            case ERR_IN_STATUS -> "MPI_ERR_IN_STATUS";
            case ERR_PENDING -> "MPI_ERR_PENDING";
            case ERR_INFO_KEY -> "MPI_ERR_INFO_KEY";
            case ERR_INFO_NOKEY -> "MPI_ERR_INFO_NOKEY";
            case ERR_INFO_VALUE -> "MPI_ERR_INFO_VALUE";
            case ERR_INFO -> "MPI_ERR_INFO";
            case ERR_KEYVAL -> "MPI_ERR_KEYVAL";
            case ERR_PROC_FAILED -> "MPI_ERR_PROC_FAILED";
            case ERR_PROC_FAILED_PENDING -> "MPI_ERR_PROC_FAILED_PENDING";
            case ERR_REVOKED -> "MPI_ERR_REVOKED";
            default -> "MPI error class " + c;
        };
    }
}
