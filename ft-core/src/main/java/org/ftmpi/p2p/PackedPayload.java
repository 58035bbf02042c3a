package org.ftmpi.p2p;

import java.lang.foreign.MemorySegment;

/**
 * The data of a message that is not one contiguous region of memory (a non-contiguous derived
 * datatype): the engine asks for it a segment at a time as it sends fragments, and hands
 * arriving fragments over as they come, so no copy of the whole message is ever made.
 * Segments are requested and delivered strictly in message order (fragments of one message
 * travel on one ordered connection). Called with the engine's progress lock held.
 */
public interface PackedPayload {
    /** Writes the next {@code bytes} bytes of the message into {@code dst} at {@code offset}. */
    void pack(MemorySegment dst, long offset, long bytes);

    /** Takes the next {@code bytes} bytes of the message from {@code src} at {@code offset}. */
    void unpack(MemorySegment src, long offset, long bytes);
}
