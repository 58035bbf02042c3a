package org.ftmpi.transport;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Layout of the header that starts every p2p frame, on every transport. Little-endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+-------------------------------+
 *  |   version     |     type      |             flags             |  0
 *  +---------------+---------------+-------------------------------+
 *  |                       context id                              |  4
 *  +---------------------------------------------------------------+
 *  |                source (rank in the communicator)              |  8
 *  +---------------------------------------------------------------+
 *  |                            tag                                | 12
 *  +---------------------------------------------------------------+
 *  |                  communicator epoch (generation)              | 16
 *  +---------------------------------------------------------------+
 *  |                payload length of this frame                   | 20
 *  +---------------------------------------------------------------+
 *  |                 sequence number (per sender) (64)             | 24
 *  +---------------------------------------------------------------+
 *  |                 sender request id (64)                        | 32
 *  +---------------------------------------------------------------+
 *  |                 receiver request id (64)                      | 40
 *  +---------------------------------------------------------------+
 *  |        message length (RTS) / fragment offset (DATA) (64)     | 48
 *  +---------------------------------------------------------------+
 *  |  payload ...                                                  | 56
 * </pre>
 *
 * Frame types: {@link #EAGER} (envelope + whole payload), {@link #EAGER_SYNC} (same, the
 * receiver answers {@link #SYNC_ACK} when it matches), {@link #RTS} (envelope and length, no
 * payload), {@link #CTS} (receiver ready: carries both request ids), {@link #DATA} (one fragment
 * of a rendezvous message, at an offset), {@link #FT} (fault-tolerance control: revoke and
 * agreement messages of a communicator; never matched against receives).
 */
public final class FrameHeader {
    public static final int BYTES = 56;

    public static final byte EAGER = 1;
    public static final byte EAGER_SYNC = 2;
    public static final byte RTS = 3;
    public static final byte CTS = 4;
    public static final byte DATA = 5;
    public static final byte SYNC_ACK = 6;
    public static final byte FT = 7;

    /** Flag: the payload is already in the receiver's buffer (see {@link FrameSink#placement}). */
    public static final short FLAG_PLACED = 1;

    public static final int VERSION_OFFSET = 0;
    public static final int TYPE_OFFSET = 1;
    public static final int FLAGS_OFFSET = 2;
    public static final int CONTEXT_OFFSET = 4;
    public static final int SOURCE_OFFSET = 8;
    public static final int TAG_OFFSET = 12;
    public static final int EPOCH_OFFSET = 16;
    public static final int PAYLOAD_LENGTH_OFFSET = 20;
    public static final int SEQUENCE_OFFSET = 24;
    public static final int SEND_REQUEST_OFFSET = 32;
    public static final int RECV_REQUEST_OFFSET = 40;
    public static final int LENGTH_OFFSET = 48;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /**
     * The wire's int (little-endian, unaligned), for the ints of control payloads: the layout
     * every header access already uses, so writing one links nothing new (a heap buffer's
     * {@code asIntBuffer} view loaded a JDK class from the module image on a recovery's path).
     */
    public static final ValueLayout.OfInt WIRE_INT = INT;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private FrameHeader() {}

    public static byte version(MemorySegment h) { return h.get(ValueLayout.JAVA_BYTE, VERSION_OFFSET); }
    public static byte type(MemorySegment h) { return h.get(ValueLayout.JAVA_BYTE, TYPE_OFFSET); }
    public static short flags(MemorySegment h) { return h.get(ValueLayout.JAVA_SHORT_UNALIGNED, FLAGS_OFFSET); }
    public static void flags(MemorySegment h, short flags) { h.set(ValueLayout.JAVA_SHORT_UNALIGNED, FLAGS_OFFSET, flags); }
    public static int context(MemorySegment h) { return h.get(INT, CONTEXT_OFFSET); }
    public static int source(MemorySegment h) { return h.get(INT, SOURCE_OFFSET); }
    public static int tag(MemorySegment h) { return h.get(INT, TAG_OFFSET); }
    public static int epoch(MemorySegment h) { return h.get(INT, EPOCH_OFFSET); }
    public static int payloadLength(MemorySegment h) { return h.get(INT, PAYLOAD_LENGTH_OFFSET); }
    public static void payloadLength(MemorySegment h, int length) { h.set(INT, PAYLOAD_LENGTH_OFFSET, length); }
    public static long sequence(MemorySegment h) { return h.get(LONG, SEQUENCE_OFFSET); }
    public static long sendRequest(MemorySegment h) { return h.get(LONG, SEND_REQUEST_OFFSET); }
    public static long recvRequest(MemorySegment h) { return h.get(LONG, RECV_REQUEST_OFFSET); }
    public static long length(MemorySegment h) { return h.get(LONG, LENGTH_OFFSET); }
    public static void length(MemorySegment h, long length) { h.set(LONG, LENGTH_OFFSET, length); }

    /** Writes a complete header. */
    public static void write(MemorySegment h, byte type, int context, int source, int tag, int epoch,
                             int payloadLength, long sequence, long sendRequest, long recvRequest,
                             long length) {
        h.set(ValueLayout.JAVA_BYTE, VERSION_OFFSET, (byte) org.ftmpi.Version.WIRE);
        h.set(ValueLayout.JAVA_BYTE, TYPE_OFFSET, type);
        h.set(ValueLayout.JAVA_SHORT_UNALIGNED, FLAGS_OFFSET, (short) 0);
        h.set(INT, CONTEXT_OFFSET, context);
        h.set(INT, SOURCE_OFFSET, source);
        h.set(INT, TAG_OFFSET, tag);
        h.set(INT, EPOCH_OFFSET, epoch);
        h.set(INT, PAYLOAD_LENGTH_OFFSET, payloadLength);
        h.set(LONG, SEQUENCE_OFFSET, sequence);
        h.set(LONG, SEND_REQUEST_OFFSET, sendRequest);
        h.set(LONG, RECV_REQUEST_OFFSET, recvRequest);
        h.set(LONG, LENGTH_OFFSET, length);
    }
}
