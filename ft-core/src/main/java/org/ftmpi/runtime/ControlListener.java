package org.ftmpi.runtime;

/**
 * Notices from the job controller to a rank. Called on the runtime's own thread; implementations
 * must not block.
 */
public interface ControlListener {

    /**
     * A process of the job died (exit, signal, or declared failed).
     *
     * @param rank   its rank in MPI_COMM_WORLD
     * @param procId its process id
     * @param how    human-readable cause, for example "killed by signal 9 (SIGKILL)" or
     *               "exited with status 3"
     */
    void processFailed(int rank, long procId, String how);

    /**
     * The job is being aborted (another rank called MPI.Abort, a rank died under ABORT mode,
     * the user pressed Ctrl-C). The rank should stop communicating; the controller will end the
     * process shortly.
     */
    void abort(int exitCode, String reason);

    /**
     * Comm-mode rebuild: the replacement of the failed process of {@code rank} has joined the job
     * as process {@code procId} and published these endpoints.
     */
    default void processReplaced(int rank, long procId, String host, java.util.Map<String, byte[]> endpoints) {}

    /**
     * Comm-mode rebuild with warm spares: the warm spare {@code procId} is ready and listens at
     * these endpoints (its connections can be made ahead of a failure).
     */
    default void spareReady(long procId, java.util.Map<String, byte[]> endpoints) {}

    /** The warm spare {@code procId} died or ended: connections made to it ahead are closed. */
    default void spareGone(long procId) {}
}
