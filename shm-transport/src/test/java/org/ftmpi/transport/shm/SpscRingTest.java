package org.ftmpi.transport.shm;

import static org.ftmpi.transport.shm.RingDescriptor.*;
import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Ring layout, wrap-around with PAD records, full/empty detection, files (mode 0600, no reuse). */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SpscRingTest {
    private static final int CAP = 64 * 1024;
    private static final int SALT = 0x5eed_1e55;

    @TempDir
    Path dir;

    private MappedRegion region(boolean unsafe) throws IOException {
        return MappedRegion.create(dir.resolve("ftmpi-0000000000000001-ring"), PairDescriptor.fileBytes(CAP), unsafe);
    }

    @Test
    void layoutConstantsDoNotOverlap() {
        assertTrue(CONSUMER_POSITION_OFFSET >= 128);
        assertTrue(PINNED_DONE_OFFSET - CONSUMER_POSITION_OFFSET >= 128);
        assertTrue(DATA_OFFSET - PINNED_DONE_OFFSET >= 128);
        assertEquals(RECORD_PAYLOAD_OFFSET, RECORD_FRAME_HEADER_OFFSET + org.ftmpi.transport.FrameHeader.BYTES);
        assertEquals(0, RECORD_PAYLOAD_OFFSET % RECORD_ALIGNMENT, "payload starts on a cache line");
        assertTrue(PairDescriptor.side(1) + PairDescriptor.SIDE_BYTES <= PairDescriptor.RINGS_OFFSET);
        assertEquals(PairDescriptor.ring(1, CAP), PairDescriptor.ring(0, CAP) + ringBytes(CAP));
        assertTrue(PairDescriptor.fileBytes(CAP) >= PairDescriptor.ring(1, CAP) + ringBytes(CAP));
        assertEquals(0, PairDescriptor.fileBytes(CAP) % 4096, "whole pages");
        assertEquals(64, frameRecordBytes(0));
        assertEquals(128, frameRecordBytes(1));
        assertEquals(128, frameRecordBytes(64));
        assertFalse(validCapacity(CAP + 1, 100), "not a power of two");
        assertFalse(validCapacity(CAP, CAP / 2), "too small for four records");
    }

    /** Thousands of records of odd sizes go round the ring many times; each arrives intact, in order. */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void recordsWrapAroundWithPaddingAndArriveInOrder(boolean unsafe) throws IOException {
        try (MappedRegion m = region(unsafe)) {
            SpscRing producer = new SpscRing(m, PairDescriptor.ring(0, CAP), CAP, SALT);
            SpscRing consumer = new SpscRing(m, PairDescriptor.ring(0, CAP), CAP, SALT);
            MemorySegment seg = m.segment();
            int sent = 0, got = 0, fullSeen = 0, pads = 0;
            long lastIndex = -1;
            while (got < 5_000) {
                // Produce until full, then consume a few: the ring is often full and often wraps.
                while (sent < 5_000) {
                    int payload = (sent * 977) % 9_000;
                    int rec = frameRecordBytes(payload);
                    long at = producer.claim(rec);
                    if (at < 0) {
                        fullSeen++;
                        break;
                    }
                    seg.set(ValueLayout.JAVA_INT, at + RECORD_FRAME_HEADER_OFFSET, sent);
                    seg.set(ValueLayout.JAVA_INT, at + RECORD_FRAME_HEADER_OFFSET + 4, payload);
                    if (payload > 0) seg.set(ValueLayout.JAVA_BYTE, at + RECORD_PAYLOAD_OFFSET + payload - 1, (byte) sent);
                    producer.publish(rec, KIND_FRAME);
                    sent++;
                }
                for (int k = 0; k < 3; k++) {
                    long at = consumer.peek();
                    if (at < 0) break;
                    if (at < lastIndex) pads++;
                    lastIndex = at;
                    assertEquals(KIND_FRAME, consumer.recordKind(at));
                    assertEquals(got, seg.get(ValueLayout.JAVA_INT, at + RECORD_FRAME_HEADER_OFFSET), "order");
                    int payload = seg.get(ValueLayout.JAVA_INT, at + RECORD_FRAME_HEADER_OFFSET + 4);
                    assertEquals(frameRecordBytes(payload), consumer.recordLength(at));
                    if (payload > 0) {
                        assertEquals((byte) got, seg.get(ValueLayout.JAVA_BYTE, at + RECORD_PAYLOAD_OFFSET + payload - 1));
                    }
                    consumer.consume(consumer.recordLength(at));
                    got++;
                }
            }
            assertEquals(-1, consumer.peek(), "empty at the end");
            assertTrue(fullSeen > 100, "the ring was full many times: " + fullSeen);
            assertTrue(pads > 100, "the ring wrapped many times: " + pads);
        }
    }

    @Test
    void aClaimedButUnpublishedRecordIsInvisible() throws IOException {
        try (MappedRegion m = region(true)) {
            SpscRing producer = new SpscRing(m, PairDescriptor.ring(1, CAP), CAP, SALT);
            SpscRing consumer = new SpscRing(m, PairDescriptor.ring(1, CAP), CAP, SALT);
            long at = producer.claim(frameRecordBytes(100));
            assertTrue(at >= 0);
            m.segment().set(ValueLayout.JAVA_INT, at + RECORD_FRAME_HEADER_OFFSET, 42);
            // The producer "dies" here: nothing was published, nothing is read.
            assertEquals(-1, consumer.peek());
        }
    }

    @Test
    void aCorruptRecordLengthIsReported() throws IOException {
        try (MappedRegion m = region(true)) {
            SpscRing producer = new SpscRing(m, PairDescriptor.ring(0, CAP), CAP, SALT);
            SpscRing consumer = new SpscRing(m, PairDescriptor.ring(0, CAP), CAP, SALT);
            long at = producer.claim(64);
            producer.publish(64, KIND_FRAME);
            // Overwrite the published word: right stamp, a length beyond the data area.
            m.segment().set(ValueLayout.JAVA_LONG, at + RECORD_WORD_OFFSET, recordWord(0, SALT, 2 * CAP, KIND_FRAME));
            IOException e = assertThrows(IOException.class, consumer::peek);
            assertTrue(e.getMessage().contains("corrupt"), e.getMessage());
        }
    }

    /**
     * Whatever lies at the consumer's position is a record only if its word carries the stamp of
     * that position: a word of the previous lap, one stamped with another salt, or payload bytes
     * (zeros of a fresh file included) are not.
     */
    @Test
    void onlyTheStampOfThisPositionAndSaltPublishesARecord() throws IOException {
        try (MappedRegion m = region(true)) {
            long ring = PairDescriptor.ring(0, CAP);
            SpscRing consumer = new SpscRing(m, ring, CAP, SALT);
            MemorySegment seg = m.segment();
            long first = ring + DATA_OFFSET;
            assertEquals(-1, consumer.peek(), "zeros of a fresh file");
            seg.set(ValueLayout.JAVA_LONG, first, recordWord(-CAP, SALT, 64, KIND_FRAME));
            assertEquals(-1, consumer.peek(), "a record of the previous lap");
            seg.set(ValueLayout.JAVA_LONG, first, recordWord(0, SALT + 1, 64, KIND_FRAME));
            assertEquals(-1, consumer.peek(), "another pair's salt");
            seg.set(ValueLayout.JAVA_LONG, first, recordWord(0, SALT, 64, KIND_FRAME));
            assertEquals(first, consumer.peek(), "the stamp of position 0");
            assertEquals(64, consumer.recordLength(first));
            assertEquals(KIND_FRAME, consumer.recordKind(first));
        }
    }

    @Test
    void filesAreMode0600AndNeverReused() throws IOException {
        Path p = dir.resolve("ftmpi-00000000000000ff-0-1");
        try (MappedRegion m = MappedRegion.create(p, 128 * 1024, true)) {
            assertEquals(Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE),
                    Files.getPosixFilePermissions(p));
            assertEquals(128 * 1024, Files.size(p), "space reserved up front");
            IOException e = assertThrows(IOException.class, () -> MappedRegion.create(p, 128 * 1024, true));
            assertTrue(e.getMessage().contains("already exists"), e.getMessage());
        }
        IOException e = assertThrows(IOException.class, () -> MappedRegion.open(p, 64 * 1024, true));
        assertTrue(e.getMessage().contains("expected"), e.getMessage());
    }
}
