package org.ftmpi.transport.shm;

import static org.ftmpi.transport.shm.RingDescriptor.*;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One side's view of a {@link RingDescriptor ring}: a rank owns the producer view of its
 * outgoing ring and the consumer view of its incoming one. The consumer polls the record word
 * at its position in place (a record is published by the release store of its stamped word),
 * and the producer caches the consumer's position, re-reading it only when the ring seems
 * full; so in a steady exchange the only lines that move between cores are the records'.
 *
 * <p><b>Note:</b> not thread-safe; exactly one producer and one consumer per ring, each under
 * its engine's progress lock.
 */
final class SpscRing {
    private final ControlWords words;
    private final MemorySegment seg;
    private final long base;
    private final long data;
    private final int capacity;
    private final int mask;
    private final int salt;

    private long producerPosition;
    private long consumerCache;
    private long claimedAt;

    private long consumerPosition;
    private long aheadPosition;
    private long pinnedDone;

    /**
     * @param salt the pair file's random salt, mixed into every record's stamp (both sides of a
     *             ring must use the same)
     */
    SpscRing(MappedRegion region, long ringOffset, int capacity, int salt) {
        this.words = region.words();
        this.seg = region.segment();
        this.base = ringOffset;
        this.data = ringOffset + DATA_OFFSET;
        this.capacity = capacity;
        this.mask = capacity - 1;
        this.salt = salt;
        this.consumerPosition = words.getLongAcquire(base + CONSUMER_POSITION_OFFSET);
        this.producerPosition = consumerPosition;
        this.consumerCache = consumerPosition;
    }

    MemorySegment segment() { return seg; }

    // ------------------------------------------------------------------ producer

    /**
     * Claims room for a record of {@code recordBytes} (a multiple of 64, at most capacity / 4),
     * publishing a PAD record first when the record would cross the end of the data area.
     *
     * @return the record's offset in {@link #segment()}, or -1 when the ring is full
     */
    long claim(int recordBytes) {
        long pos = producerPosition;
        int index = (int) (pos & mask);
        int toEnd = capacity - index;
        int need = recordBytes <= toEnd ? recordBytes : toEnd + recordBytes;
        if (pos + need - consumerCache > capacity) {
            consumerCache = words.getLongAcquire(base + CONSUMER_POSITION_OFFSET);
            if (pos + need - consumerCache > capacity) return -1;
        }
        if (recordBytes > toEnd) {
            words.putLongRelease(data + index, recordWord(pos, salt, toEnd, KIND_PAD));
            pos += toEnd;
            producerPosition = pos;
            index = 0;
        }
        claimedAt = pos;
        return data + index;
    }

    /** Makes the claimed record visible: the release store of its stamped word. */
    void publish(int recordBytes, int kind) {
        long pos = claimedAt;
        words.putLongRelease(data + (pos & mask), recordWord(pos, salt, recordBytes, kind));
        producerPosition = pos + recordBytes;
    }

    /** Number of PINNED records the consumer has finished reading (acquire). */
    long pinnedDoneAcquire() {
        return words.getLongAcquire(base + PINNED_DONE_OFFSET);
    }

    // ------------------------------------------------------------------ consumer

    /**
     * The offset of the next published record (PAD records skipped), or -1 when none.
     *
     * @throws IOException when the ring holds a record that cannot be valid (corrupt peer)
     */
    long peek() throws IOException {
        long at = peekAt(consumerPosition);
        consumerPosition = aheadPosition; // past the PAD records it skipped
        return at;
    }

    /**
     * Looks ahead without consuming: the offset of the published record (PAD records skipped)
     * at {@code position} (at or after the consumer position, at most a ring's worth ahead),
     * or -1 when none; {@link #aheadPosition} is then the record's position.
     *
     * @throws IOException when the ring holds a record that cannot be valid (corrupt peer)
     */
    long peekAt(long position) throws IOException {
        while (true) {
            aheadPosition = position;
            int index = (int) (position & mask);
            long at = data + index;
            long word = words.getLongAcquire(at);
            if ((int) (word >>> 32) != stamp(position, salt)) return -1;
            int length = (int) word & ~RECORD_KIND_MASK;
            int kind = (int) word & RECORD_KIND_MASK;
            if (length < RECORD_ALIGNMENT || length > capacity - index) {
                throw new IOException("corrupt shared-memory ring: record of " + length + " bytes at position "
                        + position);
            }
            if (kind != KIND_PAD) return at;
            if (length != capacity - index) {
                throw new IOException("corrupt shared-memory ring: PAD of " + length + " bytes at index " + index);
            }
            position += length;
        }
    }

    /** Position of the record the last {@link #peekAt} looked at (after the PAD records it skipped). */
    long aheadPosition() { return aheadPosition; }

    /** Position of the next record to consume. */
    long consumerPosition() { return consumerPosition; }

    /** Releases the record at the consumer position back to the producer (release store). */
    void consume(int recordBytes) {
        consumerPosition += recordBytes;
        words.putLongRelease(base + CONSUMER_POSITION_OFFSET, consumerPosition);
    }

    /** Tells the producer that one more PINNED record has been read (release store). */
    void pinnedRead() {
        words.putLongRelease(base + PINNED_DONE_OFFSET, ++pinnedDone);
    }

    /** Length of the record {@link #peek} returned at {@code at}. */
    int recordLength(long at) { return (int) seg.get(ValueLayout.JAVA_LONG, at) & ~RECORD_KIND_MASK; }

    /** Kind of the record {@link #peek} returned at {@code at}. */
    int recordKind(long at) { return (int) seg.get(ValueLayout.JAVA_LONG, at) & RECORD_KIND_MASK; }
}
