package org.ftmpi.transport.self;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import org.ftmpi.runtime.JobInfo;
import org.ftmpi.transport.FrameHeader;
import org.ftmpi.transport.FrameSink;
import org.ftmpi.transport.Transport;
import org.ftmpi.transport.TransportLimits;

/**
 * Frames a rank sends to itself. Frames are copied once on send and handed to the sink on the
 * next {@link #progress()}, so a send to self never re-enters the matching code.
 *
 * <p><b>Note:</b> not thread-safe; used under the engine's progress lock.
 */
final class SelfTransport implements Transport {
    /** Everything eager: there is no wire, and rendezvous would only add a round trip. */
    private static final TransportLimits LIMITS =
            new TransportLimits(Integer.MAX_VALUE - FrameHeader.BYTES, Integer.MAX_VALUE - FrameHeader.BYTES,
                    50, 10_000_000_000L, 1000);

    private final int myRank;
    private final FrameSink sink;
    private final ArrayDeque<byte[]> queue = new ArrayDeque<>();

    SelfTransport(int myRank, FrameSink sink) {
        this.myRank = myRank;
        this.sink = sink;
    }

    @Override public String name() { return "self"; }
    @Override public TransportLimits limits() { return LIMITS; }
    @Override public byte[] localEndpoint() { return new byte[0]; }
    @Override public void connect(JobInfo job) {}
    @Override public boolean reaches(int worldRank) { return worldRank == myRank; }
    @Override public long backlogBytes(int worldRank) { return 0; }

    @Override
    public void send(int worldRank, MemorySegment header, MemorySegment payload, long offset, int length) {
        byte[] frame = new byte[FrameHeader.BYTES + length];
        MemorySegment f = MemorySegment.ofArray(frame);
        MemorySegment.copy(header, 0, f, 0, FrameHeader.BYTES);
        if (length > 0) {
            MemorySegment.copy(payload, offset, f, FrameHeader.BYTES, length);
        }
        queue.add(frame);
    }

    @Override
    public int progress() {
        int n = 0;
        byte[] frame;
        while ((frame = queue.poll()) != null) {
            MemorySegment f = MemorySegment.ofArray(frame);
            sink.onFrame(myRank, f.asSlice(0, FrameHeader.BYTES), f.asSlice(FrameHeader.BYTES));
            n++;
        }
        return n;
    }

    @Override public void close() { queue.clear(); }

}
