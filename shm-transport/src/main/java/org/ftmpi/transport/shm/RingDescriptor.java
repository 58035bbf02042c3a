package org.ftmpi.transport.shm;

/**
 * Layout of one single-producer/single-consumer ring (one direction of a pair of ranks) and of
 * its records. Positions are byte counts that only grow; a record starts at
 * {@code position & (capacity - 1)} of the data area. All offsets are from the ring's start.
 *
 * <pre>
 *  ring                                                          record (64-byte aligned)
 *  +----------------------------------------------+ 0           +---------------------------+ 0
 *  | (reserved: was the producer position)        |             | record word (long),       |
 *  +----------------------------------------------+ 128         |   release-stored last:    |
 *  | consumer position (long)  written by reader  |             |   bits 63-32: stamp of    |
 *  |   release-store after the record is consumed |             |     the record's position |
 *  +----------------------------------------------+ 256         |   bits 31-0: length (incl.|
 *  | pinned records done (long) written by reader |             |     this header, multiple |
 *  |   sender's pinned memory is free when it     |             |     of 64) | kind (FRAME, |
 *  |   equals the number of PINNED records sent   |             |     PAD, PINNED; < 64)    |
 *  +----------------------------------------------+ 384         +---------------------------+ 8
 *  | (reserved)                                   |             | FrameHeader (56 bytes)    |
 *  +----------------------------------------------+ 512         +---------------------------+ 64
 *  | data: capacity bytes (power of two)          |             | FRAME: payload            |
 *  |   records, wrapping with a PAD record        |             | PINNED: sender address    |
 *  +----------------------------------------------+ 512+cap     |   (long), length (long)   |
 *                                                               | PAD: nothing (skip to the |
 *                                                               |   end of the data area)   |
 *                                                               +---------------------------+
 *
 *  EAGER record (an eager frame, compact: up to 32 payload bytes fit in one cache line)
 *  +---------------------------+ 0
 *  | record word (long)        |
 *  +---------------------------+ 8
 *  | FrameHeader bytes 0-23    |   version, type (EAGER), flags, context, source, tag, epoch,
 *  |                           |   payload length; the rest of the header is implied
 *  +---------------------------+ 32  (sequence, request ids 0; message length = payload)
 *  | payload                   |
 *  +---------------------------+
 * </pre>
 *
 * Publishing: the producer writes the record's header and payload (and a PAD before it when it
 * wraps) with plain stores, then release-stores the record word. The consumer polls the record
 * word at its own position in place (acquire) and takes the record when the word carries the
 * stamp of that position: {@code stamp = (int) (position >>> 6) ^ salt}, with the pair file's
 * random salt ({@link PairDescriptor#SALT_OFFSET}). So a message costs the reader the lines of
 * the record alone, no separate position line (the "fast box" of Open MPI's vader and
 * MPICH's nemesis: the flag travels with the data). A stale word left from an earlier lap, or
 * payload bytes that happen to lie where a record now starts, carry another stamp; matching
 * the exact 64-bit word by accident needs the salt and the position (2^-64 for random data).
 * A producer that dies mid-write never publishes, so a half-written record is never read. The
 * consumer position has its own 128-byte block (no false sharing, adjacent-line prefetch
 * included) and is read by the producer only when its cached copy says the ring is full.
 */
final class RingDescriptor {
    static final int CONSUMER_POSITION_OFFSET = 128;
    static final int PINNED_DONE_OFFSET = 256;
    static final int DATA_OFFSET = 512;

    static final int RECORD_ALIGNMENT = 64;
    static final int RECORD_WORD_OFFSET = 0;
    /** Low bits of the record word holding the kind (the length is a multiple of 64). */
    static final int RECORD_KIND_MASK = RECORD_ALIGNMENT - 1;
    static final int RECORD_FRAME_HEADER_OFFSET = 8;
    static final int RECORD_PAYLOAD_OFFSET = 64;
    static final int PINNED_ADDRESS_OFFSET = 64;
    static final int PINNED_LENGTH_OFFSET = 72;
    static final int PINNED_RECORD_BYTES = 128;

    static final int KIND_FRAME = 1;
    static final int KIND_PAD = 2;
    static final int KIND_PINNED = 3;
    static final int KIND_EAGER = 4;

    /** Bytes of the FrameHeader an EAGER record carries (up to and including the payload length). */
    static final int EAGER_HEADER_BYTES = 24;
    static final int EAGER_PAYLOAD_OFFSET = RECORD_FRAME_HEADER_OFFSET + EAGER_HEADER_BYTES;

    private RingDescriptor() {}

    /** Bytes of one ring with {@code capacity} data bytes. */
    static long ringBytes(int capacity) {
        return DATA_OFFSET + (long) capacity;
    }

    /** Length of a FRAME record carrying {@code payloadBytes}. */
    static int frameRecordBytes(int payloadBytes) {
        return align(RECORD_PAYLOAD_OFFSET + payloadBytes);
    }

    /** Length of an EAGER record carrying {@code payloadBytes}. */
    static int eagerRecordBytes(int payloadBytes) {
        return align(EAGER_PAYLOAD_OFFSET + payloadBytes);
    }

    /** The record word published for a record at {@code position}. */
    static long recordWord(long position, int salt, int length, int kind) {
        return ((long) stamp(position, salt) << 32) | (length | kind) & 0xFFFF_FFFFL;
    }

    static int stamp(long position, int salt) {
        return (int) (position >>> 6) ^ salt;
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
