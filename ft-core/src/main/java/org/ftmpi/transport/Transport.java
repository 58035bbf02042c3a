package org.ftmpi.transport;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import org.ftmpi.runtime.JobInfo;

/**
 * Moves frames (a {@link FrameHeader} plus payload bytes) between ranks; knows nothing of
 * matching or protocols (Open MPI's BTL). All methods except {@link #limits()},
 * {@link #name()} and {@link #localEndpoint()} are called with the engine's progress lock held.
 */
public interface Transport extends AutoCloseable {

    String name();

    TransportLimits limits();

    /** This rank's endpoint, published to every other rank during start-up. */
    byte[] localEndpoint();

    /** Called once every rank's endpoints are known. */
    void connect(JobInfo job) throws IOException;

    /** Whether this transport can carry frames to {@code worldRank}. */
    boolean reaches(int worldRank);

    /**
     * Sends one frame. On return the transport no longer needs {@code header} nor the payload
     * memory (it wrote them out, or copied what it could not write yet).
     *
     * @param header  {@link FrameHeader#BYTES} bytes
     * @param payload payload memory; {@code length} bytes starting at {@code offset}
     */
    void send(int worldRank, MemorySegment header, MemorySegment payload, long offset, int length)
            throws IOException;

    /**
     * Sends one frame if the transport can take it now without copying the payload into a
     * backlog of its own, and returns true; otherwise sends nothing and returns false, and the
     * caller keeps the payload and tries again after a {@link #progress} (frames of a refused
     * kind must then wait for it: the transport keeps its frames to a rank in order). The
     * engine offers the first frame of each message this way, so that a message meeting a full
     * ring is copied once, from the caller's memory, when room comes, instead of twice (into a
     * backlog, then from it). By default the same as {@link #send}, returning true.
     */
    default boolean trySend(int worldRank, MemorySegment header, MemorySegment payload, long offset, int length)
            throws IOException {
        send(worldRank, header, payload, offset, length);
        return true;
    }

    /**
     * Sends one DATA frame whose payload (native memory) the caller keeps alive and unchanged
     * until {@link #released(int)} returns true for {@code worldRank}: the transport may let the
     * receiver copy it straight from there (single copy). The engine calls this only for
     * fragments of at least {@link TransportLimits#singleCopyMinBytes()}. By default the same as
     * {@link #send}.
     */
    default void sendPinned(int worldRank, MemorySegment header, MemorySegment payload, long offset, int length)
            throws IOException {
        send(worldRank, header, payload, offset, length);
    }

    /**
     * Whether every payload given to {@link #sendPinned} for {@code worldRank} has been read, so
     * that the caller may reuse that memory. By default always (nothing is kept pinned).
     */
    default boolean released(int worldRank) {
        return true;
    }

    /** Bytes accepted by {@link #send} but not yet handed to the wire, for {@code worldRank}. */
    long backlogBytes(int worldRank);

    /** Reads what has arrived and hands complete frames to the sink; flushes backlog. */
    int progress();

    /**
     * FT-MPI comm-mode REBUILD: the process of {@code worldRank} was replaced by a new one,
     * process {@code procId}, that published {@code endpoints}; connects to it (the replacement
     * accepts) and returns true, or returns false when this transport cannot reach it (the
     * default; the engine then routes the rank over another transport, TCP). A transport that
     * made a connection to that process ahead of need ({@link #prepareSpare}) binds the rank to
     * it instead of connecting now. Runs under the engine's progress lock.
     */
    default boolean reconnect(int worldRank, long procId, java.util.Map<String, byte[]> endpoints) throws IOException {
        return false;
    }

    /**
     * FT-MPI REBUILD with warm spares: the job has a warm spare, process {@code procId}, that
     * listens at {@code endpoints}. A transport may connect to it now, in the background (never
     * under the progress lock, never polling it), so that a takeover finds the connection made.
     * Called on the control thread; must not block. Returns what completes when the connection is
     * made (diagnostics), or null when this transport makes none (the default).
     */
    default java.util.concurrent.CompletionStage<?> prepareSpare(long procId, java.util.Map<String, byte[]> endpoints) {
        return null;
    }

    /** The warm spare {@code procId} is gone: a connection made to it ahead is closed. By default nothing. */
    default void dropSpare(long procId) {}

    /**
     * How many connections made ahead of need this transport has taken into use: in a rank, the
     * replacements it bound to a connection made by {@link #prepareSpare}; in a warm spare that
     * took over a rank, the connections the ranks had made to it before the takeover.
     */
    default int premadeConnections() {
        return 0;
    }

    @Override
    void close();
}
