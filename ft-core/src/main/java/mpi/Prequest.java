package mpi;

/**
 * A persistent request: created inactive by {@code sendInit}/{@code recvInit}, started with
 * {@link #start()} any number of times, completed by the usual waits and tests.
 */
public final class Prequest extends Request {
    /** Starts one instance of the operation. */
    interface Starter {
        org.ftmpi.p2p.Request start() throws MPIException;
    }

    private final Starter starter;

    Prequest(Comm comm, Buffers.Region region, Starter starter) {
        super(null, comm, region);
        this.starter = starter;
    }

    /** MPI_START: activates the request. */
    public void start() throws MPIException {
        if (op != null && !op.isComplete()) {
            throw comm.raise(MPI.ERR_REQUEST, "start: the persistent request is already active");
        }
        op = starter.start();
        posted(op);
    }

    /** MPI_STARTALL. */
    public static void startAll(Prequest[] requests) throws MPIException {
        for (Prequest p : requests) p.start();
    }
}
