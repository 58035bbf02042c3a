package org.ftmpi.transport.shm;

/**
 * Layout of one single-producer/single-consumer ring (one direction of a pair of ranks) and of
 * its records. Positions are byte counts that only grow; a record starts at
 * {@code position & (capacity - 1)} of the data area. All offsets are from the ring's start.
 *
 * <pre>
 *  ring                                                          record (64-byte aligned)
 *  +----------------------------------------------+ 0           +---------------------------+ 0
 *  | producer position (long)  written by sender  |             | record length (int)       |
 *  |   release-store after the record is written  |             |   incl. this header,      |
 *  +----------------------------------------------+ 128         |   multiple of 64          |
 *  | consumer position (long)  written by reader  |             +---------------------------+ 4
 *  |   release-store after the record is consumed |             | kind (int): FRAME, PAD,   |
 *  +----------------------------------------------+ 256         |   PINNED                  |
 *  | pinned records done (long) written by reader |             +---------------------------+ 8
 *  |   sender's pinned memory is free when it     |             | FrameHeader (56 bytes)    |
 *  |   equals the number of PINNED records sent   |             +---------------------------+ 64
 *  +----------------------------------------------+ 384         | FRAME: payload            |
 *  | (reserved)                                   |             | PINNED: sender address    |
 *  +----------------------------------------------+ 512         |   (long), length (long)   |
 *  | data: capacity bytes (power of two)          |             | PAD: nothing (skip to the |
 *  |   records, wrapping with a PAD record        |             |   end of the data area)   |
 *  +----------------------------------------------+ 512+cap     +---------------------------+
 * </pre>
 *
 * Publishing: the producer writes the whole record (and a PAD before it when it wraps) with
 * plain stores, then release-stores the producer position; the consumer acquire-loads it and
 * reads every record below it. A producer that dies mid-write never publishes, so a
 * half-written record is never read. Each position has its own 128-byte block (no false
 * sharing, adjacent-line prefetch included).
 */
final class RingDescriptor {
    static final int PRODUCER_POSITION_OFFSET = 0;
    static final int CONSUMER_POSITION_OFFSET = 128;
    static final int PINNED_DONE_OFFSET = 256;
    static final int DATA_OFFSET = 512;

    static final int RECORD_ALIGNMENT = 64;
    static final int RECORD_LENGTH_OFFSET = 0;
    static final int RECORD_KIND_OFFSET = 4;
    static final int RECORD_FRAME_HEADER_OFFSET = 8;
    static final int RECORD_PAYLOAD_OFFSET = 64;
    static final int PINNED_ADDRESS_OFFSET = 64;
    static final int PINNED_LENGTH_OFFSET = 72;
    static final int PINNED_RECORD_BYTES = 128;

    static final int KIND_FRAME = 1;
    static final int KIND_PAD = 2;
    static final int KIND_PINNED = 3;

    private RingDescriptor() {}

    /** Bytes of one ring with {@code capacity} data bytes. */
    static long ringBytes(int capacity) {
        return DATA_OFFSET + (long) capacity;
    }

    /** Length of a FRAME record carrying {@code payloadBytes}. */
    static int frameRecordBytes(int payloadBytes) {
        return align(RECORD_PAYLOAD_OFFSET + payloadBytes);
    }

    static int align(int n) {
        return (n + RECORD_ALIGNMENT - 1) & -RECORD_ALIGNMENT;
    }

    /** Whether {@code capacity} is usable: a power of two that holds at least 4 largest records. */
    static boolean validCapacity(int capacity, int maxPayloadBytes) {
        return capacity > 0 && Integer.bitCount(capacity) == 1
                && (long) capacity >= 4L * frameRecordBytes(maxPayloadBytes);
    }
}
