package org.ftmpi.runtime;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;

import org.ftmpi.runtime.wire.Auth;
import org.ftmpi.runtime.wire.Frame;
import org.ftmpi.runtime.wire.FrameCodec;
import org.ftmpi.runtime.wire.FrameType;

/**
 * The job controller's network side: accepts and authenticates the ranks' control connections,
 * runs the endpoint exchange and the finalize barrier, and sends failure and abort notices.
 * Process watching and killing belong to {@link Job}.
 *
 * <p><b>Note:</b> thread-safe. One accept thread ({@code ftmpirun-accept}) and one reader
 * thread per connection ({@code ftmpirun-conn}); job state is guarded by {@code this}.
 */
public final class Controller implements AutoCloseable {
    /** Long enough for a rank JVM descheduled for seconds on an oversubscribed host; a peer that never authenticates is still dropped. */
    private static final int AUTH_TIMEOUT_MS = 30_000;

    /** What the controller reports to the job. Called on controller threads. */
    public interface Events {
        /** A rank called MPI_Abort. */
        void abortRequested(int rank, int code, String reason);

        /** The endpoint exchange can never complete (a rank exited without registering). */
        void exchangeImpossible(String message);

        /**
         * The heartbeat observer in rank {@code reporter} declared {@code rank} failed (a hang
         * or a death the controller may not have seen itself).
         */
        void failureReported(int reporter, int rank, long procId, String how);

        /**
         * Comm-mode rebuild: the warm spare {@code spareProcId}, ready now, was handed {@code rank},
         * which waited for it ({@link #assignSpare(int, boolean)}).
         */
        default void spareAssigned(int rank, long spareProcId) {
        }

        /** Process {@code procId} (a rank or a warm spare) registered: it runs and is connected. */
        default void processJoined(long procId) {
        }

        /**
         * The warm spare {@code procId} sent no BEAT for the beats' timeout ({@link #watchBeats}),
         * or was stopped that long before it reported ready ({@link #watchStart}): it is stopped
         * or hung ({@code how} says which). It is out of the pool already; the job ends its process.
         */
        default void spareSilent(long procId, String how) {
        }
    }

    private final int size;
    private final long[] procIds;
    private final byte[] secret;
    private final LauncherConsole console;
    private final Events events;
    private final ServerSocket server;
    private final Conn[] conns;
    private final ControlMessages.Register[] regs;
    private final boolean[] finalized;
    private final boolean[] released;
    private final boolean[] exited;
    /** Warm spares connected and waiting (ftmpirun -sp), in arrival order. */
    private final List<Conn> idleSpares = new ArrayList<>();
    /** Failed ranks waiting for a warm spare that is still starting, in failure order. */
    private final java.util.ArrayDeque<Integer> waitingForSpare = new java.util.ArrayDeque<>();
    /** Ranks whose replacement was started and has not registered yet (comm-mode rebuild). */
    private final boolean[] replacing;
    /** When each rank's current replacement was started ({@link #replace}: 1, 2, ...; 0 for none). */
    private final long[] replacedAt;
    private long replacements;
    /**
     * Replacements that registered while a replacement started before them had not: they get
     * their table, and the other ranks their REPLACED, once it has (see {@link #registerLocked}).
     */
    private final List<Conn> deferred = new ArrayList<>();
    /** Every connection; copy-on-write so that {@link #notifyFailure} needs no monitor. */
    private final List<Conn> all = new java.util.concurrent.CopyOnWriteArrayList<>();
    /**
     * Process id of each rank until it reaches MPI_Finalize, then 0; read without the monitor by
     * {@link #unfinalizedRank}.
     */
    private final java.util.concurrent.atomic.AtomicLongArray unfinalized;
    /** Process ids whose control connection has ended (any thread reads it). */
    private final java.util.Set<Long> connectionEnded = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** hb-timeout (ms) for the beats of replacements and warm spares ({@link #watchBeats}); 0 when they are not watched. */
    private volatile int beatTimeoutMs;
    /** Job option {@code start-timeout} ({@link #watchBeats}); 0: no limit. */
    private volatile long startTimeoutMs;
    private int registered;
    private boolean tableSent;
    private boolean exitedUnregistered;
    private boolean closed;

    public Controller(int size, long[] procIds, byte[] secret, InetAddress bind,
                      LauncherConsole console, Events events) throws IOException {
        this.size = size;
        this.procIds = procIds.clone();
        this.secret = secret.clone();
        this.console = console;
        this.events = events;
        this.conns = new Conn[size];
        this.regs = new ControlMessages.Register[size];
        this.finalized = new boolean[size];
        this.released = new boolean[size];
        this.exited = new boolean[size];
        this.replacing = new boolean[size];
        this.replacedAt = new long[size];
        this.unfinalized = new java.util.concurrent.atomic.AtomicLongArray(procIds);
        server = new ServerSocket();
        server.bind(new InetSocketAddress(bind, 0), Math.max(50, size));
        Thread t = new Thread(this::acceptLoop, "ftmpirun-accept");
        t.setDaemon(true);
        t.start();
        // Off the critical path: load and link what the first failure notice needs (exit
        // description, PROCESS_FAILED encoding).
        Thread.ofPlatform().name("ftmpirun-warm").daemon().start(() ->
                ControlMessages.failed(new ControlMessages.Failed(0, 0, ExitStatus.describe(128 + 9))));
    }

    /** {@code host:port} for {@link RuntimeEnv#CONTROLLER}. */
    public String address() {
        String h = server.getInetAddress().getHostAddress();
        return (h.contains(":") ? "[" + h + "]" : h) + ":" + server.getLocalPort();
    }

    public int port() {
        return server.getLocalPort();
    }

    /**
     * Watches the connections of REBUILD replacements (from their table on) and warm spares (from
     * their SPARE on), which take no part in the heartbeat ring and beat on their connection
     * instead (BEAT, every {@code ControlClient.controlBeatMs}): one that stays silent for {@code
     * timeoutMs} is declared failed, as a ring observer's report would be ({@link
     * Events#failureReported}), or, a waiting spare, taken out of the pool ({@link Events#spareSilent}).
     * A thread {@code ftmpirun-beats} checks four times per timeout; a check that comes late
     * (this process itself was descheduled) restarts every watch instead of counting the gap.
     * The same thread watches processes in their start-up ({@link #watchStart}); one that has not
     * reached MPI_Init {@code startTimeoutMs} after it was started (0: no limit) is declared
     * failed too.
     */
    public void watchBeats(long timeoutMs, long startTimeoutMs) {
        beatTimeoutMs = (int) Math.min(Integer.MAX_VALUE, timeoutMs);
        this.startTimeoutMs = startTimeoutMs;
        Thread.ofPlatform().name("ftmpirun-beats").daemon().start(this::beatWatch);
    }

    private void beatWatch() {
        long timeoutNs = beatTimeoutMs * 1_000_000L;
        long tickNs = timeoutNs / 4;
        long last = System.nanoTime();
        while (true) {
            java.util.concurrent.locks.LockSupport.parkNanos(tickNs);
            long now = System.nanoTime();
            boolean late = now - last > 2 * tickNs;
            last = now;
            synchronized (this) {
                if (closed) return;
            }
            for (Conn c : all) {
                if (c.watchedSinceNs == 0 || c.silentReported) continue;
                if (late) {
                    c.heardNs = now;
                } else if (now - c.heardNs > timeoutNs) {
                    c.silentReported = true;
                    silent(c);
                }
            }
            checkStarting(now, late, timeoutNs);
        }
    }

    /**
     * A process the launcher started that does not beat yet ({@link #watchStart}): a rank until
     * the job's table went out (the ring watches it from then on), a replacement or a warm spare
     * until its connection's beats are watched ({@link #watch}).
     */
    private static final class Starting {
        final int rank;
        final long procId;
        final long pid;
        /** When the launcher started it. */
        final long startedNs = System.nanoTime();
        /** Since when it has been seen stopped, 0 when it was not at the last check. */
        long stoppedSinceNs;

        Starting(int rank, long procId, long pid) {
            this.rank = rank;
            this.procId = procId;
            this.pid = pid;
        }
    }

    private final java.util.concurrent.ConcurrentLinkedQueue<Starting> starting = new java.util.concurrent.ConcurrentLinkedQueue<>();
    /** Process ids whose connection's beats are watched ({@link #watch}). */
    private final java.util.Set<Long> beating = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * Process {@code pid}, just started as {@code rank} (-1: a warm spare) with process id {@code
     * procId}, beats neither in the ring nor on its connection until it has registered and got
     * its table (a spare: until it reported ready): a hang before then was not seen. Until then
     * the beats' thread reads its state in {@code /proc/PID/stat} at every check, and a process
     * found stopped (SIGSTOP, job control, a debugger: state T or t) for the beats' timeout is
     * declared failed as a silent one would be ({@link #silent}); a spare is taken out of the pool
     * ({@link Events#spareSilent}). One that hangs otherwise (a deadlock in its start-up, a
     * program that never calls MPI_Init) is declared failed the same way once it has not reached
     * MPI_Init within the job's start timeout ({@link #watchBeats}). Nothing is watched without
     * beats.
     */
    public void watchStart(int rank, long procId, long pid) {
        if (beatTimeoutMs > 0) starting.add(new Starting(rank, procId, pid));
    }

    private void checkStarting(long now, boolean late, long timeoutNs) {
        if (starting.isEmpty()) return;
        boolean started;
        synchronized (this) {
            started = tableSent;
        }
        long limitNs = startTimeoutMs * 1_000_000L;
        for (java.util.Iterator<Starting> it = starting.iterator(); it.hasNext(); ) {
            Starting s = it.next();
            if (beating.contains(s.procId) || s.rank >= 0 && started && !isReplacement(s)) {
                it.remove();
                continue;
            }
            char state = processState(s.pid);
            if (state == 0) { // gone: its exit is reported by the job
                it.remove();
            } else if (limitNs > 0 && now - s.startedNs > limitNs && !registered(s)) {
                it.remove();
                String how = "did not reach MPI_Init within " + startTimeoutMs + " ms of its start (process state "
                        + state + "; --opt start-timeout)";
                if (s.rank < 0) {
                    events.spareSilent(s.procId, how + " (it never reported ready)");
                } else {
                    events.failureReported(-1, s.rank, s.procId, how + " (it never "
                            + (isReplacement(s) ? "joined the job as a replacement" : "registered; the job had not started") + ")");
                }
            } else if (state != 'T' && state != 't') {
                s.stoppedSinceNs = 0;
            } else if (s.stoppedSinceNs == 0 || late) {
                s.stoppedSinceNs = now;
            } else if (now - s.stoppedSinceNs > timeoutNs) {
                it.remove();
                String how = "was stopped (process state " + state + ") for " + beatTimeoutMs + " ms before its first heartbeat";
                if (s.rank < 0) {
                    events.spareSilent(s.procId, how + " (stopped before it reported ready)");
                } else {
                    events.failureReported(-1, s.rank, s.procId, how + " (stopped before "
                            + (isReplacement(s) ? "it joined the job as a replacement" : "the job started") + ")");
                }
            }
        }
    }

    /**
     * Whether {@code s}, a rank or a replacement, has registered: it waits in MPI_Init for the
     * job's table, or, a replacement, for one started before it to join first. A spare leaves
     * the watch when it reports ready ({@link #watch}).
     */
    private synchronized boolean registered(Starting s) {
        return s.rank >= 0 && procIds[s.rank] == s.procId && regs[s.rank] != null;
    }

    /** Whether {@code s} is a replacement: started after the job's own processes, with a higher process id than any of theirs. */
    private boolean isReplacement(Starting s) {
        return s.procId > size;
    }

    /**
     * The state letter of process {@code pid} in {@code /proc/PID/stat} (the field after the
     * command name in parentheses, which may itself hold spaces and parentheses), or 0 if the
     * process is gone or the file cannot be read.
     */
    static char processState(long pid) {
        try {
            String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc", Long.toString(pid), "stat"));
            int close = stat.lastIndexOf(')');
            return close >= 0 && close + 2 < stat.length() ? stat.charAt(close + 2) : 0;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** Starts watching {@code c}'s beats, if beats are watched at all. */
    private void watch(Conn c) {
        if (beatTimeoutMs <= 0) return;
        long now = System.nanoTime();
        c.heardNs = now;
        c.watchedSinceNs = now;
        long procId = c.spareProcId != 0 ? c.spareProcId : c.rank >= 0 ? procIdOf(c.rank) : 0;
        if (procId != 0) beating.add(procId);
    }

    private synchronized long procIdOf(int rank) {
        return procIds[rank];
    }

    /** Whether every rank got the job's table: the job has started (MPI_Init's exchange is complete). */
    public synchronized boolean exchangeComplete() {
        return tableSent;
    }

    public synchronized boolean isRegistered(int rank) {
        return regs[rank] != null;
    }

    public synchronized boolean hasFinalized(int rank) {
        return finalized[rank];
    }

    /**
     * The rank that process {@code procId} runs as, while it has not reached MPI_Finalize, else
     * -1. Takes no monitor: the death watch tells the survivors before anything else, and never
     * waits for a thread that holds the controller's or the job's monitor while it logs.
     */
    public int unfinalizedRank(long procId) {
        for (int r = 0; r < size; r++) {
            if (unfinalized.get(r) == procId) return r;
        }
        return -1;
    }

    /** Whether the control connection of process {@code procId} has ended (closed or lost). */
    public boolean connectionEnded(long procId) {
        return connectionEnded.contains(procId);
    }

    /**
     * The job tells the controller that process {@code procId} of {@code rank} ended. Ignored
     * when the rank has been handed to another process since (comm-mode rebuild): a warm spare
     * assigned here before the job's waitpid thread reports the old process's exit must not be
     * marked exited (its REGISTER would be refused).
     */
    public void rankExited(int rank, long procId) {
        String impossible = null;
        synchronized (this) {
            if (procIds[rank] != procId) return;
            exited[rank] = true;
            joinDeferred();
            if (regs[rank] == null) {
                exitedUnregistered = true;
                impossible = exchangeImpossible(rank);
            }
            checkFinalizeBarrier();
        }
        if (impossible != null) {
            events.exchangeImpossible(impossible);
        }
    }

    /**
     * Comm-mode rebuild: the job started process {@code procId} to replace the failed process of
     * {@code rank}. Its REGISTER is accepted; it gets the table, and the other ranks REPLACED.
     */
    public synchronized void replace(int rank, long procId) {
        procIds[rank] = procId;
        unfinalized.set(rank, procId);
        if (regs[rank] != null) registered--;
        regs[rank] = null;
        conns[rank] = null;
        finalized[rank] = false;
        released[rank] = false;
        exited[rank] = false;
        replacing[rank] = true;
        replacedAt[rank] = ++replacements;
        // Loops, not removeIf or a Comparator with a lambda: under REBUILD this runs between a
        // death's notices and the warm spare's ASSIGN, and the first run of a lambda site spins a
        // class (1-2 ms of CPU in this C1-only JVM; docs/fault-tolerance.md, "Session 24").
        for (java.util.Iterator<Conn> it = deferred.iterator(); it.hasNext(); ) {
            if (it.next().rank == rank) it.remove();
        }
        joinDeferred();
    }

    /**
     * Comm-mode rebuild with warm spares: hands {@code rank} to the first waiting spare (ASSIGN)
     * and returns its process id, or -1 when no spare is waiting. With {@code wait}, a rank that
     * finds none ready is queued and goes to the next spare that becomes ready
     * ({@link Events#spareAssigned}), unless {@link #cancelSpareWait} takes it back first.
     */
    public synchronized long assignSpare(int rank, boolean wait) {
        while (!idleSpares.isEmpty()) {
            Conn c = idleSpares.remove(0);
            if (c.socket.isClosed()) continue;
            assign(rank, c);
            return c.spareProcId;
        }
        if (wait) waitingForSpare.add(rank);
        return -1;
    }

    private void assign(int rank, Conn spare) {
        spare.assigned = rank;
        replace(rank, spare.spareProcId);
        spare.trySend(new org.ftmpi.runtime.wire.PayloadWriter().putInt(rank).toFrame(FrameType.ASSIGN));
    }

    /** Takes {@code rank} off the queue of ranks waiting for a spare; false if a spare took it. */
    public synchronized boolean cancelSpareWait(int rank) {
        return waitingForSpare.remove(rank);
    }

    /** Takes every rank off the queue of ranks waiting for a spare and returns them. */
    public synchronized List<Integer> cancelSpareWaits() {
        List<Integer> l = List.copyOf(waitingForSpare);
        waitingForSpare.clear();
        return l;
    }

    /** A warm spare died: it is no longer handed to a failed rank, and the ranks drop what they made for it. */
    public synchronized void dropSpare(long procId) {
        for (int i = 0; i < idleSpares.size(); i++) {
            if (idleSpares.get(i).spareProcId == procId) spareGone(idleSpares.remove(i));
        }
    }

    /** Tells the ranks that the idle spare {@code c} is gone (SPARE_GONE); under the lock. */
    private void spareGone(Conn c) {
        if (closed || !tableSent) return;
        Frame f = ControlMessages.spareGone(c.spareProcId);
        for (Conn x : all) if (joined(x)) x.trySend(f);
    }

    /**
     * Tells rank connection {@code to} (or every rank when null) of the idle spare {@code s}
     * (SPARE_READY), so that it connects to the spare ahead of need; under the lock. Only once
     * the ranks have their table (their engines exist).
     */
    private void announceSpare(Conn s, Conn to) {
        if (closed || !tableSent || s.spareFrame == null) return;
        for (Conn x : to == null ? all : List.of(to)) if (joined(x)) x.trySend(s.spareFrame);
    }

    /** Ends the waiting spares at the end of the job: their connections close, they exit 0. */
    public void releaseSpares() {
        List<Conn> l;
        synchronized (this) {
            l = List.copyOf(idleSpares);
            idleSpares.clear();
        }
        for (Conn c : l) c.close();
    }

    /**
     * Sends PROCESS_FAILED to every connected rank but the failed one. Takes no monitor but each
     * connection's output lock ({@link #all} is copy-on-write), so a death watch notice never
     * waits behind a thread that holds the controller's monitor.
     */
    public void notifyFailure(int rank, long procId, String how) {
        Frame f = ControlMessages.failed(new ControlMessages.Failed(rank, procId, how));
        for (Conn c : all) {
            if (c.rank != rank) {
                c.trySend(f);
            }
        }
    }

    /**
     * Encodes a PROCESS_FAILED frame (for no process) and writes it to nowhere, once at the job's
     * start, so that a death's first notice does not link this code in the controller's
     * interpreter ({@link DeathWatch#warm}).
     */
    void warmNotice(String how) {
        Frame f = ControlMessages.failed(new ControlMessages.Failed(-1, -1, how));
        try {
            FrameCodec.write(new DataOutputStream(OutputStream.nullOutputStream()), f);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a null stream does not fail
        }
    }

    /** Sends ABORT to every connected rank. */
    public synchronized void notifyAbort(int code, String reason) {
        Frame f = ControlMessages.abort(FrameType.ABORT, new ControlMessages.Abort(code, reason));
        for (Conn c : all) {
            c.trySend(f);
        }
    }

    @Override
    public void close() {
        List<Conn> toClose;
        synchronized (this) {
            closed = true;
            toClose = List.copyOf(all);
        }
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        for (Conn c : toClose) {
            c.close();
        }
    }

    private void acceptLoop() {
        while (true) {
            Socket s;
            try {
                s = server.accept();
            } catch (IOException e) {
                if (!server.isClosed()) {
                    console.message("warning: control listener failed: " + e.getMessage());
                }
                return;
            }
            Thread t = new Thread(() -> serve(s), "ftmpirun-conn");
            t.setDaemon(true);
            t.start();
        }
    }

    private void serve(Socket s) {
        String peer = String.valueOf(s.getRemoteSocketAddress());
        Conn c;
        try {
            s.setTcpNoDelay(true);
            s.setSoTimeout(AUTH_TIMEOUT_MS);
            c = new Conn(s);
            Auth.server(c.in, c.out, secret);
            s.setSoTimeout(0);
        } catch (IOException e) {
            console.message("warning: rejected control connection from " + peer + ": " + e.getMessage());
            closeQuietly(s);
            return;
        }
        synchronized (this) {
            if (closed) {
                closeQuietly(s);
                return;
            }
            all.add(c);
        }
        console.log("authenticated control connection from " + peer);
        String end = "closed by the rank";
        boolean protocolError = false;
        try {
            Frame f;
            while ((f = FrameCodec.read(c.in, FrameCodec.MAX_PAYLOAD)) != null) {
                c.heardNs = System.nanoTime(); // the beats' watch (watchBeats) counts any frame
                handle(c, f);
            }
        } catch (SocketException e) {
            end = e.getMessage();
        } catch (IOException e) {
            end = e.getMessage();
            protocolError = true;
        }
        synchronized (this) {
            all.remove(c);
            if (idleSpares.remove(c)) spareGone(c);
            if (c.rank >= 0) connectionEnded.add(procIds[c.rank]);
            if (!closed && protocolError) {
                console.message("warning: closing the control connection of "
                        + (c.rank < 0 ? "an unregistered peer" : "rank " + c.rank) + " from " + peer + ": " + end);
            } else if (!closed) {
                console.log("control connection of rank " + c.rank + " ended: " + end);
            }
        }
        c.close();
    }

    private void handle(Conn c, Frame f) throws IOException {
        switch (f.type()) {
            case FrameType.REGISTER -> register(c, ControlMessages.register(f));
            case FrameType.SPARE -> {
                if (c.rank >= 0 || c.spareProcId != 0) throw new IOException("unexpected SPARE");
                ControlMessages.Register s = ControlMessages.register(f);
                long id = s.procId();
                int rank = -1;
                synchronized (this) {
                    c.spareProcId = id;
                    watch(c); // it beats from now on
                    c.spareFrame = ControlMessages.spare(FrameType.SPARE_READY, id, s.host(), s.endpoints());
                    if (!closed && !waitingForSpare.isEmpty()) {
                        rank = waitingForSpare.poll();
                        assign(rank, c);
                    } else if (!closed) {
                        idleSpares.add(c);
                        announceSpare(c, null);
                    }
                }
                console.log("warm spare (process id " + id + ") is ready");
                events.processJoined(id);
                if (rank >= 0) events.spareAssigned(rank, id);
            }
            case FrameType.BEAT -> {
                if (c.rank < 0 && c.spareProcId == 0) throw new IOException("BEAT before REGISTER or SPARE");
            }
            case FrameType.FINALIZE -> {
                requireRank(c, f);
                synchronized (this) {
                    finalized[c.rank] = true;
                    unfinalized.set(c.rank, 0);
                    console.log("rank " + c.rank + " reached MPI_Finalize");
                    checkFinalizeBarrier();
                }
            }
            case FrameType.ABORT_REQUEST -> {
                requireRank(c, f);
                ControlMessages.Abort a = ControlMessages.abort(f);
                console.log("rank " + c.rank + " requested abort with code " + a.code());
                events.abortRequested(c.rank, a.code(), a.reason());
            }
            case FrameType.FAILURE_REPORT -> {
                requireRank(c, f);
                ControlMessages.Failed x = ControlMessages.failed(f);
                if (x.rank() < 0 || x.rank() >= size || x.rank() == c.rank) {
                    throw new IOException("FAILURE_REPORT for rank " + x.rank());
                }
                console.log("rank " + c.rank + " reports rank " + x.rank() + " failed: " + x.how());
                events.failureReported(c.rank, x.rank(), x.procId(), x.how());
            }
            default -> throw new IOException("unexpected frame " + FrameType.name(f.type()));
        }
    }

    /**
     * Connection {@code c} sent nothing for the beats' timeout: its rank is reported failed,
     * unless it has finalized or is gone; a warm spare's is taken out of the pool and ended.
     */
    private void silent(Conn c) {
        int rank;
        long procId;
        if (c.rank < 0 && c.spareProcId != 0) {
            int r = c.assigned;
            boolean takingOver;
            synchronized (this) {
                if (closed) return;
                boolean idle = idleSpares.remove(c);
                if (idle) spareGone(c);
                // handed a rank just before it stopped (a live spare ends this connection at once)
                takingOver = !idle && r >= 0 && procIds[r] == c.spareProcId && !finalized[r] && !exited[r];
            }
            if (takingOver) {
                events.failureReported(-1, r, c.spareProcId, "sent no heartbeat for " + beatTimeoutMs
                        + " ms (a warm spare taking over the rank: stopped or hung)");
            } else {
                events.spareSilent(c.spareProcId, "sent no heartbeat for " + beatTimeoutMs + " ms (stopped or hung)");
            }
            return;
        }
        synchronized (this) {
            rank = c.rank;
            if (closed || rank < 0 || conns[rank] != c || finalized[rank] || exited[rank]) return;
            procId = procIds[rank];
        }
        events.failureReported(-1, rank, procId, "sent no heartbeat on its control connection for "
                + beatTimeoutMs + " ms (a replacement: stopped or hung)");
    }

    private static void requireRank(Conn c, Frame f) throws IOException {
        if (c.rank < 0) {
            throw new IOException(FrameType.name(f.type()) + " before REGISTER");
        }
    }

    /** Events are raised outside the lock: the job calls into the controller under its own. */
    private void register(Conn c, ControlMessages.Register r) throws IOException {
        String impossible = registerLocked(c, r);
        events.processJoined(r.procId());
        if (impossible != null) {
            events.exchangeImpossible(impossible);
        }
    }

    private synchronized String registerLocked(Conn c, ControlMessages.Register r) throws IOException {
        if (c.rank >= 0) {
            throw new IOException("rank " + c.rank + " registered twice");
        }
        if (r.rank() < 0 || r.rank() >= size) {
            throw new IOException("REGISTER for rank " + r.rank() + " of a job of " + size);
        }
        if (r.procId() != procIds[r.rank()] || regs[r.rank()] != null || exited[r.rank()]) {
            throw new IOException("unexpected REGISTER for rank " + r.rank() + " (procId " + r.procId() + ")");
        }
        c.rank = r.rank();
        conns[r.rank()] = c;
        regs[r.rank()] = r;
        registered++;
        console.log("rank " + r.rank() + " registered (procId " + r.procId() + ", host " + r.host()
                + ", transports " + r.endpoints().keySet() + ")");
        String impossible = exchangeImpossible(r.rank());
        if (tableSent && replacing[r.rank()]) {
            int earlier = earlierReplacement(r.rank());
            if (earlier >= 0) {
                deferred.add(c);
                console.log("rank " + r.rank() + "'s replacement registered before the replacement of rank "
                        + earlier + ", started earlier; it joins after that one");
            } else {
                replacing[r.rank()] = false;
                joinReplacement(c, r);
                joinDeferred();
            }
        } else if (registered == size && !tableSent) {
            tableSent = true;
            List<ControlMessages.Entry> rows = new ArrayList<>(size);
            for (ControlMessages.Register g : regs) {
                rows.add(new ControlMessages.Entry(g.procId(), g.host(), g.endpoints()));
            }
            Frame table = ControlMessages.table(rows);
            for (Conn x : conns) {
                x.trySend(table);
            }
            console.log("endpoint exchange complete: sent the table of " + size + " ranks");
            for (Conn s : idleSpares) announceSpare(s, null);
        }
        return impossible;
    }

    /**
     * A rank other than {@code rank} whose replacement was started before {@code rank}'s and
     * has neither registered nor exited, else -1.
     *
     * <p>Replacements join in the order they were started, which is the order the ranks died
     * (and the order in which the survivors' recovery rounds cover them). A replacement that
     * joined first finds the later one's rank "being replaced" and connects to it when it is
     * announced; one that joins later accepts the earlier one's connection in its MPI_Init. With
     * new processes the later one can register first; had it joined then, the earlier one would
     * find it live and wait in MPI_Init for a connection that the later one makes only once the
     * survivors' next round welcomed it, and that round needs the earlier one: the job hung
     * until an accept timeout. Warm spares register at their assignment, already in order.
     */
    private int earlierReplacement(int rank) {
        for (int j = 0; j < size; j++) {
            if (j != rank && replacing[j] && regs[j] == null && !exited[j] && replacedAt[j] < replacedAt[rank]) {
                return j;
            }
        }
        return -1;
    }

    /** Joins the deferred replacements no earlier one holds back any more, in start order; under the lock. */
    private void joinDeferred() {
        for (int i = 1; i < deferred.size(); i++) { // insertion sort by start order (a few entries at most)
            Conn c = deferred.get(i);
            int j = i;
            for (; j > 0 && replacedAt[deferred.get(j - 1).rank] > replacedAt[c.rank]; j--) {
                deferred.set(j, deferred.get(j - 1));
            }
            deferred.set(j, c);
        }
        for (java.util.Iterator<Conn> it = deferred.iterator(); it.hasNext(); ) {
            Conn c = it.next();
            int r = c.rank;
            if (exited[r] || regs[r] == null || conns[r] != c) {
                it.remove();
                continue;
            }
            if (earlierReplacement(r) >= 0) return;
            it.remove();
            replacing[r] = false;
            joinReplacement(c, regs[r]);
        }
    }

    /**
     * A replacement registered: it gets the table of the live ranks (ranks that are dead or
     * being replaced themselves have no endpoints: an earlier replacement connects to this one
     * when it gets REPLACED, see Engine's joinLater), every other rank gets REPLACED and connects
     * to it when its recovery ends.
     */
    private void joinReplacement(Conn c, ControlMessages.Register r) {
        List<ControlMessages.Entry> rows = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            ControlMessages.Register g = regs[i];
            boolean live = g != null && !exited[i] && !replacing[i];
            rows.add(live ? new ControlMessages.Entry(g.procId(), g.host(), g.endpoints())
                    : new ControlMessages.Entry(procIds[i], "", java.util.Map.of()));
        }
        watch(c); // it beats once it has the table
        c.trySend(ControlMessages.table(rows));
        for (Conn s : idleSpares) announceSpare(s, c);
        Frame rep = ControlMessages.replaced(r);
        for (Conn x : all) {
            if (x != c && joined(x) && x.rank != r.rank()) x.trySend(rep);
        }
        console.log("rank " + r.rank() + " rejoined as process " + r.procId() + "; told the other ranks");
    }

    /**
     * Whether connection {@code x} registered and has its table (not a {@link #deferred}
     * replacement): it gets the other ranks' REPLACED and the spares' notices. Under the lock.
     */
    private boolean joined(Conn x) {
        return x.rank >= 0 && !deferred.contains(x);
    }

    /** A message when the exchange can never complete, else null. */
    private String exchangeImpossible(int rank) {
        if (exitedUnregistered && registered > 0 && !tableSent && !closed) {
            return "rank " + rank + (regs[rank] == null ? " exited without calling MPI_Init"
                    : " waits in the endpoint exchange but a rank exited without calling MPI_Init")
                    + "; the exchange cannot complete";
        }
        return null;
    }

    private void checkFinalizeBarrier() {
        for (int i = 0; i < size; i++) {
            if (!finalized[i] && !exited[i]) {
                return;
            }
        }
        Frame done = Frame.of(FrameType.FINALIZE_DONE);
        for (int i = 0; i < size; i++) {
            if (finalized[i] && !released[i] && conns[i] != null) {
                released[i] = true;
                conns[i].trySend(done);
            }
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    /** One authenticated control connection. */
    private final class Conn {
        final Socket socket;
        final DataInputStream in;
        final DataOutputStream out;
        volatile int rank = -1;
        /** The rank a warm spare was handed (ASSIGN), else -1. */
        volatile int assigned = -1;
        /** When its beats began to be watched ({@link #watch}), 0 if they are not. */
        volatile long watchedSinceNs;
        /** When it last sent a frame (watched connections). */
        volatile long heardNs;
        /** Its silence was reported (once). */
        volatile boolean silentReported;
        /** Process id of a warm spare connection (0 otherwise). */
        volatile long spareProcId;
        /** A warm spare's SPARE_READY for the ranks (its procId and endpoints), else null. */
        volatile Frame spareFrame;

        Conn(Socket s) throws IOException {
            socket = s;
            in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
            out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
        }

        void trySend(Frame f) {
            synchronized (out) {
                try {
                    FrameCodec.write(out, f);
                } catch (SocketException e) {
                    // the rank is gone; its death is reported through its process
                } catch (IOException e) {
                    console.log("cannot send " + FrameType.name(f.type()) + " to rank " + rank + ": "
                            + e.getMessage());
                }
            }
        }

        void close() {
            closeQuietly(socket);
        }
    }
}
