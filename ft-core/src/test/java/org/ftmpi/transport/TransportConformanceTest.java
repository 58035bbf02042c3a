package org.ftmpi.transport;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.ftmpi.runtime.JobInfo;
import org.ftmpi.runtime.LocalJobRuntime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What every {@link Transport} must do, checked at the SPI level (no engine): frames arrive
 * intact and in order, from heap and native memory, from several senders, through backlog, and
 * failures reach the {@link FrameSink}. A concrete subclass names its provider and the
 * {@link Topology topologies} it supports; tests for the others are skipped.
 *
 * <p>All transports of a test are driven from the test thread only (the SPI is not thread-safe;
 * the engine calls it under its progress lock), except {@link Transport#connect}, which runs on
 * one thread per rank as it blocks until the peers connect.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class TransportConformanceTest {

    /** Who can talk to whom over the transport under test. */
    protected enum Topology {
        /** A rank sends frames to itself. */
        LOOPBACK,
        /** Distinct ranks send frames to each other. */
        PEERS
    }

    /** Where a frame's payload lives when it is handed to {@link Transport#send}. */
    protected enum Memory { HEAP, NATIVE, MIXED }

    protected abstract TransportProvider provider();

    protected abstract Set<Topology> topologies();

    /**
     * Whether {@link Transport#send} can accept more than the receiver reads (so that
     * {@link Transport#backlogBytes} becomes positive when the receiver does not progress).
     */
    protected abstract boolean buffersBacklog();

    /** Job options the transports are opened with. */
    protected Map<String, String> options() {
        return Map.of();
    }

    // ------------------------------------------------------------------ harness

    /** A sink that checks every payload against {@link #pattern} and records the envelopes. */
    protected static final class RecordingSink implements FrameSink {
        public record Got(int peer, byte type, int tag, long sequence, int payloadLength, boolean intact) {}

        public RecordingSink() {}

        private final List<Got> frames = new ArrayList<>();
        private final Map<Integer, List<String>> lost = new HashMap<>();

        @Override
        public synchronized void onFrame(int peer, MemorySegment header, MemorySegment payload) {
            int plen = FrameHeader.payloadLength(header);
            long seq = FrameHeader.sequence(header);
            boolean ok = payload.byteSize() == plen && FrameHeader.version(header) == org.ftmpi.Version.WIRE
                    && FrameHeader.source(header) == peer && patternMatches(payload, peer, seq);
            frames.add(new Got(peer, FrameHeader.type(header), FrameHeader.tag(header), seq, plen, ok));
        }

        @Override
        public synchronized void onPeerLost(int peer, String cause) {
            lost.computeIfAbsent(peer, p -> new ArrayList<>()).add(cause);
        }

        public synchronized List<Got> frames() { return new ArrayList<>(frames); }

        public synchronized int count() { return frames.size(); }

        public synchronized List<Got> from(int peer) {
            return frames.stream().filter(g -> g.peer() == peer).toList();
        }

        public synchronized List<String> lost(int peer) {
            return new ArrayList<>(lost.getOrDefault(peer, List.of()));
        }

        private final java.util.Set<Long> gone = java.util.concurrent.ConcurrentHashMap.newKeySet();

        /** The failure notice of process {@code procId} arrived ({@link FrameSink#processGone}). */
        public void markGone(long procId) {
            gone.add(procId);
        }

        @Override
        public boolean processGone(long procId) {
            return gone.contains(procId);
        }
    }

    /** One rank: its transport and its sink. */
    protected record Node(int rank, Transport transport, RecordingSink sink, JobInfo pre) {}

    private final List<Node> opened = new ArrayList<>();

    @AfterEach
    void closeAll() {
        for (Node n : opened) n.transport().close();
        opened.clear();
    }

    /** Opens {@code n} transports through the provider, exchanges endpoints by hand, connects them. */
    protected List<Node> open(int n) throws Exception {
        return connect(openUnconnected(n, new LocalJobRuntime(n, options())));
    }

    protected List<Node> openUnconnected(int n, LocalJobRuntime job) throws IOException {
        List<Node> nodes = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            JobInfo pre = job.rank(r).preliminaryInfo();
            RecordingSink sink = new RecordingSink();
            TransportContext tc = new TransportContext(pre, sink);
            assertNull(provider().unavailabilityCause(tc), "transport unavailable");
            Transport t = provider().open(tc);
            assertEquals(provider().name(), t.name());
            Node node = new Node(r, t, sink, pre);
            nodes.add(node);
            opened.add(node);
        }
        return nodes;
    }

    /** The job as every rank knows it after the endpoint exchange. */
    protected static JobInfo withEndpoints(JobInfo pre, List<Node> nodes) {
        List<Map<String, byte[]>> eps = new ArrayList<>();
        for (Node n : nodes) eps.add(Map.of(n.transport().name(), n.transport().localEndpoint()));
        return new JobInfo(pre.jobId(), pre.rank(), pre.size(), pre.procIds(), pre.hosts(),
                Collections.unmodifiableList(eps), pre.secret(), pre.options());
    }

    /** Calls {@link Transport#connect} of every node, each on its own thread, and waits for all. */
    protected List<Node> connect(List<Node> nodes) throws Exception {
        List<Thread> threads = new ArrayList<>();
        Throwable[] errors = new Throwable[nodes.size()];
        for (Node n : nodes) {
            JobInfo full = withEndpoints(n.pre(), nodes);
            threads.add(Thread.ofPlatform().name("connect-" + n.rank()).start(() -> {
                try {
                    n.transport().connect(full);
                } catch (Throwable t) {
                    errors[n.rank()] = t;
                }
            }));
        }
        for (Thread t : threads) t.join();
        for (int i = 0; i < errors.length; i++) {
            if (errors[i] != null) throw new AssertionError("connect of rank " + i + " failed", errors[i]);
        }
        return nodes;
    }

    /** Progresses every transport until {@code done} holds (fails after a generous safety bound). */
    protected static void progressUntil(List<Node> nodes, BooleanSupplier done, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!done.getAsBoolean()) {
            int work = 0;
            for (Node n : nodes) work += n.transport().progress();
            if (System.nanoTime() > deadline) fail("gave up waiting for " + what);
            if (work == 0) Thread.yield();
        }
    }

    /** The payload byte {@code i} of the frame {@code sequence} from {@code sender}. */
    protected static byte pattern(int sender, long sequence, long i) {
        return (byte) (sequence * 131 + i * 7 + (i >>> 9) + sender * 17);
    }

    private static boolean patternMatches(MemorySegment payload, int sender, long seq) {
        long n = payload.byteSize();
        for (long i = 0; i < n; i++) {
            if (payload.get(ValueLayout.JAVA_BYTE, i) != pattern(sender, seq, i)) return false;
        }
        return true;
    }

    /** A payload filled with the pattern, with {@code pad} junk bytes before it. */
    private static void fillPayload(MemorySegment seg, int sender, long seq, int length, int pad) {
        seg.fill((byte) 0x5a);
        for (int i = 0; i < length; i++) seg.set(ValueLayout.JAVA_BYTE, pad + i, pattern(sender, seq, i));
    }

    private final MemorySegment header = MemorySegment.ofArray(new byte[FrameHeader.BYTES]);

    /**
     * Sends one DATA-typed frame from {@code from} to {@code to} whose payload is the pattern,
     * from heap or native memory. The payload starts at a non-zero offset of its memory (offsets
     * must be honoured), and the memory is released or overwritten as soon as send returns (the
     * transport must not need it afterwards).
     */
    protected void sendFrame(Node from, int to, int tag, long seq, int length, boolean nativeMemory)
            throws IOException {
        int pad = (int) (seq % 8) + 1;
        FrameHeader.write(header, FrameHeader.DATA, 7, from.rank(), tag, 3, length, seq, seq + 1000, 0, 0);
        if (length == 0 && seq % 2 == 0) {
            from.transport().send(to, header, null, 0, 0); // as the engine sends header-only frames
            return;
        }
        if (nativeMemory) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment p = arena.allocate(pad + length + 1, 8);
                fillPayload(p, from.rank(), seq, length, pad);
                from.transport().send(to, header, p, pad, length);
                p.fill((byte) 0); // any byte the transport still needed is now wrong
            }
        } else {
            MemorySegment p = MemorySegment.ofArray(new byte[pad + length + 1]);
            fillPayload(p, from.rank(), seq, length, pad);
            from.transport().send(to, header, p, pad, length);
            p.fill((byte) 0);
        }
        header.fill((byte) 0);
    }

    private int maxFragment(Transport t) {
        return Math.min(t.limits().maxFragmentBytes(), 512 * 1024);
    }

    /** The sender/receiver pairs a topology offers, with the job size they need. */
    private List<Node> nodesFor(Topology topology) throws Exception {
        assumeTrue(topologies().contains(topology), provider().name() + " does not support " + topology);
        return open(topology == Topology.LOOPBACK ? 1 : 2);
    }

    private static List<int[]> routes(Topology topology) {
        return topology == Topology.LOOPBACK ? List.of(new int[] {0, 0})
                : List.of(new int[] {0, 1}, new int[] {1, 0});
    }

    // ------------------------------------------------------------------ tests

    @Test
    void limitsAreSane() throws Exception {
        Transport t = openUnconnected(1, new LocalJobRuntime(1, options())).get(0).transport();
        TransportLimits l = t.limits();
        assertTrue(l.eagerLimitBytes() > 0, "eager limit");
        assertTrue(l.maxFragmentBytes() > 0, "max fragment");
        assertTrue(l.eagerLimitBytes() <= l.maxFragmentBytes(), "an eager frame fits in one fragment");
        assertNotNull(t.localEndpoint());
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void reachesExactlyTheDeclaredPeers(Topology topology) throws Exception {
        List<Node> nodes = nodesFor(topology);
        for (Node n : nodes) {
            for (Node m : nodes) {
                boolean expect = n.rank() == m.rank() ? topologies().contains(Topology.LOOPBACK)
                        : topologies().contains(Topology.PEERS);
                assertEquals(expect, n.transport().reaches(m.rank()), n.rank() + " reaches " + m.rank());
            }
            assertFalse(n.transport().reaches(nodes.size()), "reaches a rank outside the job");
        }
    }

    /** Many frames of every interesting size, heap and native payloads, arrive intact and in order. */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void framesArriveIntactAndInOrder(Topology topology) throws Exception {
        List<Node> nodes = nodesFor(topology);
        int max = maxFragment(nodes.get(0).transport());
        int[] sizes = {0, 1, FrameHeader.BYTES, FrameHeader.BYTES + 1, 1000, 4096, 65_535, 65_536, 65_537,
                max - 1, max};
        for (Memory memory : Memory.values()) {
            for (Node n : nodes) n.sink().frames.clear();
            int perRoute = 0;
            long seq = 0;
            for (int round = 0; round < 3; round++) {
                for (int size : sizes) {
                    for (int[] rt : routes(topology)) {
                        boolean nat = memory == Memory.NATIVE || (memory == Memory.MIXED && seq % 2 == 1);
                        sendFrame(nodes.get(rt[0]), rt[1], size, seq, size, nat);
                    }
                    seq++;
                    perRoute++;
                    // Let the receiver read now and then, so that both paths (direct write and
                    // backlog) are exercised.
                    if (seq % 5 == 0) for (Node n : nodes) n.transport().progress();
                }
            }
            int expected = perRoute;
            progressUntil(nodes, () -> nodes.stream().allMatch(n -> n.sink().count() >= expected),
                    "all " + expected + " frames per route (" + memory + ")");
            for (int[] rt : routes(topology)) {
                List<RecordingSink.Got> got = nodes.get(rt[1]).sink().from(rt[0]);
                assertEquals(expected, got.size(), memory + ": frames " + rt[0] + " -> " + rt[1]);
                for (int i = 0; i < got.size(); i++) {
                    RecordingSink.Got g = got.get(i);
                    assertEquals(i, g.sequence(), memory + ": frame order " + rt[0] + " -> " + rt[1]);
                    assertEquals(sizes[i % sizes.length], g.payloadLength(), memory + ": length of frame " + i);
                    assertEquals(g.payloadLength(), g.tag(), "header fields intact");
                    assertEquals(FrameHeader.DATA, g.type());
                    assertTrue(g.intact(), memory + ": payload of frame " + i + " (" + g.payloadLength() + " bytes)");
                }
            }
            for (Node n : nodes) {
                for (Node m : nodes) {
                    if (n.transport().reaches(m.rank())) assertEquals(0, n.transport().backlogBytes(m.rank()));
                }
                assertTrue(n.sink().lost(0).isEmpty() && n.sink().lost(1).isEmpty(), "no peer lost");
            }
        }
    }

    /** Several senders write to one receiver at once; each sender's frames stay in order. */
    @Test
    void framesFromSeveralSendersInterleave() throws Exception {
        assumeTrue(topologies().contains(Topology.PEERS), provider().name() + " does not support PEERS");
        List<Node> nodes = open(4);
        int perSender = 120;
        int[] sizes = {0, 17, 3000, 70_000, maxFragment(nodes.get(0).transport())};
        for (int i = 0; i < perSender; i++) {
            for (int s = 1; s < nodes.size(); s++) {
                sendFrame(nodes.get(s), 0, s, i, sizes[(i + s) % sizes.length], (i + s) % 2 == 0);
                // The senders also talk among themselves, so that the receiver's traffic shares
                // connections' progress with unrelated frames.
                sendFrame(nodes.get(s), 1 + s % (nodes.size() - 1), s, i, 5, false);
            }
            if (i % 7 == 0) nodes.get(0).transport().progress();
        }
        int total = perSender * (nodes.size() - 1);
        progressUntil(nodes, () -> nodes.get(0).sink().count() >= total, total + " frames at rank 0");
        for (int s = 1; s < nodes.size(); s++) {
            List<RecordingSink.Got> got = nodes.get(0).sink().from(s);
            assertEquals(perSender, got.size(), "frames from " + s);
            for (int i = 0; i < perSender; i++) {
                assertEquals(i, got.get(i).sequence(), "order of frames from " + s);
                assertEquals(s, got.get(i).tag());
                assertTrue(got.get(i).intact(), "payload of frame " + i + " from " + s);
            }
        }
        for (int s = 1; s < nodes.size(); s++) {
            Node side = nodes.get(s);
            int want = perSender * countSendersTo(s, nodes.size());
            progressUntil(nodes, () -> side.sink().count() >= want, "side traffic to rank " + side.rank());
            assertTrue(side.sink().frames().stream().allMatch(RecordingSink.Got::intact), "side traffic intact");
        }
    }

    private static int countSendersTo(int rank, int size) {
        int c = 0;
        for (int s = 1; s < size; s++) if (1 + s % (size - 1) == rank) c++;
        return c;
    }

    /**
     * The receiver does not read while the sender writes far more than the socket buffers hold;
     * every send still returns, and once both progress every frame arrives, in order.
     */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void backlogIsFlushedWhenTheReceiverCatchesUp(Topology topology) throws Exception {
        List<Node> nodes = nodesFor(topology);
        int[] rt = routes(topology).get(0);
        Node from = nodes.get(rt[0]);
        Node to = nodes.get(rt[1]);
        int frag = maxFragment(from.transport());
        long seq = 0;
        long maxBacklog = 0;
        int extra = 0;
        // Write until the transport had to keep bytes back, then some more (bounded either way).
        while (seq < 1024 && extra < 24) {
            int size = seq % 3 == 2 ? 100 : frag;
            sendFrame(from, to.rank(), 1, seq++, size, seq % 2 == 0);
            if (topology == Topology.PEERS) from.transport().progress(); // sender-side progress only
            maxBacklog = Math.max(maxBacklog, from.transport().backlogBytes(to.rank()));
            if (maxBacklog > 0 || seq >= 48) extra++;
        }
        if (buffersBacklog()) {
            assertTrue(maxBacklog > 0, "the transport kept bytes back while the receiver did not read");
        }
        long expected = seq;
        progressUntil(nodes, () -> to.sink().count() >= expected, expected + " frames after backlog");
        List<RecordingSink.Got> got = to.sink().from(from.rank());
        assertEquals(expected, got.size());
        for (int i = 0; i < got.size(); i++) {
            assertEquals(i, got.get(i).sequence(), "order after backlog");
            assertTrue(got.get(i).intact(), "payload of frame " + i + " after backlog");
        }
        assertEquals(0, from.transport().backlogBytes(to.rank()), "backlog drained");
    }

    /** A peer that closes is reported once through onPeerLost; sending to it then fails. */
    @Test
    void peerCloseIsReportedAndLaterSendsFail() throws Exception {
        assumeTrue(topologies().contains(Topology.PEERS), provider().name() + " does not support PEERS");
        List<Node> nodes = open(3);
        Node a = nodes.get(0);
        Node b = nodes.get(1);
        Node c = nodes.get(2);
        sendFrame(b, 0, 1, 0, 10, false);
        progressUntil(nodes, () -> a.sink().count() == 1, "first frame");
        b.transport().close();
        List<Node> survivors = List.of(a, c);
        progressUntil(survivors, () -> !a.sink().lost(1).isEmpty() && !c.sink().lost(1).isEmpty(),
                "onPeerLost(1) at ranks 0 and 2");
        for (Node n : survivors) {
            IOException e = assertThrows(IOException.class, () -> sendFrame(n, 1, 1, 1, 10, false),
                    "send to a lost peer");
            assertNotNull(e.getMessage());
        }
        // The survivors still talk to each other, and the loss is reported only once.
        sendFrame(a, 2, 2, 0, 5000, true);
        sendFrame(c, 0, 2, 0, 5000, false);
        progressUntil(survivors, () -> a.sink().from(2).size() == 1 && c.sink().from(0).size() == 1,
                "survivor traffic");
        assertTrue(a.sink().from(2).get(0).intact() && c.sink().from(0).get(0).intact());
        assertEquals(1, a.sink().lost(1).size(), "onPeerLost once");
        assertEquals(1, c.sink().lost(1).size(), "onPeerLost once");
        assertTrue(a.sink().lost(2).isEmpty() && c.sink().lost(0).isEmpty(), "no survivor reported lost");
    }

    /** A frame with a bad version drops the connection; both sides hear onPeerLost. */
    @Test
    void corruptFrameDropsTheConnection() throws Exception {
        assumeTrue(topologies().contains(Topology.PEERS), provider().name() + " does not support PEERS");
        List<Node> nodes = open(2);
        Node a = nodes.get(0);
        Node b = nodes.get(1);
        sendFrame(b, 0, 1, 0, 100, false);
        FrameHeader.write(header, FrameHeader.EAGER, 7, 1, 1, 3, 0, 1, 0, 0, 0);
        header.set(ValueLayout.JAVA_BYTE, FrameHeader.VERSION_OFFSET, (byte) (org.ftmpi.Version.WIRE + 40));
        b.transport().send(0, header, null, 0, 0);
        sendFrame(b, 0, 1, 2, 100, false);
        progressUntil(nodes, () -> !a.sink().lost(1).isEmpty(), "onPeerLost(1) at the receiver");
        progressUntil(nodes, () -> !b.sink().lost(0).isEmpty(), "onPeerLost(0) at the sender");
        List<RecordingSink.Got> got = a.sink().from(1);
        assertEquals(1, got.size(), "only the frame before the corrupt one is delivered");
        assertTrue(got.get(0).intact());
        assertThrows(IOException.class, () -> sendFrame(a, 1, 1, 0, 10, false));
        assertThrows(IOException.class, () -> sendFrame(b, 0, 1, 3, 10, true));
        for (int i = 0; i < 10; i++) for (Node n : nodes) n.transport().progress();
        assertEquals(1, a.sink().lost(1).size(), "onPeerLost once");
        assertEquals(1, b.sink().lost(0).size(), "onPeerLost once");
    }
}
