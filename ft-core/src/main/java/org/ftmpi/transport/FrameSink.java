package org.ftmpi.transport;

import java.lang.foreign.MemorySegment;

/**
 * Receives the frames a transport reads. Called by the thread that runs
 * {@link Transport#progress()}, which always holds the engine's progress lock.
 */
public interface FrameSink {

    /**
     * One complete frame.
     *
     * @param peer    world rank of the sender
     * @param header  the frame header, {@link FrameHeader#BYTES} bytes, valid only during the call
     * @param payload the payload ({@link FrameHeader#payloadLength} bytes), valid only during the call
     */
    void onFrame(int peer, MemorySegment header, MemorySegment payload);

    /** The connection to {@code peer} failed; the peer must be treated as unreachable. */
    void onPeerLost(int peer, String cause);
}
