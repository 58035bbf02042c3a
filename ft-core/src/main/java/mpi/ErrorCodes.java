package mpi;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.ftmpi.p2p.ErrorClass;

/**
 * Error classes, codes and strings (MPI-3.1 section 8.5): the predefined classes (each its own
 * code, {@code 0..MPI.ERR_LASTCODE}) and the ones added with {@link MPI#addErrorClass} and
 * {@link MPI#addErrorCode}, numbered upwards from {@code MPI.ERR_LASTCODE + 1}.
 *
 * <p><b>Note:</b> thread-safe; one registry per JVM (adding is a local operation in MPI, so
 * ranks that are threads of one JVM simply get distinct numbers).
 */
final class ErrorCodes {
    private ErrorCodes() {}

    /** Longest error string (Open MPI's MPI_MAX_ERROR_STRING). */
    static final int MAX_ERROR_STRING = 256;

    private static int lastUsed = MPI.ERR_LASTCODE;
    /** Class of each user-added code or class (a class is its own class). */
    private static final Map<Integer, Integer> CLASS_OF = new ConcurrentHashMap<>();
    private static final Map<Integer, String> STRINGS = new ConcurrentHashMap<>();

    static synchronized int lastUsed() {
        return lastUsed;
    }

    static synchronized int addClass() {
        int c = ++lastUsed;
        CLASS_OF.put(c, c);
        return c;
    }

    static synchronized int addCode(int errorClass) throws MPIException {
        if (!isClass(errorClass)) {
            throw MPIException.of(MPI.ERR_ARG, "addErrorCode: errorClass " + errorClass
                    + " is not a predefined error class nor one added with MPI.addErrorClass");
        }
        int c = ++lastUsed;
        CLASS_OF.put(c, errorClass);
        return c;
    }

    static void addString(int errorCode, String s) throws MPIException {
        if (errorCode >= 0 && errorCode <= MPI.ERR_LASTCODE) {
            throw MPIException.of(MPI.ERR_ARG, "addErrorString: errorCode " + errorCode
                    + " is predefined; only codes and classes added with addErrorClass/addErrorCode take strings");
        }
        if (!CLASS_OF.containsKey(errorCode)) {
            throw MPIException.of(MPI.ERR_ARG, "addErrorString: errorCode " + errorCode + " was not added with"
                    + " MPI.addErrorClass or MPI.addErrorCode");
        }
        if (s == null) throw MPIException.of(MPI.ERR_ARG, "addErrorString: errorString is null");
        if (s.length() > MAX_ERROR_STRING - 1) {
            throw MPIException.of(MPI.ERR_ARG, "addErrorString: errorString has " + s.length()
                    + " characters; at most " + (MAX_ERROR_STRING - 1) + " are allowed");
        }
        STRINGS.put(errorCode, s);
    }

    private static boolean isClass(int c) {
        return (c >= 0 && c <= MPI.ERR_LASTCODE) || (CLASS_OF.containsKey(c) && CLASS_OF.get(c) == c);
    }

    static int classOf(int errorCode) throws MPIException {
        if (errorCode >= 0 && errorCode <= MPI.ERR_LASTCODE) return errorCode;
        Integer c = CLASS_OF.get(errorCode);
        if (c == null) throw MPIException.of(MPI.ERR_ARG, "getErrorClass: errorCode " + errorCode + " is not an error code");
        return c;
    }

    static String string(int errorCode) throws MPIException {
        if (errorCode >= 0 && errorCode <= MPI.ERR_LASTCODE) return describe(errorCode);
        if (!CLASS_OF.containsKey(errorCode)) {
            throw MPIException.of(MPI.ERR_ARG, "getErrorString: errorCode " + errorCode + " is not an error code");
        }
        return STRINGS.getOrDefault(errorCode, "");
    }

    private static String describe(int c) {
        String what = switch (c) {
            case ErrorClass.SUCCESS -> "no error";
            case ErrorClass.ERR_BUFFER -> "invalid buffer pointer";
            case ErrorClass.ERR_COUNT -> "invalid count argument";
            case ErrorClass.ERR_TYPE -> "invalid datatype";
            case ErrorClass.ERR_TAG -> "invalid tag";
            case ErrorClass.ERR_COMM -> "invalid communicator";
            case ErrorClass.ERR_RANK -> "invalid rank";
            case ErrorClass.ERR_REQUEST -> "invalid request";
            case ErrorClass.ERR_ROOT -> "invalid root";
            case ErrorClass.ERR_GROUP -> "invalid group";
            case ErrorClass.ERR_OP -> "invalid reduce operation";
            case ErrorClass.ERR_TOPOLOGY -> "invalid communicator topology";
            case ErrorClass.ERR_DIMS -> "invalid topology dimension";
            case ErrorClass.ERR_ARG -> "invalid argument of some other kind";
            case ErrorClass.ERR_UNKNOWN -> "unknown error";
            case ErrorClass.ERR_TRUNCATE -> "message truncated";
            case ErrorClass.ERR_OTHER -> "known error not in this list";
            case ErrorClass.ERR_INTERN -> "internal error";
            case ErrorClass.ERR_IN_STATUS -> "error code is in status";
            case ErrorClass.ERR_PENDING -> "pending request";
            case ErrorClass.ERR_INFO_KEY -> "invalid info key";
            case ErrorClass.ERR_INFO_NOKEY -> "info key not defined";
            case ErrorClass.ERR_INFO_VALUE -> "invalid info value";
            case ErrorClass.ERR_INFO -> "invalid info object";
            case ErrorClass.ERR_KEYVAL -> "invalid keyval";
            case ErrorClass.ERR_PROC_FAILED -> "a process has failed";
            case ErrorClass.ERR_PROC_FAILED_PENDING -> "a process has failed; the request is still pending";
            case ErrorClass.ERR_REVOKED -> "the communicator has been revoked";
            default -> null;
        };
        return what == null ? ErrorClass.name(c) : ErrorClass.name(c) + ": " + what;
    }
}
