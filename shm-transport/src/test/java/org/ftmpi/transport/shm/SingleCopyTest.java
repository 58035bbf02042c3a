package org.ftmpi.transport.shm;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.ftmpi.runtime.JobInfo;
import org.ftmpi.runtime.LocalJobRuntime;
import org.ftmpi.transport.FrameHeader;
import org.ftmpi.transport.FrameSink;
import org.ftmpi.transport.TransportContext;
import org.ftmpi.transport.TransportLimits;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The single-copy path (PINNED records read with process_vm_readv) and its fall-backs: a heap
 * target (bounce buffer), a peer that cannot use cross-memory attach (plain copies through the
 * ring), and the probe failing on a process that is gone.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SingleCopyTest {
    private static final int LEN = 100_000;

    /** Records frames; places DATA payloads into {@link #target} when it is set. */
    static final class Sink implements FrameSink {
        MemorySegment target;
        /** When set: each DATA piece lands in this buffer at its offset in the message. */
        MemorySegment whole;
        /** With {@link #whole}: the piece at this offset gets a heap target (bounce buffer) instead. */
        long heapAt = -1;
        final List<byte[]> payloads = new ArrayList<>();
        final List<Short> flags = new ArrayList<>();
        final List<Long> offsets = new ArrayList<>();
        final List<String> lost = new ArrayList<>();
        /** What {@link #peerGone} answers (every peer known failed, or none). */
        boolean gone;

        @Override public MemorySegment placement(int peer, MemorySegment header) {
            int n = FrameHeader.payloadLength(header);
            if (whole != null) {
                long at = FrameHeader.length(header);
                return at == heapAt ? MemorySegment.ofArray(new byte[n]) : whole.asSlice(at, n);
            }
            return target == null ? null : target.asSlice(0, FrameHeader.payloadLength(header));
        }
        @Override public void onFrame(int peer, MemorySegment header, MemorySegment payload) {
            payloads.add(payload.toArray(ValueLayout.JAVA_BYTE));
            flags.add(FrameHeader.flags(header));
            offsets.add(FrameHeader.length(header));
        }
        @Override public void onPeerLost(int peer, String cause) { lost.add(cause); }
        @Override public boolean peerGone(int peer) { return gone; }
    }

    private final List<ShmTransport> opened = new ArrayList<>();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void close() {
        opened.forEach(ShmTransport::close);
        arena.close();
    }

    /** Two connected transports; {@code cma[r]} says whether rank r's process may use CMA. */
    private List<ShmTransport> pair(Sink[] sinks, boolean... cma) throws Exception {
        LocalJobRuntime job = new LocalJobRuntime(2, Map.of());
        List<JobInfo> pres = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            JobInfo pre = job.rank(r).preliminaryInfo();
            pres.add(pre);
            ShmConfig config = ShmConfig.from(pre);
            assertNull(new ShmTransportProvider().unavailabilityCause(new TransportContext(pre, sinks[r])));
            opened.add(new ShmTransport(pre, sinks[r], config, ShmTransportProvider.hostKey(config.dir()), cma[r]));
        }
        List<java.util.Map<String, byte[]>> eps = new ArrayList<>();
        for (ShmTransport t : opened) eps.add(Map.of("shm", t.localEndpoint()));
        List<Thread> threads = new ArrayList<>();
        Throwable[] err = new Throwable[2];
        for (int r = 0; r < 2; r++) {
            JobInfo p = pres.get(r);
            JobInfo full = new JobInfo(p.jobId(), p.rank(), p.size(), p.procIds(), p.hosts(),
                    Collections.unmodifiableList(eps), p.secret(), p.options());
            ShmTransport t = opened.get(r);
            int rank = r;
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    t.connect(full);
                } catch (Throwable e) {
                    err[rank] = e;
                }
            }));
        }
        for (Thread t : threads) t.join();
        for (Throwable e : err) if (e != null) throw new AssertionError(e);
        return opened;
    }

    private MemorySegment pattern() {
        return pattern(LEN);
    }

    private MemorySegment pattern(int len) {
        MemorySegment src = arena.allocate(len + 8, 64);
        for (int i = 0; i < len + 8; i++) src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 13 + 5));
        return src;
    }

    private static MemorySegment header(int len) {
        return header(len, 0);
    }

    /** A DATA header for {@code len} bytes at {@code offset} of the message. */
    private static MemorySegment header(int len, long offset) {
        MemorySegment h = MemorySegment.ofArray(new byte[FrameHeader.BYTES]);
        FrameHeader.write(h, FrameHeader.DATA, 0, 0, 0, 0, len, 0, 1, 2, offset);
        return h;
    }

    private static void assertPattern(byte[] got) {
        assertPattern(got, LEN);
    }

    private static void assertPattern(byte[] got, int len) {
        assertEquals(len, got.length);
        for (int i = 0; i < len; i++) {
            if (got[i] != (byte) ((i + 8) * 13 + 5)) assertEquals((byte) ((i + 8) * 13 + 5), got[i], "byte " + i);
        }
    }

    /** The payloads a sink got, in order, checked to follow each other from {@code offset}, joined. */
    private static byte[] joined(Sink sink, long offset) {
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < sink.payloads.size(); i++) {
            assertEquals(offset + all.size(), sink.offsets.get(i), "piece " + i + " starts where the last ended");
            all.writeBytes(sink.payloads.get(i));
        }
        return all.toByteArray();
    }

    /** Larger than a ring fragment (128 KiB) and than the bounce buffer; not a multiple of either. */
    private static final int BIG = (1 << 20) + 24;

    @Test
    void aMessageLargerThanAFragmentIsReadWithOneCallIntoTheTarget() throws Exception {
        Sink[] sinks = {new Sink(), new Sink()};
        List<ShmTransport> t = pair(sinks, true, true);
        assertEquals(ShmConfig.MAX_PINNED_BYTES, t.get(0).limits().maxPinnedBytes());
        assertTrue(BIG > t.get(0).limits().maxFragmentBytes());
        sinks[1].target = arena.allocate(BIG, 64);
        t.get(0).sendPinned(1, header(BIG, 4096), pattern(BIG), 8, BIG);
        assertFalse(t.get(0).released(1));
        while (sinks[1].payloads.isEmpty()) t.get(1).progress();
        assertEquals(1, sinks[1].payloads.size(), "one frame: the whole piece in one read");
        assertEquals(4096L, sinks[1].offsets.get(0));
        assertEquals(FrameHeader.FLAG_PLACED, (short) (sinks[1].flags.get(0) & FrameHeader.FLAG_PLACED));
        assertPattern(sinks[1].target.toArray(ValueLayout.JAVA_BYTE), BIG);
        assertTrue(t.get(0).released(1));
    }

    @Test
    void aLargePieceForAHeapTargetArrivesInBounceSizedFramesInOrder() throws Exception {
        Sink[] sinks = {new Sink(), new Sink()};
        List<ShmTransport> t = pair(sinks, true, true);
        sinks[1].target = MemorySegment.ofArray(new byte[BIG]);
        t.get(0).sendPinned(1, header(BIG, 1000), pattern(BIG), 8, BIG);
        while (!t.get(0).released(1)) t.get(1).progress();
        int fragment = t.get(0).limits().maxFragmentBytes();
        assertEquals((BIG + fragment - 1) / fragment, sinks[1].payloads.size());
        for (short f : sinks[1].flags) assertEquals(0, f & FrameHeader.FLAG_PLACED);
        assertPattern(joined(sinks[1], 1000), BIG);
    }

    /** A peer that cannot read us gets a large pinned piece as ring-sized copies, in order. */
    @Test
    void aLargePieceToAPeerWithoutCmaIsCopiedInFragments() throws Exception {
        Sink[] sinks = {new Sink(), new Sink()};
        List<ShmTransport> t = pair(sinks, true, false);
        MemorySegment src = pattern(BIG);
        t.get(0).sendPinned(1, header(BIG, 64), src, 8, BIG);
        assertTrue(t.get(0).released(1), "copied (or queued as copies) at once, nothing pinned");
        src.fill((byte) 0);
        int fragment = t.get(0).limits().maxFragmentBytes();
        while (t.get(0).backlogBytes(1) > 0 || sinks[1].payloads.size() < (BIG + fragment - 1) / fragment) {
            t.get(0).progress();
            t.get(1).progress();
        }
        assertPattern(joined(sinks[1], 64), BIG);
    }

    /**
     * A PINNED record whose memory cannot be read (here: an unmapped address; a sender that is
     * gone gives ESRCH the same way) drops the pair and reports the loss: no hang, no data.
     */
    @Test
    void anUnreadablePinnedPieceReportsThePeerLost() throws Exception {
        Sink[] sinks = {new Sink(), new Sink()};
        List<ShmTransport> t = pair(sinks, true, true);
        sinks[1].target = arena.allocate(BIG, 64);
        MemorySegment unmapped = MemorySegment.ofAddress(4096).reinterpret(BIG);
        t.get(0).sendPinned(1, header(BIG), unmapped, 0, BIG);
        assertReadFailsAndBothSidesLoseThePair(sinks, t, BIG);
    }

    /** Rank 1's read of {@code bytes} fails: it reports the loss, delivers nothing, and rank 0 is released. */
    private static void assertReadFailsAndBothSidesLoseThePair(Sink[] sinks, List<ShmTransport> t, long bytes) {
        while (sinks[1].lost.isEmpty()) t.get(1).progress();
        assertTrue(sinks[1].lost.get(0).contains("process_vm_readv of " + bytes + " bytes from rank 0 failed"),
                sinks[1].lost.get(0));
        assertEquals(List.of(), sinks[1].payloads);
        while (sinks[0].lost.isEmpty()) t.get(0).progress();
        assertTrue(t.get(0).released(1), "the sender is not kept waiting for a lost peer");
    }

    @Test
    void nativeTargetIsFilledInPlaceAndTheSenderIsReleasedAfterTheRead() throws Exception {
        Sink[] sinks = {new Sink(), new Sink()};
        List<ShmTransport> t = pair(sinks, true, true);
        assertEquals(64 * 1024, t.get(0).limits().singleCopyMinBytes());
        MemorySegment src = pattern();
        sinks[1].target = arena.allocate(LEN, 64);
        t.get(0).sendPinned(1, header(LEN), src, 8, LEN);
        assertFalse(t.get(0).released(1), "the receiver has not read the pinned memory yet");
        while (sinks[1].payloads.isEmpty()) t.get(1).progress();
        assertTrue(t.get(0).released(1), "released once read");
        assertEquals(FrameHeader.FLAG_PLACED, (short) (sinks[1].flags.get(0) & FrameHeader.FLAG_PLACED));
        assertPattern(sinks[1].target.toArray(ValueLayout.JAVA_BYTE));
    }

    /** Sends pieces of {@code sizes} bytes, one PINNED record each, that follow each other in one message. */
    private void sendPieces(ShmTransport from, MemorySegment src, int... sizes) throws Exception {
        long at = 0;
        for (int n : sizes) {
            from.sendPinned(1, header(n, at), src, 8 + at, n);
            at += n;
        }
    }

    private static int sum(int... sizes) {
        return java.util.Arrays.stream(sizes).sum();
    }

    /** PINNED records in a row, of mixed sizes, into native targets: one process_vm_readv for all. */
    @Test
    void pinnedRecordsInARowAreReadWithOneCall() throws Exception {
        Sink[] sinks = {new Sink(), new Sink()};
        List<ShmTransport> t = pair(sinks, true, true);
        int[] sizes = {65536, LEN, 65536 + 24, 200_000, 65536, 1 << 20, 70_001};
        int total = sum(sizes);
        sinks[1].whole = arena.allocate(total, 64);
        sendPieces(t.get(0), pattern(total), sizes);
        assertFalse(t.get(0).released(1));
        t.get(1).progress();
        assertEquals(sizes.length, sinks[1].payloads.size(), "every record delivered by one progress call");
        assertEquals(1, t.get(1).cmaCalls(), "one process_vm_readv for the batch");
        for (short f : sinks[1].flags) assertEquals(FrameHeader.FLAG_PLACED, (short) (f & FrameHeader.FLAG_PLACED));
        assertPattern(joined(sinks[1], 0), total);
        assertPattern(sinks[1].whole.toArray(ValueLayout.JAVA_BYTE), total);
        assertTrue(t.get(0).released(1));
    }

    /**
     * A batch ends before a record whose target is on the heap (that one goes through the bounce
     * buffer) and before the batch would exceed MAX_PINNED_BYTES; everything arrives in order.
     */
    @Test
    void aBatchStopsAtAHeapTargetAndAtItsByteLimit() throws Exception {
        Sink[] sinks = {new Sink(), new Sink()};
        List<ShmTransport> t = pair(sinks, true, true);
        int mib = 1 << 20;
        int[] sizes = {65536, 65536, 65536, 65536, mib, mib, mib, mib, mib};
        int total = sum(sizes);
        sinks[1].whole = arena.allocate(total, 64);
        sinks[1].heapAt = 2 * 65536; // the third piece
        sendPieces(t.get(0), pattern(total), sizes);
        while (!t.get(0).released(1)) t.get(1).progress();
        // [64K, 64K] | bounce 64K | [64K, 1M, 1M, 1M] (4 MiB would be exceeded by the next) | [1M, 1M]
        assertEquals(4, t.get(1).cmaCalls());
        assertEquals(sizes.length, sinks[1].payloads.size());
        for (int i = 0; i < sizes.length; i++) {
            assertEquals(i == 2 ? 0 : FrameHeader.FLAG_PLACED, sinks[1].flags.get(i) & FrameHeader.FLAG_PLACED, "piece " + i);
        }
        assertPattern(joined(sinks[1], 0), total);
    }

    /** A batch whose third piece cannot be read: the pair is lost, nothing is delivered, no hang. */
    @Test
    void anUnreadablePieceInABatchReportsThePeerLost() throws Exception {
        Sink[] sinks = {new Sink(), new Sink()};
        List<ShmTransport> t = pair(sinks, true, true);
        sinks[1].whole = arena.allocate(4 * LEN, 64);
        MemorySegment src = pattern(2 * LEN);
        t.get(0).sendPinned(1, header(LEN, 0), src, 8, LEN);
        t.get(0).sendPinned(1, header(LEN, LEN), src, 8 + LEN, LEN);
        t.get(0).sendPinned(1, header(LEN, 2 * LEN), MemorySegment.ofAddress(4096).reinterpret(LEN), 0, LEN);
        t.get(0).sendPinned(1, header(LEN, 3 * LEN), src, 8, LEN);
        assertReadFailsAndBothSidesLoseThePair(sinks, t, 4 * LEN);
    }

    /** Posix.processVmReadv resumes after a partial read and reports the errno of the piece that fails. */
    @Test
    void aVectorReadResumesAfterAPartialRead() throws Exception {
        long pid = ProcessHandle.current().pid();
        MemorySegment src = pattern(3 * LEN);
        MemorySegment dst = arena.allocate(3 * LEN, 64);
        Posix.CmaScratch s = new Posix.CmaScratch(arena);
        for (int i = 0; i < 3; i++) s.piece(i, dst.address() + (long) i * LEN, src.address() + 8 + (long) i * LEN, LEN);
        assertEquals(0, Posix.processVmReadv(s, pid, 3));
        assertPattern(dst.toArray(ValueLayout.JAVA_BYTE), 3 * LEN);
        s.piece(0, dst.address(), src.address(), LEN);
        s.piece(1, dst.address() + LEN, 4096, LEN);
        assertEquals(14, Posix.processVmReadv(s, pid, 2), "EFAULT after the first piece was read");
        assertThrows(IllegalArgumentException.class, () -> Posix.processVmReadv(s, pid, 0));
        assertThrows(IllegalArgumentException.class, () -> Posix.processVmReadv(s, pid, Posix.CmaScratch.IOVECS + 1));
    }

    @Test
    void heapTargetGoesThroughTheBounceBuffer() throws Exception {
        Sink[] sinks = {new Sink(), new Sink()};
        List<ShmTransport> t = pair(sinks, true, true);
        sinks[1].target = MemorySegment.ofArray(new byte[LEN]);
        t.get(0).sendPinned(1, header(LEN), pattern(), 8, LEN);
        while (sinks[1].payloads.isEmpty()) t.get(1).progress();
        assertEquals(0, sinks[1].flags.get(0) & FrameHeader.FLAG_PLACED, "not placed: the sink copies");
        assertPattern(sinks[1].payloads.get(0));
        assertTrue(t.get(0).released(1));
    }

    /** Rank 1 cannot use CMA (seccomp, ptrace scope, EPERM): rank 0 copies through the ring. */
    @Test
    void aPeerWithoutCmaGetsCopies() throws Exception {
        Sink[] sinks = {new Sink(), new Sink()};
        List<ShmTransport> t = pair(sinks, true, false);
        assertEquals(TransportLimits.NO_SINGLE_COPY, t.get(1).limits().singleCopyMinBytes());
        MemorySegment src = pattern();
        sinks[1].target = arena.allocate(LEN, 64);
        t.get(0).sendPinned(1, header(LEN), src, 8, LEN);
        assertTrue(t.get(0).released(1), "copied at once, nothing pinned");
        src.fill((byte) 0);
        while (sinks[1].payloads.isEmpty()) t.get(1).progress();
        assertEquals(0, sinks[1].flags.get(0) & FrameHeader.FLAG_PLACED);
        assertPattern(sinks[1].payloads.get(0));
        // The other way round single copy still works: rank 0 can read rank 1.
        sinks[0].target = arena.allocate(LEN, 64);
        t.get(1).sendPinned(0, header(LEN), pattern(), 8, LEN);
        while (sinks[0].payloads.isEmpty()) t.get(0).progress();
        assertEquals(FrameHeader.FLAG_PLACED, (short) (sinks[0].flags.get(0) & FrameHeader.FLAG_PLACED));
    }

    @Test
    void optionOffDisablesSingleCopy() throws Exception {
        LocalJobRuntime job = new LocalJobRuntime(1, Map.of("shm-cma", "off"));
        JobInfo pre = job.rank(0).preliminaryInfo();
        var t = new ShmTransportProvider().open(new TransportContext(pre, new Sink()));
        try {
            assertEquals(TransportLimits.NO_SINGLE_COPY, t.limits().singleCopyMinBytes());
        } finally {
            t.close();
        }
    }

    @Test
    void theBatchSizeIsAJobOption() throws Exception {
        assertEquals(Posix.CmaScratch.IOVECS, ShmConfig.from(new LocalJobRuntime(1, Map.of()).rank(0).preliminaryInfo())
                .cmaBatchPieces());
        assertEquals(1, ShmConfig.from(new LocalJobRuntime(1, Map.of("shm-cma-batch", "1")).rank(0).preliminaryInfo())
                .cmaBatchPieces());
        for (String bad : List.of("0", "65", "x")) {
            JobInfo pre = new LocalJobRuntime(1, Map.of("shm-cma-batch", bad)).rank(0).preliminaryInfo();
            java.io.IOException e = assertThrows(java.io.IOException.class, () -> ShmConfig.from(pre));
            assertTrue(e.getMessage().contains("shm-cma-batch=" + bad), e.getMessage());
        }
    }

    @Test
    void readingAProcessThatIsGoneFails() throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment dst = a.allocate(8);
            int rc = Posix.processVmRead(new Posix.CmaScratch(a), p.pid(), dst, dst.address(), 8);
            assertEquals(Posix.ESRCH, rc);
        }
        assertTrue(ShmTransportProvider.cmaWorksHere(), "CMA works in this test environment");
    }
}
