package mpi;

/**
 * Signals that an MPI error of some sort has occurred. As in Open MPI's Java bindings, except
 * that it is not final: {@link ProcFailedException} and {@link RevokedException}-style
 * subclasses carry fault-tolerance errors.
 */
public class MPIException extends Exception {
    private static final long serialVersionUID = 1L;
    private final int errorCode;
    private final int errorClass;

    protected MPIException(int code, int clazz, String message) {
        super(message);
        this.errorCode = code;
        this.errorClass = clazz;
    }

    public MPIException(String message) {
        this(MPI.ERR_OTHER, MPI.ERR_OTHER, message);
    }

    public MPIException(Throwable cause) {
        super(cause);
        this.errorCode = MPI.ERR_OTHER;
        this.errorClass = MPI.ERR_OTHER;
    }

    /** Creates an exception with an error class (the code equals the class). */
    static MPIException of(int clazz, String message) {
        return new MPIException(clazz, clazz, message);
    }

    /** Gets the MPI error code. */
    public int getErrorCode() { return errorCode; }

    /** Gets the MPI error class. */
    public int getErrorClass() { return errorClass; }
}
