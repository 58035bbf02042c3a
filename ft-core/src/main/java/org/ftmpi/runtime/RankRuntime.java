package org.ftmpi.runtime;

import java.io.IOException;
import java.util.Map;

/**
 * A rank's link to its job runtime (the ftmpirun job controller, or a stand-alone singleton, or
 * threads in one JVM for tests). Owned by the engine; thread-safe.
 *
 * <p>Life cycle: {@link #exchange} once during MPI.Init, then any number of
 * {@link #abort}/notices, then {@link #finalizeBarrier} in MPI.Finalize, then {@link #close}.
 */
public interface RankRuntime extends AutoCloseable {

    /** Rank, size, job id, secret and options known before the endpoint exchange. */
    JobInfo preliminaryInfo();

    /**
     * Publishes this rank's endpoints (transport name to opaque bytes) and waits until every
     * rank of the job has published its own.
     *
     * @return the complete job information, including every rank's endpoints
     */
    JobInfo exchange(Map<String, byte[]> myEndpoints) throws IOException;

    /** Registers the receiver of failure and abort notices (at most one; replaces the old). */
    void setListener(ControlListener listener);

    /**
     * Asks the controller to abort the whole job with this exit code; returns after the request
     * was sent (the process is then ended by the controller, or by the caller).
     */
    void abort(int exitCode, String reason);

    /** Waits until every live rank has called it (MPI.Finalize). */
    void finalizeBarrier() throws IOException;

    /**
     * Whether aborting the job ends this process (true for real rank processes; false for ranks
     * that are threads of one JVM, where an abort only fails their pending operations).
     */
    default boolean ownsProcess() {
        return true;
    }

    /**
     * Work that a thread waiting in an MPI call should do for the runtime between two polls of
     * the transports (it must return at once when nothing is due, and never block), or null.
     * Valid after {@link #exchange}. A real rank process returns its heartbeat detector's round
     * ({@link org.ftmpi.ft.detect.HeartbeatDetector#pollFromWaiter}), so that the detector thread
     * need not wake while the application waits anyway.
     */
    default Runnable waiterDuty() {
        return null;
    }

    @Override
    void close();
}
