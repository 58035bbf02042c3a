package org.ftmpi.transport.shm;

import static org.ftmpi.transport.shm.RingDescriptor.*;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.ftmpi.runtime.JobInfo;
import org.ftmpi.transport.FrameHeader;
import org.ftmpi.transport.FrameSink;
import org.ftmpi.transport.Transport;
import org.ftmpi.transport.TransportLimits;

/**
 * Shared-memory transport between ranks of one host: one mapped file per pair of ranks holding
 * two single-producer/single-consumer rings ({@link PairDescriptor}, {@link RingDescriptor}).
 * A frame is one ring record: the producer copies header and payload in, then release-stores
 * its position; the consumer hands the record's memory to the sink (which copies it out) and
 * then releases the room. Large fragments of native memory sent with {@link #sendPinned} travel
 * as PINNED records (address and length): the receiver copies them straight from the sender's
 * memory into its own buffer with {@code process_vm_readv} (single copy) when the start-up probe
 * showed that the kernel allows it. Frames that find the ring full are copied into a backlog
 * that {@link #progress()} flushes. {@link #progress()} never spins: it returns the work done
 * and the engine's spin/yield/park idle strategy does the waiting.
 *
 * <p><b>Note:</b> not thread-safe; every method but the accessors runs under the engine's
 * progress lock.
 */
final class ShmTransport implements Transport {
    private static final int BATCH = 64;
    /** Most PINNED records read with one process_vm_readv. */
    static final int BATCH_PIECES = Posix.CmaScratch.IOVECS;
    private static final long LIVENESS_PERIOD_NS = TimeUnit.MILLISECONDS.toNanos(50);

    private final JobInfo pre;
    private final FrameSink sink;
    private final ShmConfig config;
    private final TransportLimits limits;
    private final byte[] endpoint;
    private final String hostKey;
    private final long myPid = ProcessHandle.current().pid();
    private final boolean cmaHere;
    private final Arena arena = Arena.ofShared();
    private final Posix.CmaScratch scratch = new Posix.CmaScratch(arena);
    private final MemorySegment probe = arena.allocate(8, 8);
    private final MemorySegment header = arena.allocate(FrameHeader.BYTES, 8);
    /** Header of one piece of a pinned fragment that is copied instead ({@link #sendCopies}). */
    private final MemorySegment pieceHeader = arena.allocate(FrameHeader.BYTES, 8);
    /** The full header of an EAGER record (its implied fields: request ids and sequence 0). */
    private final MemorySegment eagerHeader = arena.allocate(FrameHeader.BYTES, 8);
    /**
     * The header of the frame record being delivered, copied out of the ring as {@link
     * #eagerHeader} is (a header is valid only during {@link FrameSink#onFrame}): a slice per
     * record cost 40 bytes of heap per message (an agree at np 4 exchanges 6 FT frames).
     */
    private final MemorySegment frameHeader = arena.allocate(FrameHeader.BYTES, 8);
    /** Headers of the PINNED records of one batched read ({@link #readBatch}), in ring order. */
    private final MemorySegment[] batchHeaders = new MemorySegment[BATCH_PIECES];
    /** The addresses of their receive buffers. */
    private final long[] batchTargets = new long[BATCH_PIECES];
    /** process_vm_readv calls made for PINNED records (a batch is one). */
    private long cmaCalls;
    private ShmPair[] pairs = new ShmPair[0];
    /** Makes the pairs: all at {@link #connect}, one at each {@link #reconnect} (REBUILD). */
    private ShmConnector connector;
    private final List<ShmPair> live = new ArrayList<>();
    /**
     * Pairs lost ({@link #lose}): taken out of {@link #live}, so that the progress loop's {@code
     * lost} test stays never true and the first loss does not deoptimise its compiled code (C2
     * compiles a branch never taken as a trap: three deoptimisations of {@link #progress} per
     * survivor 16-33 ms after a SIGKILL, its recompilation competing with the recovery for the
     * cores); unmapped when replaced ({@link #reconnect}) or at {@link #close}.
     */
    private final List<ShmPair> lostPairs = new ArrayList<>();
    /**
     * REBUILD with warm spares: the pair file made ahead for each live warm spare, by process id
     * ({@link #prepareSpare}; taken by {@link #reconnect}, discarded by {@link #dropSpare} and
     * {@link #close}). Written by the control thread and the making threads, read under the
     * progress lock.
     */
    private final Map<Long, CompletableFuture<ShmConnector.Premade>> premade = new ConcurrentHashMap<>();
    /** Started with the first warm spare or re-made pair ({@link #worker()}); null without one. */
    private volatile ScheduledExecutorService worker;
    /** The worker's own process_vm_readv scratch ({@link Settle}); made with it. */
    private Posix.CmaScratch workerScratch;
    /** Replacements whose pair file had been made ahead ({@link #premadeConnections}). */
    private volatile int premadeTaken;
    private volatile boolean closed;

    ShmTransport(JobInfo pre, FrameSink sink, ShmConfig config, String hostKey, boolean cmaHere) {
        this.pre = pre;
        this.sink = sink;
        this.config = config;
        this.hostKey = hostKey;
        this.cmaHere = cmaHere && config.cmaAllowed();
        this.limits = new TransportLimits(config.eagerLimitBytes(), config.maxFragmentBytes(), 300,
                8_000_000_000L, 100, this.cmaHere ? config.singleCopyMinBytes() : TransportLimits.NO_SINGLE_COPY,
                // Without single copy, the RTS carries one eager-sized piece; with it, the whole
                // message is left to process_vm_readv, one call per message up to MAX_PINNED_BYTES.
                this.cmaHere ? 0 : config.eagerLimitBytes(),
                this.cmaHere ? Math.max(ShmConfig.MAX_PINNED_BYTES, config.maxFragmentBytes()) : config.maxFragmentBytes());
        this.endpoint = endpoint(hostKey, myPid);
        MemorySegment headers = arena.allocate((long) BATCH_PIECES * FrameHeader.BYTES, 8);
        for (int i = 0; i < BATCH_PIECES; i++) {
            batchHeaders[i] = headers.asSlice((long) i * FrameHeader.BYTES, FrameHeader.BYTES);
        }
    }

    /** process_vm_readv calls made for PINNED records so far (a batched read is one). */
    long cmaCalls() { return cmaCalls; }

    @Override public String name() { return "shm"; }
    @Override public TransportLimits limits() { return limits; }
    @Override public byte[] localEndpoint() { return endpoint.clone(); }

    @Override
    public void connect(JobInfo job) throws IOException {
        List<Integer> peers = new ArrayList<>();
        for (int r = 0; r < job.size(); r++) {
            if (r != job.rank() && peerPid(job.endpoints().get(r)) > 0) peers.add(r);
        }
        long token = ThreadLocalRandom.current().nextLong() | 1;
        probe.set(ValueLayout.JAVA_LONG, 0, token);
        connector = new ShmConnector(config, job.jobId(), job.rank(), myPid, probe, token, cmaHere, scratch);
        if (!Boolean.parseBoolean(job.option("restarted", "false"))) {
            pairs = connector.connect(job.size(), peers);
            for (ShmPair p : pairs) if (p != null) install(p);
            return;
        }
        // A replacement (FT-MPI REBUILD): each live rank of this host makes a fresh pair file
        // for this process when it joins it (reconnect); a rank that has failed meanwhile is
        // not waited for (it joins later, as a replacement itself, or not at all).
        pairs = new ShmPair[job.size()];
        long me = job.procIds()[job.rank()];
        for (int r : peers) {
            ShmPair p = connector.attachFor(r, me, sink);
            if (p != null) {
                install(p);
                settleLater(p, null);
            }
        }
    }

    /** This transport's endpoint: the shared-memory domain and the process id. */
    static byte[] endpoint(String hostKey, long pid) {
        return (hostKey + "|" + pid).getBytes(StandardCharsets.UTF_8);
    }

    /** The pid in a rank's shm endpoint when it is in this host's shared-memory domain, else -1. */
    private long peerPid(Map<String, byte[]> endpoints) {
        byte[] e = endpoints == null ? null : endpoints.get("shm");
        if (e == null) return -1;
        String s = new String(e, StandardCharsets.UTF_8);
        int bar = s.lastIndexOf('|');
        if (bar < 0 || !s.substring(0, bar).equals(hostKey)) return -1;
        try {
            return Long.parseLong(s.substring(bar + 1));
        } catch (NumberFormatException ex) {
            return -1;
        }
    }

    private void install(ShmPair p) {
        pairs[p.peer] = p;
        live.add(p);
        if (cmaHere && p.bounce == null) p.bounce = arena.allocate(config.maxFragmentBytes(), 64);
    }

    @Override
    public boolean reaches(int worldRank) {
        return worldRank >= 0 && worldRank < pairs.length && pairs[worldRank] != null;
    }

    @Override
    public long backlogBytes(int worldRank) {
        ShmPair p = reaches(worldRank) ? pairs[worldRank] : null;
        return p == null ? 0 : p.backlogBytes;
    }

    private ShmPair usable(int worldRank) throws IOException {
        ShmPair p = reaches(worldRank) ? pairs[worldRank] : null;
        if (p == null) throw new IOException("no shared-memory connection to rank " + worldRank);
        if (p.lost) throw new IOException("shared-memory connection to rank " + worldRank + " lost: " + p.lostCause);
        return p;
    }

    @Override
    public void send(int worldRank, MemorySegment h, MemorySegment payload, long offset, int length)
            throws IOException {
        ShmPair p = usable(worldRank);
        checkFragment(length);
        if (p.backlog.isEmpty() && write(p, h, payload, offset, length)) return;
        byte[] frame = new byte[FrameHeader.BYTES + length];
        MemorySegment f = MemorySegment.ofArray(frame);
        MemorySegment.copy(h, 0, f, 0, FrameHeader.BYTES);
        if (length > 0) MemorySegment.copy(payload, offset, f, FrameHeader.BYTES, length);
        p.backlog.add(new ShmPair.Pending(frame, 0, 0));
        p.backlogBytes += frame.length;
    }

    /** Writes the frame into the ring when it has room now and no backlog waits before it (no copy kept). */
    @Override
    public boolean trySend(int worldRank, MemorySegment h, MemorySegment payload, long offset, int length)
            throws IOException {
        ShmPair p = usable(worldRank);
        checkFragment(length);
        return p.backlog.isEmpty() && write(p, h, payload, offset, length);
    }

    private void checkFragment(int length) {
        if (length < 0 || length > config.maxFragmentBytes()) {
            throw new IllegalArgumentException("frame payload of " + length + " bytes exceeds the shm fragment size "
                    + config.maxFragmentBytes());
        }
    }

    /** Writes one frame as a ring record (EAGER records compact); false when the ring has no room for it. */
    private static boolean write(ShmPair p, MemorySegment h, MemorySegment payload, long offset, int length) {
        boolean eager = FrameHeader.type(h) == FrameHeader.EAGER;
        int record = eager ? eagerRecordBytes(length) : frameRecordBytes(length);
        long at = p.out.claim(record);
        if (at < 0) return false;
        MemorySegment seg = p.out.segment();
        if (eager) {
            MemorySegment.copy(h, 0, seg, at + RECORD_FRAME_HEADER_OFFSET, EAGER_HEADER_BYTES);
            if (length > 0) MemorySegment.copy(payload, offset, seg, at + EAGER_PAYLOAD_OFFSET, length);
            p.out.publish(record, KIND_EAGER);
        } else {
            MemorySegment.copy(h, 0, seg, at + RECORD_FRAME_HEADER_OFFSET, FrameHeader.BYTES);
            if (length > 0) MemorySegment.copy(payload, offset, seg, at + RECORD_PAYLOAD_OFFSET, length);
            p.out.publish(record, KIND_FRAME);
        }
        return true;
    }

    @Override
    public void sendPinned(int worldRank, MemorySegment h, MemorySegment payload, long offset, int length)
            throws IOException {
        ShmPair p = usable(worldRank);
        if (!p.peerReadsUs || payload == null || !payload.isNative() || length < config.singleCopyMinBytes()
                || length > limits.maxPinnedBytes()) {
            sendCopies(worldRank, h, payload, offset, length);
            return;
        }
        java.util.Objects.checkFromIndexSize(offset, length, payload.byteSize());
        long address = payload.address() + offset; // not asSlice(...).address(): a segment object per fragment
        p.pinnedIssued++;
        if (p.backlog.isEmpty() && writePinned(p, h, address, length)) return;
        byte[] frame = new byte[FrameHeader.BYTES];
        MemorySegment.copy(h, 0, MemorySegment.ofArray(frame), 0, FrameHeader.BYTES);
        p.backlog.add(new ShmPair.Pending(frame, address, length));
        p.backlogBytes += length;
    }

    /**
     * A DATA fragment that may be larger than a ring fragment (up to {@link
     * TransportLimits#maxPinnedBytes}) sent as copies: pieces of at most the fragment size, each
     * with its own header (payload length, offset in the message).
     */
    private void sendCopies(int worldRank, MemorySegment h, MemorySegment payload, long offset, int length)
            throws IOException {
        int max = config.maxFragmentBytes();
        if (length <= max) {
            send(worldRank, h, payload, offset, length);
            return;
        }
        if (length > limits.maxPinnedBytes()) {
            throw new IllegalArgumentException("frame payload of " + length + " bytes exceeds the shm pinned size "
                    + limits.maxPinnedBytes());
        }
        MemorySegment.copy(h, 0, pieceHeader, 0, FrameHeader.BYTES);
        long at = FrameHeader.length(h);
        for (int done = 0; done < length; ) {
            int n = Math.min(max, length - done);
            FrameHeader.payloadLength(pieceHeader, n);
            FrameHeader.length(pieceHeader, at + done);
            send(worldRank, pieceHeader, payload, offset + done, n);
            done += n;
        }
    }

    private static boolean writePinned(ShmPair p, MemorySegment h, long address, int length) {
        long at = p.out.claim(PINNED_RECORD_BYTES);
        if (at < 0) return false;
        MemorySegment seg = p.out.segment();
        MemorySegment.copy(h, 0, seg, at + RECORD_FRAME_HEADER_OFFSET, FrameHeader.BYTES);
        seg.set(ValueLayout.JAVA_LONG, at + PINNED_ADDRESS_OFFSET, address);
        seg.set(ValueLayout.JAVA_LONG, at + PINNED_LENGTH_OFFSET, length);
        p.out.publish(PINNED_RECORD_BYTES, KIND_PINNED);
        return true;
    }

    @Override
    public boolean released(int worldRank) {
        ShmPair p = reaches(worldRank) ? pairs[worldRank] : null;
        return p == null || p.lost || p.pinnedIssued == p.out.pinnedDoneAcquire();
    }

    @Override
    public int progress() {
        int work = 0;
        for (int i = 0; i < live.size(); i++) {
            ShmPair p = live.get(i);
            if (p.lost) continue;
            try {
                if (!p.backlog.isEmpty()) work += flush(p);
                work += poll(p);
            } catch (IOException e) {
                lose(p, e.getMessage());
            }
        }
        return work;
    }

    private static int flush(ShmPair p) {
        int work = 0;
        ShmPair.Pending f;
        while ((f = p.backlog.peek()) != null) {
            MemorySegment frame = MemorySegment.ofArray(f.frame());
            if (f.pinned()) {
                if (!writePinned(p, frame, f.pinnedAddress(), f.pinnedLength())) break;
                p.backlogBytes -= f.pinnedLength();
            } else {
                if (!write(p, frame, frame, FrameHeader.BYTES, f.frame().length - FrameHeader.BYTES)) break;
                p.backlogBytes -= f.frame().length;
            }
            p.backlog.poll();
            work++;
        }
        return work;
    }

    /** Hands up to {@link #BATCH} published records of the peer to the sink. */
    private int poll(ShmPair p) throws IOException {
        int frames = 0;
        MemorySegment seg = p.in.segment();
        while (frames < BATCH) {
            long at = p.in.peek();
            if (at < 0) {
                if (frames == 0) idleCheck(p);
                return frames;
            }
            p.idlePolls = 0;
            int record = p.in.recordLength(at);
            if (record > RECORD_ALIGNMENT) touch(seg, at, record);
            int kind = p.in.recordKind(at);
            MemorySegment h;
            if (kind == KIND_EAGER) {
                h = eagerHeader;
                MemorySegment.copy(seg, at + RECORD_FRAME_HEADER_OFFSET, h, 0, EAGER_HEADER_BYTES);
            } else {
                h = frameHeader;
                MemorySegment.copy(seg, at + RECORD_FRAME_HEADER_OFFSET, h, 0, FrameHeader.BYTES);
            }
            int plen = FrameHeader.payloadLength(h);
            int maxPayload = kind == KIND_PINNED ? limits.maxPinnedBytes() : config.maxFragmentBytes();
            if (FrameHeader.version(h) != org.ftmpi.Version.WIRE || plen < 0 || plen > maxPayload) {
                throw new IOException("corrupt frame from rank " + p.peer + " (version " + FrameHeader.version(h)
                        + ", payload " + plen + ")");
            }
            if (kind == KIND_EAGER) {
                if (record != eagerRecordBytes(plen) || FrameHeader.type(h) != FrameHeader.EAGER) {
                    throw new IOException("corrupt eager record from rank " + p.peer + ": " + record + " bytes for "
                            + plen + " payload bytes, frame type " + FrameHeader.type(h));
                }
                FrameHeader.length(h, plen); // sequence and request ids stay 0
                sink.onFrame(p.peer, h, seg, at + EAGER_PAYLOAD_OFFSET, plen); // no slice per message
            } else if (kind == KIND_FRAME) {
                if (record != frameRecordBytes(plen)) {
                    throw new IOException("corrupt record from rank " + p.peer + ": " + record + " bytes for "
                            + plen + " payload bytes");
                }
                sink.onFrame(p.peer, h, seg, at + RECORD_PAYLOAD_OFFSET, plen);
            } else if (kind == KIND_PINNED && record == PINNED_RECORD_BYTES) {
                int n = readPinned(p, seg, at, h, plen);
                if (n > 0) { // a batch, consumed and delivered
                    frames += n;
                    if (p.lost || sink.returnEarly()) return frames;
                    continue;
                }
            } else {
                throw new IOException("corrupt record kind " + kind + " from rank " + p.peer);
            }
            if (p.lost) return frames + 1;
            p.in.consume(record);
            frames++;
            if (sink.returnEarly()) return frames;
        }
        return frames;
    }

    /**
     * Loads one word of each further cache line of a record (up to {@link #TOUCH_BYTES}) as
     * soon as its first line shows it published. Those lines were written by the other core,
     * so each read misses; issued here, the misses overlap the parsing and matching of the
     * frame, where the payload copy would only have started them afterwards, one hand-off
     * after the first line's.
     */
    private void touch(MemorySegment seg, long at, int record) {
        long x = 0;
        int end = Math.min(record, TOUCH_BYTES);
        for (int off = RECORD_ALIGNMENT; off < end; off += RECORD_ALIGNMENT) x += seg.get(ValueLayout.JAVA_LONG, at + off);
        touched = x; // stored, so that the loads are not dead code
    }

    /** Bytes of a record whose lines {@link #touch} loads ahead: beyond them the copy streams. */
    private static final int TOUCH_BYTES = 1024;
    /** The sum of the last {@link #touch}'s words; never read. */
    @SuppressWarnings("unused")
    private long touched;

    /**
     * Single copy: process_vm_readv from the sender's memory straight into the receive buffer.
     * The PINNED records that follow this one in the ring and also land in native receive
     * buffers are read with the same call (one iovec each, up to {@link #BATCH_PIECES} pieces
     * and {@link ShmConfig#MAX_PINNED_BYTES} in all: each call costs the same ~0.7 us besides
     * the copy), then consumed and delivered in ring order. A target the engine cannot name in
     * native memory (a heap array, a datatype unpacked on the fly, a receive that is gone) gets
     * the bytes through the fragment-sized bounce buffer instead, one piece (and one frame to
     * the sink) at a time.
     *
     * @return the records consumed and delivered here (a batch), or 0 when the record at
     *         {@code at} went through the bounce buffer and the caller consumes it
     */
    private int readPinned(ShmPair p, MemorySegment seg, long at, MemorySegment h, int plen) throws IOException {
        long address = pinnedAddress(p, seg, at, plen);
        MemorySegment first = batchHeaders[0];
        MemorySegment.copy(h, 0, first, 0, FrameHeader.BYTES);
        long target = sink.placementAddress(p.peer, first);
        if (target != 0) return readBatch(p, seg, address, target, plen);
        MemorySegment.copy(h, 0, header, 0, FrameHeader.BYTES);
        long base = FrameHeader.length(h);
        int piece = (int) p.bounce.byteSize();
        for (int done = 0; done < plen && !p.lost; ) {
            int n = Math.min(piece, plen - done);
            MemorySegment into = p.bounce.asSlice(0, n);
            read(p, into, address + done, n);
            done += n;
            if (done == plen) p.in.pinnedRead();
            FrameHeader.payloadLength(header, n);
            FrameHeader.length(header, base + done - n);
            sink.onFrame(p.peer, header, into);
        }
        return 0;
    }

    private long pinnedAddress(ShmPair p, MemorySegment seg, long at, int plen) throws IOException {
        long length = seg.get(ValueLayout.JAVA_LONG, at + PINNED_LENGTH_OFFSET);
        if (length != plen || p.bounce == null) {
            throw new IOException("unexpected single-copy record from rank " + p.peer);
        }
        return seg.get(ValueLayout.JAVA_LONG, at + PINNED_ADDRESS_OFFSET);
    }

    /**
     * Reads the PINNED record at the consumer position (its header in {@code batchHeaders[0]},
     * its target known) together with the PINNED records published after it whose targets are
     * native too, with one process_vm_readv; then consumes and delivers them in order.
     */
    private int readBatch(ShmPair p, MemorySegment seg, long address, long target, int plen)
            throws IOException {
        batchTargets[0] = target;
        scratch.piece(0, target, address, plen);
        int count = 1;
        long bytes = plen;
        long position = p.in.consumerPosition() + PINNED_RECORD_BYTES;
        while (count < config.cmaBatchPieces()) {
            long at = p.in.peekAt(position);
            if (at < 0 || p.in.recordKind(at) != KIND_PINNED || p.in.recordLength(at) != PINNED_RECORD_BYTES) break;
            MemorySegment h = batchHeaders[count];
            MemorySegment.copy(seg, at + RECORD_FRAME_HEADER_OFFSET, h, 0, FrameHeader.BYTES);
            int n = FrameHeader.payloadLength(h);
            if (FrameHeader.version(h) != org.ftmpi.Version.WIRE || n < 0 || n > limits.maxPinnedBytes()
                    || bytes + n > ShmConfig.MAX_PINNED_BYTES) {
                break; // a corrupt record is the main loop's to report
            }
            long from = pinnedAddress(p, seg, at, n);
            long into = sink.placementAddress(p.peer, h);
            if (into == 0) break;
            batchTargets[count] = into;
            scratch.piece(count, into, from, n);
            bytes += n;
            count++;
            position = p.in.aheadPosition() + PINNED_RECORD_BYTES;
        }
        int rc = Posix.processVmReadv(scratch, p.peerPid, count);
        checkRead(p, bytes, rc);
        for (int i = 0; i < count; i++) {
            if (i > 0 && p.in.peek() < 0) throw new IOException("shared-memory ring of rank " + p.peer + " changed under a read");
            p.in.pinnedRead();
            MemorySegment h = batchHeaders[i];
            FrameHeader.flags(h, (short) (FrameHeader.flags(h) | FrameHeader.FLAG_PLACED));
            p.in.consume(PINNED_RECORD_BYTES);
            if (!p.lost) sink.onPlaced(p.peer, h, batchTargets[i], FrameHeader.payloadLength(h));
        }
        return count;
    }

    private void read(ShmPair p, MemorySegment into, long address, int n) throws IOException {
        checkRead(p, n, Posix.processVmRead(scratch, p.peerPid, into, address, n));
    }

    /** Counts a process_vm_readv call that moved {@code bytes} from {@code p}'s peer and raises its errno {@code rc} (0: none). */
    private void checkRead(ShmPair p, long bytes, int rc) throws IOException {
        cmaCalls++;
        if (rc != 0) {
            throw new IOException("process_vm_readv of " + bytes + " bytes from rank " + p.peer + " failed (errno "
                    + rc + ")");
        }
    }

    /** With nothing to read: now and then, see whether the peer closed or its process is gone. */
    private void idleCheck(ShmPair p) {
        if ((++p.idlePolls & 63) != 0) return;
        ControlWords w = p.region.words();
        if (w.getIntAcquire(p.peerSide() + PairDescriptor.SIDE_STATE) == PairDescriptor.STATE_CLOSED) {
            lose(p, "rank " + p.peer + " closed its shared-memory connection");
            return;
        }
        if (p.sameProcess || (p.idlePolls & 4095) != 0) return;
        long now = System.nanoTime();
        if (now - p.lastLivenessCheckNs < LIVENESS_PERIOD_NS) return;
        p.lastLivenessCheckNs = now;
        if (ProcessHandle.of(p.peerPid).map(ProcessHandle::isAlive).orElse(false)) return;
        lose(p, "process " + p.peerPid + " of rank " + p.peer + " is gone");
    }

    /**
     * FT-MPI REBUILD: the process of {@code worldRank} was replaced by process {@code procId}. The
     * old pair is dropped without reporting a loss (which would name the replacement failed) and,
     * when the replacement is on this host, a fresh pair is made for it ({@link
     * ShmConnector#createFor}; the replacement attaches in its {@link #connect}). Never waits:
     * what the survivor sends before the replacement attached waits in the new ring.
     */
    @Override
    public boolean reconnect(int worldRank, long procId, Map<String, byte[]> endpoints) {
        ShmPair old = reaches(worldRank) ? pairs[worldRank] : null;
        ShmPair p = null;
        if (old != null) {
            live.remove(old);
            lostPairs.remove(old);
            pairs[worldRank] = null;
            close(old, "rank " + worldRank + " was replaced"); // unmapped by the worker (Settle)
        }
        ShmConnector.Premade made = takePremade(procId);
        long pid = peerPid(endpoints);
        if (pid <= 0 || closed || connector == null) {
            if (made != null) made.discard();
            settleLater(null, old);
            return false;
        }
        try {
            p = connector.createFor(worldRank, procId, pid, made);
        } catch (IOException | RuntimeException e) {
            System.err.println("ftmpi: rank " + pre.rank() + ": no shared memory with the replacement of rank "
                    + worldRank + " (" + e.getMessage() + "); another transport carries its traffic");
            settleLater(null, old);
            return false;
        }
        if (old != null) p.bounce = old.bounce;
        install(p);
        settleLater(p, old);
        repaired++;
        if (made != null) premadeTaken++;
        return true;
    }

    /**
     * FT-MPI REBUILD with warm spares: when warm spare {@code procId} is on this host, reserves
     * and maps the pair file it would share with this rank now, on a daemon thread (never under
     * the progress lock), so that its takeover only writes the header and renames the file
     * ({@link ShmConnector#createFor}) instead of creating and mapping 2 MiB under the progress
     * lock. The file is fresh (named after the spare's process id, mode 0600, nothing written
     * until the takeover) and removed when the spare is gone ({@link #dropSpare}) or this
     * transport closes; the launcher removes a leftover by the job's prefix.
     */
    @Override
    public CompletionStage<?> prepareSpare(long procId, Map<String, byte[]> endpoints) {
        if (peerPid(endpoints) <= 0 || closed) return null;
        CompletableFuture<ShmConnector.Premade> f = new CompletableFuture<>();
        if (premade.putIfAbsent(procId, f) != null) return null;
        worker().execute(() -> {
            try {
                f.complete(ShmConnector.premake(config, pre.jobId(), pre.procIds()[pre.rank()], procId));
            } catch (IOException | RuntimeException e) {
                f.completeExceptionally(e); // the takeover then makes the pair as without a spare
            }
            // A future dropped or taken while still being made discards what it gets (dropSpare, takePremade).
        });
        return f;
    }

    /**
     * The daemon thread {@code ftmpi-shm-spares} that makes the pair files for warm spares,
     * unmaps the pairs of replaced processes and completes the cross-memory-attach probe of
     * re-made pairs ({@link Settle}); started with the first warm spare, so that a takeover
     * hands it work without starting a thread (which waits for the new thread to be scheduled:
     * milliseconds on a busy machine), else with the first re-made pair.
     */
    private synchronized ScheduledExecutorService worker() {
        if (worker == null) {
            workerScratch = new Posix.CmaScratch(arena);
            worker = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("ftmpi-shm-spares").factory());
        }
        return worker;
    }

    /**
     * Hands a pair re-made for REBUILD ({@link ShmConnector#createFor}, {@link
     * ShmConnector#attachFor}; or null) and the closed pair it replaces (or null) to the worker,
     * in one task ({@link Settle}): it unmaps the old pair and completes the new one's
     * cross-memory-attach probe; until then the new pair's large messages go as copies. Neither
     * the unmapping (0.2-13 ms under the progress lock at a load average of 10-25, session 9)
     * nor a second hand-over to the worker (each some 0.05 ms of interpreted code in every
     * survivor) is on the recovery's critical path.
     */
    private void settleLater(ShmPair p, ShmPair retired) {
        if (p == null && retired == null) return;
        try {
            worker().schedule(new Settle(p, retired), SETTLE_FIRST_US, TimeUnit.MICROSECONDS);
        } catch (RejectedExecutionException e) {
            if (retired != null) unmap(retired); // closing: the new pair keeps sending copies
        }
    }

    /**
     * Microseconds before a re-made pair's first probe step ({@link Settle}), and the longest
     * wait between two: the replacement attaches in its {@code MPI_Init}, milliseconds after the
     * survivors re-made the pair, and the worker's wake-ups must not compete with the
     * survivors' recovery for the cores.
     */
    private static final long SETTLE_FIRST_US = 2_000, SETTLE_MAX_US = 8_000;

    /**
     * A re-made pair's probe on the worker thread: one {@link ShmConnector#settle} step 2 ms
     * after the pair was made, retried after 4, then every 8 ms until the peer has attached and
     * both results are there, the pair is lost or replaced, the transport closes, or {@link
     * ShmConnector#TIMEOUT_NS} has passed (the pair then keeps sending copies). Not in the
     * progress thread's idle check, where it ran until session 27: its first run after a REBUILD
     * took branches the compiled poll loop had never taken, and C2's traps sent {@code poll} of
     * every survivor back to the interpreter and to the JIT compilers while the replacement
     * started (docs/benchmarks.md, "Session 27"). Its first step also unmaps the pair the new
     * one replaces. Safe against the unmapping: a re-made pair is unmapped by this same thread
     * only after it was marked lost (a later REBUILD's Settle), and {@link #close} waits for the
     * thread before it unmaps. A class, loaded ahead of any failure ({@code Engine}'s preload
     * list).
     */
    private final class Settle implements Runnable {
        private final ShmPair pair;
        private ShmPair retired;
        private final long deadline = System.nanoTime() + ShmConnector.TIMEOUT_NS;
        private long waitUs = 2 * SETTLE_FIRST_US;

        Settle(ShmPair pair, ShmPair retired) {
            this.pair = pair;
            this.retired = retired;
        }

        @Override
        public void run() {
            if (retired != null) {
                unmap(retired);
                retired = null;
            }
            if (pair == null || closed || pair.lost || connector.settle(pair, workerScratch)
                    || System.nanoTime() > deadline) return;
            try {
                worker.schedule(this, waitUs, TimeUnit.MICROSECONDS);
            } catch (RejectedExecutionException e) {
                return; // closing
            }
            waitUs = Math.min(2 * waitUs, SETTLE_MAX_US);
        }
    }

    @Override
    public void dropSpare(long procId) {
        CompletableFuture<ShmConnector.Premade> f = premade.remove(procId);
        if (f != null) f.thenAccept(ShmConnector.Premade::discard);
    }

    @Override
    public int premadeConnections() {
        return premadeTaken;
    }

    /**
     * The pair file made ahead for warm spare {@code procId}, or null when there is none or it is
     * still being made (then it is discarded once made, and the pair is made now: never waits).
     */
    private ShmConnector.Premade takePremade(long procId) {
        CompletableFuture<ShmConnector.Premade> f = premade.remove(procId);
        if (f == null) return null;
        ShmConnector.Premade made = f.isDone() && !f.isCompletedExceptionally() ? f.join() : null;
        if (made == null) f.thenAccept(ShmConnector.Premade::discard);
        return made;
    }

    /** Whether large messages to {@code worldRank} go by single copy (the peer reads this process). */
    boolean singleCopyTo(int worldRank) {
        return reaches(worldRank) && pairs[worldRank].peerReadsUs;
    }

    /** Pairs re-made for replacements ({@link #reconnect}) so far. */
    private int repaired;

    /** Pairs re-made for replacements so far (diagnostics). */
    int repaired() { return repaired; }

    /** Unmaps a pair that is no longer used, and removes the file it made if the peer did not. */
    private static void discard(ShmPair p, String cause) {
        close(p, cause);
        unmap(p);
    }

    /** Unmaps a closed pair and removes the file it made if the peer did not. */
    private static void unmap(ShmPair p) {
        p.region.close();
        removeFile(p);
    }

    /** Marks a pair lost and closed on this side and drops what it still had to send. */
    private static void close(ShmPair p, String cause) {
        if (!p.lost) {
            p.lost = true;
            p.lostCause = cause;
        }
        p.backlog.clear();
        p.backlogBytes = 0;
        p.region.words().putIntRelease(p.mySide() + PairDescriptor.SIDE_STATE, PairDescriptor.STATE_CLOSED);
    }

    private static void removeFile(ShmPair p) {
        if (p.file == null) return;
        try {
            java.nio.file.Files.deleteIfExists(p.file);
        } catch (IOException ignored) {
            // the launcher removes the job's files when it ends
        }
        p.file = null;
    }

    /**
     * Marks {@code p} lost, moves it from {@link #live} to {@link #lostPairs} and reports the
     * loss. Called from {@link #progress}'s loop over {@link #live}: the pair after it is polled
     * in the next step.
     */
    private void lose(ShmPair p, String cause) {
        if (p.lost) return;
        close(p, cause);
        if (live.remove(p)) lostPairs.add(p);
        sink.onPeerLost(p.peer, cause);
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        for (Long id : List.copyOf(premade.keySet())) dropSpare(id);
        ScheduledExecutorService w = worker;
        if (w != null) {
            w.shutdown(); // finishes what it was given (files made ahead are discarded by their futures)
            awaitWorker(w); // a probe step (Settle) must not touch a pair unmapped below
        }
        for (ShmPair p : live) discard(p, "closed");
        live.clear();
        for (ShmPair p : lostPairs) unmap(p);
        lostPairs.clear();
        pairs = new ShmPair[0];
        arena.close();
    }

    /** Waits up to 5 s for the worker to end; a step of it takes microseconds, a pair file's making milliseconds. */
    private static void awaitWorker(ScheduledExecutorService w) {
        try {
            if (!w.awaitTermination(5, TimeUnit.SECONDS)) System.err.println("ftmpi: the shared-memory worker did not end in 5 s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "ShmTransport[rank " + pre.rank() + ", " + live.size() + " peers, ring " + config.ringBytes()
                + " B, single copy " + (cmaHere ? "from " + config.singleCopyMinBytes() + " B" : "off") + "]";
    }
}
