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
 * <p>Who does the work: an application thread that waits in an MPI call polls anyway, so the
 * engine calls {@link #pollFromWaiter} from its idle loop, and when a beat or a deadline is due
 * that thread reads the datagrams that arrived, sends the beat and checks the deadline (a round:
 * 0.1-0.3 ms once a period, mostly cold caches and the kernel's UDP path). While threads wait in
 * MPI, the detector thread sleeps for {@link #handoffNs(long, long)} at a time and is not woken
 * by datagrams; when no thread waited in MPI for more than a period (the application computes,
 * or sleeps), it takes the rounds back. Why: on this project's 2-vCPU VMs a timed wake-up of a
 * thread costs 85-130 us of CPU however little it does, on top of the round, and on a host with
 * as many busy ranks as cores every wake-up preempts a rank (docs/benchmarks.md, "Issue 7,
 * session 11").
 *
 * <p><b>Note:</b> thread-safe. One daemon thread {@code ftmpi-detector} (maximum priority);
 * whoever holds {@link #duty} (that thread or a waiting application thread) reads the socket and
 * drives the core; sends from any thread synchronize on the codec.
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
    /** Held by the thread that reads the socket and drives the core now (never two at once). */
    private final java.util.concurrent.atomic.AtomicBoolean duty = new java.util.concurrent.atomic.AtomicBoolean();
    /** The receive buffer, used under {@link #duty}. */
    private final byte[] rxBuf = new byte[DetectCodec.MAX_DATAGRAM];
    private final ByteBuffer rxBb = ByteBuffer.wrap(rxBuf);
    /** When the core wants to be driven next ({@link DetectorCore#nextDueNs}); Long.MAX_VALUE before start. */
    private volatile long dueNs = Long.MAX_VALUE;
    /** When a waiting application thread last called {@link #pollFromWaiter}; 0: never. */
    private volatile long waiterPollNs;
    private long periodNs;
    private long handoffNs;
    /** Rounds driven by waiting application threads, and the time they spent in them (ns). */
    private volatile long waiterRounds, waiterWorkNs;
    /** Rounds the detector thread did itself. */
    private volatile long threadRounds;
    /** This host's heartbeat board, or null (datagrams only). */
    private HeartbeatBoard board;
    private int me;
    private long[] procIds;
    /** Whether a rank runs on this process's host (never this process itself). */
    private boolean[] sameHost;
    /** Whether the job has ranks on other hosts (their datagrams come without mail on the board). */
    private boolean multiHost;
    /** The latest board beat of each rank taken in (under {@link #duty}). */
    private long[] lastBoardBeat;
    /** The mail count of this rank's board slot at the last drain of the socket (under {@link #duty}). */
    private long drainedMail = -1;
    /** Heartbeats to same-host successors so far, and those of them written to the board (under the codec's lock). */
    private long boardBeats;
    private volatile long boardBeatsWritten;
    /**
     * Every this many beats a same-host successor gets a datagram instead of a board beat: it
     * carries the failed set (anti-entropy) and lets a process that was declared failed while
     * stopped hear FENCED when it wakes up. A beat with a non-empty failed set always goes as a
     * datagram.
     */
    static final int DATAGRAM_EVERY = 8;

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
    public void start(long jobId, byte[] secret, int me, long[] procIds, String[] hosts,
                      InetSocketAddress[] peers, long periodMs, long timeoutMs, Owner owner) {
        start(jobId, secret, me, procIds, hosts, peers, periodMs, timeoutMs, null, owner);
    }

    /**
     * Starts beating and observing; with {@code boardDir} (the job's shared-memory directory),
     * ranks of the same host beat through the {@link HeartbeatBoard} there instead of datagrams.
     *
     * @param peers detector endpoint of every rank (index = rank)
     * @param boardDir where the host's heartbeat board is (or is made), or null for datagrams only
     */
    public synchronized void start(long jobId, byte[] secret, int me, long[] procIds, String[] hosts,
                                   InetSocketAddress[] peers, long periodMs, long timeoutMs,
                                   java.nio.file.Path boardDir, Owner owner) {
        if (thread != null) throw new IllegalStateException("already started");
        this.me = me;
        this.procIds = procIds.clone();
        this.sameHost = new boolean[procIds.length];
        boolean neighbours = false;
        for (int r = 0; r < procIds.length; r++) {
            sameHost[r] = r != me && hosts[r] != null && hosts[r].equals(hosts[me]);
            neighbours |= sameHost[r];
            multiHost |= hosts[r] == null || !hosts[r].equals(hosts[me]);
        }
        this.lastBoardBeat = new long[procIds.length];
        if (boardDir != null && neighbours) { // a rank alone on its host has nobody to share a board with
            try {
                board = HeartbeatBoard.open(HeartbeatBoard.file(boardDir, jobId), procIds.length, me, procIds[me]);
            } catch (IOException | RuntimeException e) {
                System.err.println("ftmpi: warning: rank " + me + ": no heartbeat board in " + boardDir + " ("
                        + e.getMessage() + "): beats to ranks of this host go as datagrams");
            }
        }
        this.codec = new DetectCodec(jobId, secret);
        this.sendBuf = ByteBuffer.allocate(DetectCodec.MAX_DATAGRAM);
        this.peers = peers.clone();
        // The thread wakes when the next beat or deadline is due, and for a datagram (about 20
        // times a second at a 50 ms period: the ring's beats fall into step), unless waiting
        // application threads drive the core; then it wakes once per hand-off period.
        long tickMs = Math.max(1, periodMs);
        this.periodNs = TimeUnit.MILLISECONDS.toNanos(tickMs);
        this.handoffNs = handoffNs(periodNs, TimeUnit.MILLISECONDS.toNanos(timeoutMs));
        // the longest gap between two rounds when nothing stalls: a hand-off and a period
        long tickNs = handoffNs + periodNs;
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
        dueNs = core.nextDueNs();
        thread = new Thread(() -> {
            warmUp(WARM_UP_ROUNDS);
            loop(tickMs);
        }, "ftmpi-detector");
        thread.setDaemon(true);
        thread.setPriority(Thread.MAX_PRIORITY);
        thread.start();
        current = this;
    }

    /** Rounds of {@link #warmUp} when the detector thread starts. */
    static final int WARM_UP_ROUNDS = 3_000;

    /**
     * Runs the code of a round that makes no system call (a board beat taken in, the core's
     * receive, tick and beat) {@code rounds} times on a throw-away core and board, so that the JIT
     * compiles it now: at 20 rounds a second it would run interpreted for the first minutes of a
     * job, 50-140 us a round instead of a few (docs/benchmarks.md, "Issue 7, session 11"). About
     * 20-40 ms of this thread's CPU, while the ranks still start up; datagrams (MAC, socket) are
     * not warmed: with a board, 1 beat in {@link #DATAGRAM_EVERY} is one.
     */
    static void warmUp(int rounds) {
        long[] ids = {1, 2, 3};
        HeartbeatBoard b = HeartbeatBoard.onHeap(ids.length);
        long seq = 0;
        DetectorCore c = new DetectorCore(0, ids, RingPlan.of(0, new String[] {"w", "w", "w"}), 1_000_000L,
                1_000_000_000L, 1_000_000L, new DetectorCore.Actions() {
                    @Override
                    public void send(int toRank, DetectMessage m) {
                        b.beat(0, m.seq());
                    }

                    @Override
                    public void declared(int rank, long procId, String how, boolean detectedHere) {
                    }

                    @Override
                    public void fenced(String why) {
                    }
                });
        long t = System.nanoTime();
        c.start(t, 0);
        for (int i = 0; i < rounds; i++) {
            t += 1_000_000L;
            int p = c.observed();
            b.beat(p, ++seq);
            b.mailOf(0);
            long beat = b.beatOf(p);
            if (b.procId(p) == 0) c.receive(DetectMessage.heartbeat(p, ids[p], beat, new java.util.BitSet()), t);
            c.tick(t);
            c.nextDueNs();
        }
    }

    /**
     * How long the detector thread sleeps while waiting application threads drive the core: an
     * eighth of the timeout, at least a period. It bounds how late the thread takes the work back
     * when the application stops calling MPI (its beats are then at most this much later than
     * usual, far inside the timeout), and how late a computing process acts on a datagram that
     * arrived meanwhile.
     */
    static long handoffNs(long periodNs, long timeoutNs) {
        return Math.max(periodNs, timeoutNs / 8);
    }

    /**
     * Called by an application thread that waits in an MPI call, between two polls of the
     * transports (Engine's idle loop): when a beat or a deadline is due, this thread does the
     * detector's round (reads the datagrams that arrived, sends the beat, checks the deadline),
     * so that the detector thread need not wake for it. Costs a clock read when nothing is due.
     * Never blocks: returns at once while another thread does a round.
     */
    public void pollFromWaiter() {
        long now = System.nanoTime();
        waiterPollNs = now == 0 ? 1 : now;
        if (now - dueNs < 0 || paused || closed) return;
        // an NIO operation by a thread with its interrupt status set could close the channel
        if (Thread.currentThread().isInterrupted() || !duty.compareAndSet(false, true)) return;
        try {
            round(false);
            long end = System.nanoTime();
            waiterRounds++;
            waiterWorkNs += end - now;
        } finally {
            duty.set(false);
        }
    }

    /**
     * For {@code bench ft-overhead paired}: the rounds that waiting application threads of this
     * process did for the detector, and the nanoseconds they spent in them; {0, 0} without a detector.
     */
    public static long[] waiterWork() {
        HeartbeatDetector d = current;
        return d == null ? new long[2] : new long[] {d.waiterRounds, d.waiterWorkNs};
    }

    /**
     * Whether application threads wait in MPI calls, so that one of them will do the next round
     * when it is due: one called {@link #pollFromWaiter} within the last period.
     */
    private boolean waitersDrive(long now) {
        long p = waiterPollNs;
        return p != 0 && now - p < periodNs;
    }

    /**
     * One round, by the holder of {@link #duty}: every datagram that arrived (also during a
     * pause of this process) before the tick, then the tick.
     */
    private void round(boolean byThread) {
        HeartbeatBoard b = board;
        long mail = b == null ? 0 : b.mailOf(me);
        // Without a datagram announced on the board, a waiting thread's round makes no system
        // call: on one host every datagram is announced; a detector thread awake anyway drains.
        if (b == null || byThread || multiHost || mail != drainedMail) {
            drainedMail = mail;
            drain();
        }
        if (b != null) {
            int p = core.observed();
            if (p >= 0 && sameHost[p]) {
                long beat = b.beatOf(p);
                if (beat > lastBoardBeat[p] && b.procId(p) == procIds[p]) {
                    lastBoardBeat[p] = beat;
                    core.receive(DetectMessage.heartbeat(p, procIds[p], beat, new java.util.BitSet()), System.nanoTime());
                }
            }
        }
        core.tick(System.nanoTime());
        long due = core.nextDueNs(), t = System.nanoTime();
        // nothing due ahead (leaving, or fenced): look again a period later, not at every poll
        dueNs = due - t > 0 ? due : t + periodNs;
    }

    /** Reads every datagram that arrived (also during a pause of this process) into the core. */
    private void drain() {
        DetectCodec rx = codec;
        try {
            while (true) {
                rxBb.clear();
                if (socket.receive(rxBb) == null) break;
                DetectMessage m;
                synchronized (rx) {
                    m = rx.decode(rxBuf, rxBb.position());
                }
                if (m != null) core.receive(m, System.nanoTime());
            }
        } catch (IOException e) {
            // closed (the loop ends), or a transient receive error such as ICMP port unreachable
        }
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
        return c == null ? "not started" : c.counters() + ", rounds by waiting threads " + waiterRounds
                + ", by the detector thread " + threadRounds + ", board beats " + boardBeatsWritten;
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
        while (!closed) {
            if (paused) {
                LockSupport.park(this); // until pauseForBenchmark(false) or close
                continue;
            }
            long now = System.nanoTime();
            if (waitersDrive(now)) {
                // not woken by datagrams: a waiting thread reads them when its round is due
                LockSupport.parkNanos(this, handoffNs);
                continue;
            }
            long untilDue = dueNs - now;
            try {
                if (untilDue <= 0) {
                    selector.selectNow();
                } else {
                    // rounded up: a wait that ends before the beat is due is a wake-up for nothing
                    selector.select(Math.min(tickMs, ceilMs(untilDue)));
                }
                selector.selectedKeys().clear();
            } catch (java.nio.channels.ClosedSelectorException e) {
                return;
            } catch (IOException e) {
                if (closed) return;
            }
            if (closed) return;
            if (duty.compareAndSet(false, true)) {
                try {
                    round(true);
                    threadRounds++;
                } finally {
                    duty.set(false);
                }
            }
        }
    }

    /** {@code ns} in milliseconds, rounded up. */
    static long ceilMs(long ns) {
        return ns <= 0 ? 0 : (ns + 999_999) / 1_000_000;
    }

    private void sendTo(int rank, DetectMessage m) {
        InetSocketAddress to = peers[rank];
        if (to == null || closed) return;
        HeartbeatBoard bd = sameHost[rank] ? board : null;
        synchronized (codec) {
            if (bd != null && m.type() == DetectMessage.HEARTBEAT && m.failed().isEmpty()
                    && ++boardBeats % DATAGRAM_EVERY != 0) {
                bd.beat(me, m.seq()); // no system call, no MAC
                boardBeatsWritten++;
                return;
            }
            ByteBuffer b = codec.encode(m, sendBuf);
            try {
                socket.send(ByteBuffer.wrap(b.array(), 0, b.limit()), to); // 0 when the buffer is full: lost
            } catch (IOException e) {
                // lost datagram: heartbeats and the failed-set piggyback tolerate losses
            }
            if (bd != null) bd.mail(rank); // after the send: on one host the datagram is queued by now
        }
    }
}
