package org.ftmpi.ft.detect;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The detector of one rank process: a {@link DetectorCore} driven over a dedicated UDP socket
 * (never the MPI traffic path), every datagram authenticated by {@link DetectCodec}.
 *
 * <p>Life cycle: {@link #open} before the endpoint exchange (its {@link #endpoint()} is
 * published with the rank's other endpoints), {@link #start} once the table is known,
 * {@link #finalizeDone()}, {@link #close()}.
 *
 * <p><b>Note:</b> thread-safe. One daemon thread {@code ftmpi-detector} (maximum priority)
 * owns the socket's receive side and the codec; sends from other threads synchronize on the codec.
 */
public final class HeartbeatDetector implements AutoCloseable {
    /** Key of the detector's endpoint in the exchanged endpoint maps. */
    public static final String ENDPOINT_KEY = "ft-detect";
    /** Defaults of ftmpirun --hb-period / --hb-timeout. */
    public static final long DEFAULT_PERIOD_MS = 50;
    public static final long DEFAULT_TIMEOUT_MS = 2_000;

    /** The rank runtime's side. Called on the detector thread; must not block. */
    public interface Owner {
        /** See {@link DetectorCore.Actions#declared}. */
        void declared(int rank, long procId, String how, boolean detectedHere);

        /** See {@link DetectorCore.Actions#fenced}. */
        void fenced(String why);
    }

    /**
     * Non-blocking, with a selector: the detector thread waits in {@code select(timeout)}, so a
     * tick without traffic costs no exception (a timed {@code DatagramSocket.receive} throws
     * {@code SocketTimeoutException} at every tick).
     */
    private final DatagramChannel socket;
    private final Selector selector;
    private volatile boolean closed;
    /** Set by {@link #pauseForBenchmark}: the thread sends, reads and checks nothing while set. */
    private volatile boolean paused;
    /** The detector this process started last (one per rank process), for {@link #pauseForBenchmark}. */
    private static volatile HeartbeatDetector current;
    private DetectorCore core;
    private DetectCodec codec;
    private InetSocketAddress[] peers;
    private ByteBuffer sendBuf;
    private Thread thread;

    private HeartbeatDetector(DatagramChannel socket, Selector selector) {
        this.socket = socket;
        this.selector = selector;
    }

    /** Binds the detector's socket on {@code bind}, any port. */
    public static HeartbeatDetector open(InetAddress bind) throws IOException {
        DatagramChannel s = DatagramChannel.open();
        try {
            s.setOption(StandardSocketOptions.SO_RCVBUF, 1 << 18);
            s.bind(new InetSocketAddress(bind, 0));
            s.configureBlocking(false);
            Selector sel = Selector.open();
            s.register(sel, SelectionKey.OP_READ);
            return new HeartbeatDetector(s, sel);
        } catch (IOException e) {
            s.close();
            throw e;
        }
    }

    /** The endpoint to publish: u8 address length, address bytes, u16 port. */
    public byte[] endpoint() {
        InetSocketAddress local;
        try {
            local = (InetSocketAddress) socket.getLocalAddress();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        byte[] a = local.getAddress().getAddress();
        return ByteBuffer.allocate(1 + a.length + 2).put((byte) a.length).put(a)
                .putShort((short) local.getPort()).array();
    }

    public static InetSocketAddress decodeEndpoint(byte[] ep) throws IOException {
        if (ep == null || ep.length < 1 || ep.length != 1 + (ep[0] & 0xff) + 2) {
            throw new IOException("bad detector endpoint");
        }
        ByteBuffer b = ByteBuffer.wrap(ep);
        byte[] a = new byte[b.get() & 0xff];
        b.get(a);
        return new InetSocketAddress(InetAddress.getByAddress(a), b.getShort() & 0xffff);
    }

    /**
     * Starts beating and observing.
     *
     * @param peers detector endpoint of every rank (index = rank)
     */
    public synchronized void start(long jobId, byte[] secret, int me, long[] procIds, String[] hosts,
                                   InetSocketAddress[] peers, long periodMs, long timeoutMs,
                                   Owner owner) {
        if (thread != null) throw new IllegalStateException("already started");
        this.codec = new DetectCodec(jobId, secret);
        this.sendBuf = ByteBuffer.allocate(DetectCodec.MAX_DATAGRAM);
        this.peers = peers.clone();
        // The thread wakes when the next beat or deadline is due, and for a datagram: at a 50 ms
        // period about 40 times a second (its own beats and its predecessor's), no more, since
        // on a machine with as many busy ranks as cores every wake-up preempts a rank.
        long tickMs = Math.max(1, periodMs);
        long tickNs = TimeUnit.MILLISECONDS.toNanos(tickMs);
        DetectorCore.Actions actions = new DetectorCore.Actions() {
            @Override
            public void send(int toRank, DetectMessage m) {
                sendTo(toRank, m);
            }

            @Override
            public void declared(int rank, long procId, String how, boolean detectedHere) {
                owner.declared(rank, procId, how, detectedHere);
            }

            @Override
            public void fenced(String why) {
                owner.fenced(why);
            }
        };
        core = new DetectorCore(me, procIds, RingPlan.of(jobId, hosts),
                TimeUnit.MILLISECONDS.toNanos(periodMs), TimeUnit.MILLISECONDS.toNanos(timeoutMs), tickNs, actions);
        core.start(System.nanoTime(), TimeUnit.MILLISECONDS.toNanos(Math.max(timeoutMs, 1_000)));
        thread = new Thread(() -> loop(tickMs), "ftmpi-detector");
        thread.setDaemon(true);
        thread.setPriority(Thread.MAX_PRIORITY);
        thread.start();
        current = this;
    }

    /**
     * Pauses ({@code true}) or resumes ({@code false}) this process's detector thread; returns
     * whether this process runs a detector. For the fault-free overhead benchmark only
     * ({@code bench ft-overhead paired}, docs/benchmarks.md), which measures the same job's
     * communication with the detector running and paused, in alternating blocks. Every rank
     * pauses right after the same barrier, for blocks far shorter than the timeout: a paused
     * thread sends no beat and checks no deadline, and on resuming it counts the pause as a stall
     * of its own process (the deadline moves by the gap), so no peer is blamed for it. A rank
     * whose peers stay paused longer than the timeout after it resumed would declare them failed.
     */
    public static boolean pauseForBenchmark(boolean pause) {
        HeartbeatDetector d = current;
        if (d == null || d.closed) return false;
        d.pause(pause);
        return true;
    }

    /** {@link #pauseForBenchmark} for this detector (started). */
    void pause(boolean pause) {
        paused = pause;
        if (!pause) LockSupport.unpark(thread);
    }

    /** A failure the controller announced; returns whether it was new to this process. */
    public boolean notice(int rank, long procId, String how) {
        DetectorCore c = core;
        return c != null && c.notice(rank, procId, how, System.nanoTime());
    }

    /** Whether the detector runs (it does after {@link #start}). */
    public boolean started() {
        return core != null;
    }

    public void finalizeDone() {
        DetectorCore c = core;
        if (c != null) c.finalizeDone();
    }

    public String counters() {
        DetectorCore c = core;
        return c == null ? "not started" : c.counters();
    }

    /** Says BYE to the observer and closes the socket. */
    @Override
    public void close() {
        DetectorCore c = core;
        if (c != null) c.leave();
        closeSilently();
    }

    /** Stops the thread and closes the socket without BYE: to the others, as a hang (tests). */
    void closeSilently() {
        closed = true;
        if (current == this) current = null;
        Thread t = thread;
        if (t != null) LockSupport.unpark(t);
        try {
            selector.close(); // wakes the detector thread up
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    private void loop(long tickMs) {
        byte[] buf = new byte[DetectCodec.MAX_DATAGRAM];
        ByteBuffer bb = ByteBuffer.wrap(buf);
        DetectCodec rx = codec;
        while (!closed) {
            if (paused) {
                LockSupport.park(this); // until pauseForBenchmark(false) or close
                continue;
            }
            long now = System.nanoTime();
            // rounded up: a wait that ends before the beat is due is a wake-up for nothing
            long waitMs = Math.max(1, Math.min(tickMs, ceilMs(core.nextDueNs() - now)));
            try {
                if (selector.select(waitMs) > 0) selector.selectedKeys().clear();
                // every datagram that arrived (also during a pause of this process) before the tick
                while (true) {
                    bb.clear();
                    if (socket.receive(bb) == null) break;
                    DetectMessage m;
                    synchronized (rx) {
                        m = rx.decode(buf, bb.position());
                    }
                    if (m != null) core.receive(m, System.nanoTime());
                }
            } catch (java.nio.channels.ClosedSelectorException | java.nio.channels.ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (closed) return;
                // a transient receive error (e.g. ICMP port unreachable): keep going
            }
            core.tick(System.nanoTime());
        }
    }

    /** {@code ns} in milliseconds, rounded up. */
    static long ceilMs(long ns) {
        return ns <= 0 ? 0 : (ns + 999_999) / 1_000_000;
    }

    private void sendTo(int rank, DetectMessage m) {
        InetSocketAddress to = peers[rank];
        if (to == null || closed) return;
        synchronized (codec) {
            ByteBuffer b = codec.encode(m, sendBuf);
            try {
                socket.send(ByteBuffer.wrap(b.array(), 0, b.limit()), to); // 0 when the buffer is full: lost
            } catch (IOException e) {
                // lost datagram: heartbeats and the failed-set piggyback tolerate losses
            }
        }
    }
}
