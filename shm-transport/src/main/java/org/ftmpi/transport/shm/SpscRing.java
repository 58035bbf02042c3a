package org.ftmpi.transport.shm;

import static org.ftmpi.transport.shm.RingDescriptor.*;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One side's view of a {@link RingDescriptor ring}: a rank owns the producer view of its
 * outgoing ring and the consumer view of its incoming one. Each side caches the other side's
 * position and re-reads it only when it seems to have run out (full / empty), so the shared
 * lines move between cores only when there is something to say.
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

    private long producerPosition;
    private long consumerCache;
    private long claimedAt;

    private long consumerPosition;
    private long producerCache;
    private long pinnedDone;

    SpscRing(MappedRegion region, long ringOffset, int capacity) {
        this.words = region.words();
        this.seg = region.segment();
        this.base = ringOffset;
        this.data = ringOffset + DATA_OFFSET;
        this.capacity = capacity;
        this.mask = capacity - 1;
        this.producerPosition = words.getLongAcquire(base + PRODUCER_POSITION_OFFSET);
        this.consumerPosition = words.getLongAcquire(base + CONSUMER_POSITION_OFFSET);
        this.consumerCache = consumerPosition;
        this.producerCache = producerPosition;
    }

    MemorySegment segment() { return seg; }

    // ------------------------------------------------------------------ producer

    /**
     * Claims room for a record of {@code recordBytes} (a multiple of 64, at most capacity / 4),
     * writing a PAD record first when the record would cross the end of the data area.
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
            seg.set(ValueLayout.JAVA_INT, data + index + RECORD_LENGTH_OFFSET, toEnd);
            seg.set(ValueLayout.JAVA_INT, data + index + RECORD_KIND_OFFSET, KIND_PAD);
            pos += toEnd;
            index = 0;
        }
        claimedAt = pos;
        long at = data + index;
        seg.set(ValueLayout.JAVA_INT, at + RECORD_LENGTH_OFFSET, recordBytes);
        return at;
    }

    /** Makes the claimed record (and any PAD before it) visible: the release store. */
    void publish(int recordBytes) {
        producerPosition = claimedAt + recordBytes;
        words.putLongRelease(base + PRODUCER_POSITION_OFFSET, producerPosition);
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
        while (true) {
            if (consumerPosition == producerCache) {
                producerCache = words.getLongAcquire(base + PRODUCER_POSITION_OFFSET);
                if (consumerPosition == producerCache) return -1;
            }
            int index = (int) (consumerPosition & mask);
            long at = data + index;
            int length = seg.get(ValueLayout.JAVA_INT, at + RECORD_LENGTH_OFFSET);
            int kind = seg.get(ValueLayout.JAVA_INT, at + RECORD_KIND_OFFSET);
            if (length < RECORD_ALIGNMENT || (length & (RECORD_ALIGNMENT - 1)) != 0 || length > capacity - index
                    || length > producerCache - consumerPosition) {
                throw new IOException("corrupt shared-memory ring: record of " + length + " bytes at position "
                        + consumerPosition + " (published up to " + producerCache + ")");
            }
            if (kind != KIND_PAD) return at;
            if (length != capacity - index) {
                throw new IOException("corrupt shared-memory ring: PAD of " + length + " bytes at index " + index);
            }
            consumerPosition += length;
        }
    }

    /** Releases the record at the consumer position back to the producer (release store). */
    void consume(int recordBytes) {
        consumerPosition += recordBytes;
        words.putLongRelease(base + CONSUMER_POSITION_OFFSET, consumerPosition);
    }

    /** Tells the producer that one more PINNED record has been read (release store). */
    void pinnedRead() {
        words.putLongRelease(base + PINNED_DONE_OFFSET, ++pinnedDone);
    }

    int recordLength(long at) { return seg.get(ValueLayout.JAVA_INT, at + RECORD_LENGTH_OFFSET); }

    int recordKind(long at) { return seg.get(ValueLayout.JAVA_INT, at + RECORD_KIND_OFFSET); }
}
