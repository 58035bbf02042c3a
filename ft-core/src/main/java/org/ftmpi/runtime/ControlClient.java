package org.ftmpi.runtime;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;

import org.ftmpi.ft.detect.HeartbeatDetector;
import org.ftmpi.runtime.wire.Auth;
import org.ftmpi.runtime.wire.Frame;
import org.ftmpi.runtime.wire.FrameCodec;
import org.ftmpi.runtime.wire.FrameException;
import org.ftmpi.runtime.wire.FrameType;

/**
 * The rank side of the control connection to the ftmpirun job controller.
 *
 * <p>It also runs this process's heartbeat detector ({@link HeartbeatDetector}, job options
 * {@code hb-period}/{@code hb-timeout} in milliseconds; period 0 disables it) and delivers every
 * failure to the listener exactly once per rank, whether the controller announced it or the
 * detector ring declared it. A failure this process's detector declared is reported to the
 * controller (FAILURE_REPORT), which fences the process and tells everybody; the detector's own
 * broadcast reaches the survivors even when the controller is gone.
 *
 * <p><b>Note:</b> thread-safe. One daemon thread named {@code ftmpi-control} reads the
 * connection and runs the {@link ControlListener} callbacks for the controller's notices;
 * failures declared by the detector are delivered on the daemon thread {@code ftmpi-notify}
 * (so the detector never waits for the engine); callers' threads write frames under
 * the stream's monitor ({@link #out}: a warm spare's beat thread writes on the same stream).
 */
public final class ControlClient implements RankRuntime {
    private static final int CONNECT_TIMEOUT_MS = 30_000;
    /**
     * Job option: the controller and every rank print, on stderr, the {@link System#nanoTime}
     * (CLOCK_MONOTONIC, comparable between the processes of one host) of each step of a failure
     * notice: death seen, notices sent, notice read by each survivor and handed to its engine.
     */
    static final String DEATH_TRACE = "death-trace";
    /**
     * Job option of a REBUILD replacement (and warm spare), in ms: it sends BEAT on the control
     * connection this often once it has its table, since it takes no part in the heartbeat ring;
     * the controller declares it failed when nothing arrived for hb-timeout. Absent or 0: none.
     */
    static final String HB_CONTROL = "hb-control";

    /**
     * The period of a replacement's beats for ring period {@code periodMs} and timeout
     * {@code timeoutMs}: TCP loses nothing, so four beats per timeout suffice (each timed
     * wake-up costs about 0.1 ms of CPU on this project's VMs), and never more often than the ring.
     */
    static long controlBeatMs(long periodMs, long timeoutMs) {
        return Math.max(periodMs, timeoutMs / 4);
    }

    private final JobInfo preliminary;
    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private final CompletableFuture<JobInfo> table = new CompletableFuture<>();
    private final CompletableFuture<Void> finalizeDone = new CompletableFuture<>();
    private final AtomicBoolean exchangeCalled = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile boolean controllerGone;
    private volatile ControlListener listener;
    /**
     * Processes (procIds) whose failure was delivered to the listener (guarded by itself); by
     * process, not rank: a replacement of a failed rank can fail too (comm-mode rebuild).
     */
    private final java.util.Set<Long> delivered = new java.util.HashSet<>();
    private final ExecutorService notifier = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "ftmpi-notify");
        t.setDaemon(true);
        return t;
    });
    private volatile HeartbeatDetector detector;
    private volatile java.util.function.Consumer<String> fenceAction = ControlClient::halt;
    /** Job option {@code death-trace=true}: each failure notice prints when it arrived (System.nanoTime). */
    private final boolean deathTrace;

    /**
     * Connects to the controller and authenticates.
     *
     * @param preliminary this rank's identity (rank, size, job id, own procId and host, secret,
     *                    options)
     */
    public ControlClient(JobInfo preliminary, String host, int port) throws IOException {
        this(preliminary, connect(preliminary.secret(), host, port), false);
    }

    /**
     * Over a control connection that is already made and authenticated: a warm spare makes the
     * one of the rank it may become while it waits (see {@link Spare}), so that its MPI_Init
     * after a takeover does not connect and authenticate on the recovery's critical path.
     */
    ControlClient(JobInfo preliminary, Connection c, boolean registered) {
        this.preliminary = preliminary;
        this.deathTrace = "true".equals(preliminary.options().get(DEATH_TRACE));
        this.registered = registered;
        socket = c.socket();
        in = c.in();
        out = c.out();
        org.ftmpi.p2p.FtTrace.early(org.ftmpi.p2p.FtTrace.CONTROL, preliminary.rank());
        reader = new Thread(this::readLoop, "ftmpi-control");
        reader.setDaemon(true);
        // Registered already (a warm spare, at its assignment): frames may be waiting that need
        // the listener (REPLACED, PROCESS_FAILED), so reading starts when it is set.
        if (!registered) startReading();
    }

    /** A warm spare registered this rank on the connection at its assignment: exchange() only waits for the table. */
    private final boolean registered;
    private final Thread reader;
    private final AtomicBoolean reading = new AtomicBoolean();

    private void startReading() {
        if (reading.compareAndSet(false, true)) reader.start();
    }

    @Override
    public JobInfo preliminaryInfo() {
        return preliminary;
    }

    @Override
    public JobInfo exchange(Map<String, byte[]> myEndpoints) throws IOException {
        if (!exchangeCalled.compareAndSet(false, true)) {
            throw new IllegalStateException("exchange() may be called only once");
        }
        JobInfo p = preliminary;
        Map<String, byte[]> eps = new LinkedHashMap<>(myEndpoints);
        if (heartbeatPeriodMs(p) > 0) {
            HeartbeatDetector d = HeartbeatDetector.open(socket.getLocalAddress());
            detector = d;
            eps.put(HeartbeatDetector.ENDPOINT_KEY, d.endpoint());
        }
        if (registered) {
            startReading();
        } else {
            DeathWatch.awaitHeld(); // the controller starts watching at REGISTER
            send(ControlMessages.register(new ControlMessages.Register(p.rank(), p.procIds()[p.rank()],
                    p.hosts()[p.rank()], Map.copyOf(eps))));
        }
        try {
            JobInfo info = table.get();
            long beatMs = Long.parseLong(p.option(HB_CONTROL, "0"));
            if (!registered) { // a warm spare beats on this connection since its assignment (Spare)
                startBeats("ftmpi-control-beat", out, beatMs, () -> closed.get() || controllerGone);
            }
            return info;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for the endpoint exchange");
        } catch (ExecutionException e) {
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        }
    }

    @Override
    public void setListener(ControlListener l) {
        listener = l;
        if (registered) startReading();
    }

    @Override
    public void abort(int exitCode, String reason) {
        try {
            send(ControlMessages.abort(FrameType.ABORT_REQUEST,
                    new ControlMessages.Abort(exitCode, reason == null ? "" : reason)));
        } catch (IOException e) {
            System.err.println("ftmpi: rank " + preliminary.rank() + " called MPI_Abort with code "
                    + exitCode + ": " + reason + " (job controller unreachable; exiting)");
            System.err.flush();
            System.exit(exitCode);
        }
    }

    @Override
    public void finalizeBarrier() throws IOException {
        if (controllerGone) {
            return;
        }
        try {
            send(Frame.of(FrameType.FINALIZE));
        } catch (IOException e) {
            return; // controller gone: nobody to wait for
        }
        try {
            finalizeDone.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted in the finalize barrier");
        } catch (ExecutionException e) {
            throw new IOException(e.getCause());
        }
    }

    @Override
    public void close() {
        HeartbeatDetector d = detector;
        if (d != null) {
            d.close();
        }
        if (closed.compareAndSet(false, true)) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    /**
     * A replacement's or warm spare's beats ({@link #HB_CONTROL}): BEAT on {@code out}, written
     * under its monitor, every {@code periodMs} until {@code stop} or a failed write (the
     * controller is gone; the reader says so).
     */
    private static void beat(DataOutputStream out, long periodMs, java.util.function.BooleanSupplier stop) {
        Frame f = Frame.of(FrameType.BEAT);
        while (!stop.getAsBoolean()) {
            try {
                synchronized (out) {
                    FrameCodec.write(out, f);
                }
            } catch (IOException e) {
                return;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(periodMs * 1_000_000L);
        }
    }

    /** Starts {@link #beat} on daemon thread {@code name} when {@code periodMs} > 0 (beats are on). */
    /**
     * Whether {@code s} is closed, as the stop condition of {@link #startBeats}: one lambda site,
     * linked when a warm spare starts its beats, so that its takeover (which starts the rank's
     * beats) spins no class on the recovery's path.
     */
    static java.util.function.BooleanSupplier closedOf(java.net.Socket s) {
        return s::isClosed;
    }

    static void startBeats(String name, DataOutputStream out, long periodMs, java.util.function.BooleanSupplier stop) {
        if (periodMs > 0) Thread.ofPlatform().name(name).daemon().start(() -> beat(out, periodMs, stop));
    }

    private void send(Frame f) throws IOException {
        if (controllerGone) {
            throw new IOException("the job controller is gone");
        }
        synchronized (out) {
            FrameCodec.write(out, f);
        }
    }

    private void readLoop() {
        String why = "connection closed";
        try {
            while (true) {
                Frame f = FrameCodec.read(in, FrameCodec.MAX_PAYLOAD);
                if (f == null) {
                    break;
                }
                dispatch(f);
            }
        } catch (IOException e) {
            why = e.getMessage();
        } catch (RuntimeException e) {
            why = "internal error: " + e;
            e.printStackTrace();
        }
        controllerGone = true;
        if (!closed.get()) {
            System.err.println("ftmpi: rank " + preliminary.rank() + ": lost the connection to the"
                    + " job controller (" + why + "); continuing without it");
            System.err.flush();
            close();
        }
        table.completeExceptionally(new IOException("the job controller is gone (" + why + ")"));
        finalizeDone.complete(null);
    }

    private void dispatch(Frame f) throws IOException {
        switch (f.type()) {
            case FrameType.TABLE -> table.complete(toJobInfo(ControlMessages.table(f)));
            case FrameType.FINALIZE_DONE -> {
                HeartbeatDetector d = detector;
                if (d != null) {
                    d.finalizeDone();
                }
                finalizeDone.complete(null);
            }
            case FrameType.PROCESS_FAILED -> {
                long gotNs = System.nanoTime();
                ControlMessages.Failed x = ControlMessages.failed(f);
                if (x.rank() == preliminary.rank() && x.procId() == preliminary.procIds()[x.rank()]) {
                    fenced("the job controller declared it failed: " + x.how());
                }
                deliver(x.rank(), x.procId(), x.how()); // here first: keeps the order with ABORT
                if (deathTrace) {
                    System.err.println("ftmpi: death-trace rank " + preliminary.rank() + " failed " + x.rank()
                            + " notice_ns " + gotNs + " delivered_ns " + System.nanoTime());
                }
                HeartbeatDetector d = detector;
                if (d != null && d.started()) {
                    d.notice(x.rank(), x.procId(), x.how()); // repairs the ring; delivery dedups
                }
            }
            case FrameType.REPLACED -> {
                ControlMessages.Register r = ControlMessages.register(f);
                ControlListener l = listener;
                if (l != null && r.rank() != preliminary.rank()) {
                    l.processReplaced(r.rank(), r.procId(), r.host(), r.endpoints());
                }
            }
            case FrameType.SPARE_READY -> {
                ControlMessages.Register s = ControlMessages.register(f);
                ControlListener l = listener;
                if (l != null) l.spareReady(s.procId(), s.endpoints());
            }
            case FrameType.SPARE_GONE -> {
                long id = f.reader().getLong();
                ControlListener l = listener;
                if (l != null) l.spareGone(id);
            }
            case FrameType.ABORT -> {
                ControlMessages.Abort a = ControlMessages.abort(f);
                ControlListener l = listener;
                if (l != null) {
                    l.abort(a.code(), a.reason());
                }
            }
            default -> throw new IOException("unexpected frame " + FrameType.name(f.type())
                    + " from the controller");
        }
    }

    private JobInfo toJobInfo(List<ControlMessages.Entry> rows) throws IOException {
        JobInfo p = preliminary;
        if (rows.size() != p.size()) {
            throw new IOException("endpoint table has " + rows.size() + " rows, expected " + p.size());
        }
        long[] procIds = new long[rows.size()];
        String[] hosts = new String[rows.size()];
        InetSocketAddress[] detectors = new InetSocketAddress[rows.size()];
        List<Map<String, byte[]>> eps = new ArrayList<>(rows.size());
        for (int i = 0; i < rows.size(); i++) {
            procIds[i] = rows.get(i).procId();
            hosts[i] = rows.get(i).host();
            Map<String, byte[]> row = new LinkedHashMap<>(rows.get(i).endpoints());
            byte[] det = row.remove(HeartbeatDetector.ENDPOINT_KEY);
            if (det != null) {
                detectors[i] = HeartbeatDetector.decodeEndpoint(det);
            }
            eps.add(Collections.unmodifiableMap(row));
        }
        HeartbeatDetector d = detector;
        if (d != null) {
            d.start(p.jobId(), p.secret(), p.rank(), procIds, hosts, detectors, heartbeatPeriodMs(p),
                    heartbeatTimeoutMs(p), heartbeatBoardDir(p), new DetectorActions());
        }
        notifier.execute(ControlClient::warmFailurePath);
        return new JobInfo(p.jobId(), p.rank(), p.size(), procIds, hosts,
                Collections.unmodifiableList(eps), p.secret(), p.options());
    }

    /**
     * Runs once, on the notifier thread, right after the table arrived: starts that thread and
     * loads and links what the first failure notice needs (the PROCESS_FAILED codec), so that the
     * first failure of a job does not pay for it on its way to the engine.
     */
    private static void warmFailurePath() {
        try {
            ControlMessages.failed(ControlMessages.failed(new ControlMessages.Failed(0, 0, "warm-up")));
            Declared.class.getName(); // loads the class here, not at the first failure
        } catch (FrameException e) {
            throw new IllegalStateException("PROCESS_FAILED does not decode what it encodes", e);
        }
    }

    /** Job option {@code hb-period} (ms), default {@value HeartbeatDetector#DEFAULT_PERIOD_MS}. */
    static long heartbeatPeriodMs(JobInfo p) {
        return heartbeatPeriodMs(p.options());
    }

    /** Job option {@code hb-period} (ms) of job options {@code o}. */
    static long heartbeatPeriodMs(Map<String, String> o) {
        return Long.parseLong(o.getOrDefault("hb-period", Long.toString(HeartbeatDetector.DEFAULT_PERIOD_MS)));
    }

    /**
     * Where the detector keeps this host's heartbeat board: the job's shared-memory directory,
     * unless job option {@code hb-shm=false} (then ranks of one host beat by datagrams too).
     */
    static java.nio.file.Path heartbeatBoardDir(JobInfo p) {
        return Boolean.parseBoolean(p.option("hb-shm", "true")) ? SharedMemoryFiles.dir(p.options()) : null;
    }

    /** Job option {@code hb-timeout} (ms), default {@value HeartbeatDetector#DEFAULT_TIMEOUT_MS}. */
    static long heartbeatTimeoutMs(JobInfo p) {
        return heartbeatTimeoutMs(p.options());
    }

    /** Job option {@code hb-timeout} (ms) of job options {@code o}. */
    static long heartbeatTimeoutMs(Map<String, String> o) {
        return Long.parseLong(o.getOrDefault("hb-timeout", Long.toString(HeartbeatDetector.DEFAULT_TIMEOUT_MS)));
    }

    @Override
    public Runnable waiterDuty() {
        HeartbeatDetector d = detector;
        return d != null && d.started() ? d::pollFromWaiter : null;
    }

    /** Hands a failure to the listener unless this rank's failure was delivered before. */
    private void deliver(int rank, long procId, String how) {
        synchronized (delivered) {
            if (rank == preliminary.rank() || !delivered.add(procId)) {
                return;
            }
        }
        ControlListener l = listener;
        if (l != null) {
            l.processFailed(rank, procId, how);
        }
    }

    /** Ends this process: the job declared it failed (suspicion is final, never re-admitted). */
    private void fenced(String why) {
        fenceAction.accept("ftmpi: rank " + preliminary.rank() + " (pid " + ProcessHandle.current().pid()
                + ") was declared failed by the job (" + why + "); exiting");
    }

    private static void halt(String message) {
        System.err.println(message);
        System.err.flush();
        Runtime.getRuntime().halt(FENCED_EXIT);
    }

    /**
     * Replaces what a fenced process does (print and halt). For control clients that share a
     * JVM with others, as in tests; a real rank process must end.
     */
    void onFenced(java.util.function.Consumer<String> action) {
        fenceAction = action;
    }

    /** An authenticated control connection and its streams. */
    record Connection(Socket socket, DataInputStream in, DataOutputStream out) {}

    /** Connects to the controller at {@code host:port} and authenticates with the job's secret. */
    static Connection connect(byte[] secret, String host, int port) throws IOException {
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress(host, port), CONNECT_TIMEOUT_MS);
            s.setSoTimeout(CONNECT_TIMEOUT_MS);
            DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
            Auth.client(in, out, secret);
            s.setSoTimeout(0);
            return new Connection(s, in, out);
        } catch (IOException e) {
            s.close();
            throw new IOException("cannot join the job controller at " + host + ":" + port + ": "
                    + e.getMessage(), e);
        }
    }

    /** Exit status of a process that finds itself declared failed. */
    static final int FENCED_EXIT = 1;

    /** The detector's callbacks: run on the detector thread, must not block. */
    private final class DetectorActions implements HeartbeatDetector.Owner {
        @Override
        public void declared(int rank, long procId, String how, boolean detectedHere) {
            notifier.execute(new Declared(rank, procId, how, detectedHere));
        }

        @Override
        public void fenced(String why) {
            ControlClient.this.fenced(why);
        }
    }

    /**
     * Delivers a failure the detector declared and, if it was detected here, reports it to the
     * controller (on the notifier thread). A class, not a lambda: a lambda site first run at the
     * job's first failure would spin its class then (docs/fault-tolerance.md, "Cold failure path").
     */
    private final class Declared implements Runnable {
        private final int rank;
        private final long procId;
        private final String how;
        private final boolean detectedHere;

        Declared(int rank, long procId, String how, boolean detectedHere) {
            this.rank = rank;
            this.procId = procId;
            this.how = how;
            this.detectedHere = detectedHere;
        }

        @Override
        public void run() {
            deliver(rank, procId, how);
            if (detectedHere && !controllerGone) {
                try {
                    send(ControlMessages.failed(FrameType.FAILURE_REPORT, new ControlMessages.Failed(rank, procId, how)));
                } catch (IOException e) {
                    // controller gone: the ranks' own broadcast carries the notice
                }
            }
        }
    }

    /** A preliminary JobInfo: own procId and host filled in, others 0 and "", no endpoints. */
    static JobInfo preliminary(long jobId, int rank, int size, long procId, String host,
                               byte[] secret, Map<String, String> options) {
        long[] procIds = new long[size];
        procIds[rank] = procId;
        String[] hosts = new String[size];
        Arrays.fill(hosts, "");
        hosts[rank] = host;
        List<Map<String, byte[]>> eps = Collections.nCopies(size, Map.of());
        return new JobInfo(jobId, rank, size, procIds, hosts, eps, secret, Map.copyOf(options));
    }
}
