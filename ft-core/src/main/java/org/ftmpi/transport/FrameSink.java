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

    /**
     * {@link #onFrame(int, MemorySegment, MemorySegment)} with the payload given as
     * {@code length} bytes of {@code memory} from {@code offset}: a transport that reads frames
     * in place from one large segment (shared memory) need not make a slice per frame, which
     * the JIT cannot always keep off the heap (at 1 KiB it cost 40 bytes per message). By
     * default the slice is made.
     */
    default void onFrame(int peer, MemorySegment header, MemorySegment memory, long offset, int length) {
        onFrame(peer, header, memory.asSlice(offset, length));
    }

    /**
     * Where the payload of the DATA frame {@code header} belongs, so that a transport can place
     * it there directly; {@code null} when the sink does not know (then the transport hands the
     * payload to {@link #onFrame} as usual). A transport that did place the payload passes that
     * same segment to {@link #onFrame} with {@link FrameHeader#FLAG_PLACED} set in the header.
     */
    default MemorySegment placement(int peer, MemorySegment header) {
        return null;
    }

    /**
     * {@link #placement} for a transport that copies into native memory by address (shared
     * memory's process_vm_readv): the address of the {@link FrameHeader#payloadLength} bytes
     * where the payload of the DATA frame {@code header} belongs, or 0 when the sink does not
     * name native memory of that size for it. A transport that placed the payload there then
     * calls {@link #onPlaced}. By default derived from {@link #placement}; a sink overrides it
     * to name the address without making a segment per fragment.
     */
    default long placementAddress(int peer, MemorySegment header) {
        MemorySegment m = placement(peer, header);
        return m != null && m.isNative() && m.byteSize() == FrameHeader.payloadLength(header) ? m.address() : 0;
    }

    /**
     * A DATA frame whose {@code length} payload bytes a transport copied to {@code address},
     * which {@link #placementAddress} named for it; {@link FrameHeader#FLAG_PLACED} is set in
     * {@code header}. By default {@link #onFrame} with a segment over those bytes.
     */
    default void onPlaced(int peer, MemorySegment header, long address, int length) {
        onFrame(peer, header, MemorySegment.ofAddress(address).reinterpret(length));
    }

    /**
     * Whether a frame handed to {@link #onFrame} during the current {@link Transport#progress()}
     * completed a request that a thread may be waiting for; a transport reading a batch of
     * frames should then return instead of looking for more (latency before throughput: the
     * waiting thread runs the next progress step at once). By default never.
     */
    default boolean returnEarly() {
        return false;
    }

    /** The connection to {@code peer} failed; the peer must be treated as unreachable. */
    void onPeerLost(int peer, String cause);

    /**
     * While {@link Transport#connect} runs: whether the process of {@code peer} is known to have
     * failed already, so that a replacement (FT-MPI REBUILD) does not wait for its connection.
     * By default never.
     */
    default boolean peerGone(int peer) {
        return false;
    }

    /**
     * Whether process {@code procId} is known to have failed, as soon as the notice arrived
     * (without any lock the caller may hold): a survivor connecting to a replacement (FT-MPI
     * REBUILD) stops waiting for one that was declared failed meanwhile. By default never.
     */
    default boolean processGone(long procId) {
        return false;
    }
}
