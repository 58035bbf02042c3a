package mpi;

/**
 * Error handler: {@link MPI#ERRORS_ARE_FATAL} (print a message and abort the job, the default
 * on every communicator) or {@link MPI#ERRORS_RETURN} (throw {@link MPIException}).
 */
public final class Errhandler implements Freeable {
    private final boolean fatal;
    private final String name;

    Errhandler(boolean fatal, String name) {
        this.fatal = fatal;
        this.name = name;
    }

    boolean isFatal() { return fatal; }

    /** Predefined handlers cannot be freed; freeing them is a no-op as in Open MPI. */
    @Override public void free() {}

    @Override public String toString() { return name; }
}
