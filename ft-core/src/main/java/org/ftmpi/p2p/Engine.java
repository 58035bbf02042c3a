package org.ftmpi.p2p;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.ftmpi.runtime.ControlListener;
import org.ftmpi.runtime.JobInfo;
import org.ftmpi.runtime.RankRuntime;
import org.ftmpi.transport.FrameHeader;
import org.ftmpi.transport.FrameSink;
import org.ftmpi.transport.Transport;
import org.ftmpi.transport.TransportContext;
import org.ftmpi.transport.TransportProvider;

/**
 * One rank's point-to-point engine (Open MPI's PML): matching, eager and rendezvous protocols,
 * requests and progress over the transports. No static state: several engines can live in one
 * JVM (threads as ranks).
 *
 * <p><b>Note:</b> thread-safe. All protocol state is guarded by one progress lock; a thread
 * waiting for a request polls the transports itself while it can take the lock (spin, then
 * yield, then park), and a background agent progresses outstanding operations when no thread
 * is inside the library. Failure notices from the runtime thread complete affected requests
 * with an error, so no wait hangs on a dead peer.
 */
public final class Engine implements FrameSink, ControlListener, AutoCloseable {
    public static final int ANY_SOURCE = -1;
    public static final int ANY_TAG = -1;
    public static final int PROC_NULL = -2;

    private final RankRuntime runtime;
    private final JobInfo job;
    private final int rank;
    private final int size;
    private final List<Transport> transports = new ArrayList<>();
    /** Transports that carry traffic to some peer: polled at every progress step. */
    private Transport[] busy;
    /**
     * Transports connected but carrying no traffic (TCP next to shared memory on one host):
     * polled only every {@link #IDLE_POLL_PERIOD} steps, so that a lost connection is still
     * noticed but an idle socket costs no system call per poll.
     */
    private Transport[] idleTransports;
    private static final int IDLE_POLL_PERIOD = 1024;
    /** Progress steps taken by application threads (the agent's own do not count). */
    /** Progress steps made by application threads; written opaque (no fence in the poll loop), read by the agent. */
    private int userSteps;
    private static final java.lang.invoke.VarHandle USER_STEPS;
    static {
        try {
            USER_STEPS = java.lang.invoke.MethodHandles.lookup().findVarHandle(Engine.class, "userSteps", int.class);
            OUTSTANDING = java.lang.invoke.MethodHandles.lookup().findVarHandle(Engine.class, "outstanding", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    private int steps;
    private final Transport[] route;
    private final int[] eagerLimit;
    private final int[] fragment;
    /** Per destination: smallest native DATA fragment sent with {@link Transport#sendPinned}. */
    private final int[] pinnedMin;
    /** Per destination: largest DATA fragment handed to {@link Transport#sendPinned} at once. */
    private final int[] pinnedMax;
    private final int[] rndvInline;
    private final long[] sequence;
    private final boolean[] peerFailed;
    private final String[] peerFailure;
    private final int procFailedClass;

    final ReentrantLock lock = new ReentrantLock();
    private final Map<Integer, MatchQueues> contexts = new HashMap<>();
    private final RequestTable byId = new RequestTable();
    private final ArrayList<Request> pumping = new ArrayList<>();
    /**
     * Sends whose first frame (EAGER, EAGER_SYNC or RTS) the transport could not take without
     * copying it into a backlog ({@link Transport#trySend}: a full shared-memory ring), in the
     * order they were made; the request completes (eager) or waits for its CTS (rendezvous) once
     * that frame is written, from the caller's memory. A later send to the same rank waits
     * behind them, so messages never overtake one another.
     */
    private final ArrayList<Request> deferred = new ArrayList<>();
    /** Per world rank: how many of {@link #deferred} go there. */
    private final int[] deferredTo;
    private final MemorySegment header = Arena.ofAuto().allocate(FrameHeader.BYTES, 8);
    private long nextId = 1;
    /**
     * Requests not yet complete. Written under the progress lock; the progress agent reads it
     * without the lock (opaque) as a hint, so it is not volatile: no fence per request.
     */
    int outstanding;
    private static final java.lang.invoke.VarHandle OUTSTANDING;

    /** A request completed (caller holds the progress lock). */
    void requestDone() {
        OUTSTANDING.setOpaque(this, outstanding - 1);
    }
    private volatile String abortReason;
    private final Thread agent;
    private volatile boolean closed;
    /** The recovery timeline (job option {@code ft-trace}); records nothing when off. */
    private final FtTrace trace;

    /** Starts the engine over a runtime: opens transports, exchanges endpoints, connects. */
    public Engine(RankRuntime runtime) throws IOException {
        this.runtime = runtime;
        JobInfo pre = runtime.preliminaryInfo();
        this.rank = pre.rank();
        this.size = pre.size();
        trace = new FtTrace(pre.option("ft-trace", "false"));
        boolean restarting = Boolean.parseBoolean(pre.option("restarted", "false"));
        if (restarting) {
            trace.takeSpareAssignment();
            trace.record(FtTrace.INIT, rank, 0);
        }
        runtime.setListener(this);
        String idleMode = pre.option("idle", "auto");
        if (!List.of("auto", "spin", "yield").contains(idleMode)) {
            throw new IOException("job option idle=" + idleMode + " must be auto, spin or yield");
        }
        int[] fast = agreeFast(pre.option("agree-fast", "auto"));
        ft.fastRange(fast[0], fast[1]);
        ft.fastSmall(fast[2]);
        ft.directMax(agreeDirect(pre.option("agree-direct", "auto")));
        failureParkNs = failureParkMicros(pre.option("failure-park-us", Long.toString(FAILURE_PARK_US_DEFAULT))) * 1000;
        String wanted = pre.option("transports", "");
        List<String> allow = wanted.isBlank() ? null : Arrays.asList(wanted.split(","));
        // A replacement (FT-MPI REBUILD) opens the transports whose reconnect can reach it: the
        // survivors connect to it over TCP and re-make their shared-memory pairs with it.
        if (restarting) {
            // Loops, not streams and lambdas, here and below: a replacement's MPI_Init is on the
            // recovery's path, and the first run of a lambda's site spins a class (docs/fault-tolerance.md, "Session 24").
            List<String> replacementAllow = new ArrayList<>();
            for (String n : REPLACEMENT_TRANSPORTS) if (allow == null || allow.contains(n)) replacementAllow.add(n);
            allow = replacementAllow;
        }
        TransportContext tc = new TransportContext(pre, this);
        Map<String, byte[]> endpoints = new LinkedHashMap<>();
        for (TransportProvider p : ServiceLoader.load(TransportProvider.class, Engine.class.getClassLoader())) {
            if (allow != null && !allow.contains(p.name()) && !p.name().equals("self")) continue;
            if (p.unavailabilityCause(tc) != null) continue;
            Transport t = p.open(tc);
            transports.add(t);
            endpoints.put(t.name(), t.localEndpoint());
        }
        transportsOpen = true;
        this.job = runtime.exchange(endpoints);
        this.waiterDuty = runtime.waiterDuty();
        if (restarting) trace.record(FtTrace.EXCHANGED, rank, 0);
        this.idleStart = idleStart(job, idleMode);
        List<Transport> order = transports;
        if (restarting) {
            // Lowest exclusivity first: TCP accepts every survivor's connection before shared
            // memory waits for the survivors' pair files, so a survivor that dials this process
            // before it makes its file (reconnect, in transport order) is never waited on in turn.
            order = new ArrayList<>(transports);
            for (int i = 1; i < order.size(); i++) { // insertion sort, stable: a handful of transports
                Transport t = order.get(i);
                int j = i;
                for (; j > 0 && order.get(j - 1).limits().exclusivity() > t.limits().exclusivity(); j--) {
                    order.set(j, order.get(j - 1));
                }
                order.set(j, t);
            }
        }
        for (Transport t : order) t.connect(job);
        if (restarting) {
            int premade = 0;
            for (Transport t : transports) premade += t.premadeConnections();
            trace.record(FtTrace.ADOPTED, premade, 0);
        }
        route = new Transport[size];
        joinLater = new boolean[size];
        eagerLimit = new int[size];
        fragment = new int[size];
        pinnedMin = new int[size];
        pinnedMax = new int[size];
        rndvInline = new int[size];
        for (int r = 0; r < size; r++) {
            for (Transport t : transports) {
                if (t.reaches(r) && (route[r] == null || t.limits().exclusivity() > route[r].limits().exclusivity())) {
                    route[r] = t;
                }
            }
            if (route[r] == null && restarting && r != rank) {
                // REBUILD, two or more ranks replaced at once: rank r is being replaced too and
                // registered after this process did (no endpoints in the table), or its process
                // died while this one registered (a warm spare registers at its assignment: its
                // table can name a process whose death the controller had not seen; the
                // transport did not wait for it, peerGone). It joins before MPI_Init returns
                // (awaitWelcome); until then its route is a placeholder that nothing uses.
                joinLater[r] = true;
                for (Transport t : transports) if (!t.name().equals("self")) route[r] = t;
            }
            if (route[r] == null) {
                close();
                throw new IOException("rank " + rank + " has no transport that reaches rank " + r
                        + " (transports: " + endpoints.keySet() + ")");
            }
            eagerLimit[r] = route[r].limits().eagerLimitBytes();
            fragment[r] = route[r].limits().maxFragmentBytes();
            pinnedMin[r] = route[r].limits().singleCopyMinBytes();
            pinnedMax[r] = route[r].limits().maxPinnedBytes();
            rndvInline[r] = route[r].limits().rendezvousInlineBytes();
        }
        classifyTransports();
        sequence = new long[size];
        deferredTo = new int[size];
        refusedIn = new int[size];
        peerFailed = new boolean[size];
        peerFailure = new String[size];
        for (int r = 0; r < size; r++) {
            if (joinLater[r]) {
                peerFailed[r] = true;
                peerFailure[r] = "its replacement has not joined yet";
            }
        }
        procFailedClass = Boolean.parseBoolean(job.option("ulfm-error-classes", "false"))
                ? ErrorClass.ERR_PROC_FAILED : ErrorClass.ERR_OTHER;
        String commMode = job.option("comm-mode", "abort");
        ftmpi = !commMode.equals("abort") && !job.option("recovery-mode", "manual").equals("ignore");
        blankMode = ftmpi && commMode.equals("blank");
        rebuildMode = ftmpi && commMode.equals("rebuild");
        contMode = ftmpi && job.option("msg-mode", "reset").equals("cont");
        restarted = Boolean.parseBoolean(job.option("restarted", "false"));
        recovered = new boolean[size];
        procIdOf = job.procIds().clone();
        lock.lock();
        try {
            synchronized (early) {
                constructed = true;
            }
            for (String[] e : early) {
                int peer = Integer.parseInt(e[0]);
                if (!stale(e, peer, procIdOf)) peerLost(peer, e[1]);
            }
            early.clear();
        } finally {
            lock.unlock();
        }
        agent = Thread.ofPlatform().daemon().name("ftmpi-progress-" + rank).unstarted(this::agentLoop);
        agent.start();
        if (restarted) {
            awaitWelcome();
            trace.record(FtTrace.WELCOMED, generation, 0);
            trace.printLater(System.err, rank, null);
        }
    }

    /**
     * Failures reported while the constructor was still exchanging endpoints and connecting (the
     * listener is registered first, the per-peer state is made later): kept, and handled once
     * the engine is complete. Guarded by itself; {@link #constructed} is written under it.
     */
    private final List<String[]> early = new ArrayList<>();

    /**
     * Whether an early report {@code e} ({peer, cause} or {peer, cause, process id}) is about a
     * process other than the one {@code procIds} (the job table) names for {@code peer}: a late
     * notice about a process that a replacement has taken over since. A warm spare that takes
     * over a rank registers while the controller still tells it of deaths that were covered
     * before (the process it replaces, or another rank's old process); taken as failures, they
     * made it report a live replacement failed (found with {@code --inject at-step=recovery.agreed}).
     */
    private static boolean stale(String[] e, int peer, long[] procIds) {
        return e.length > 2 && procIds != null && peer < procIds.length && procIds[peer] != Long.parseLong(e[2]);
    }
    private volatile boolean constructed;

    /** Process ids whose failure notice arrived (any thread; see {@link #processGone}). */
    private final java.util.Set<Long> goneProcs = java.util.concurrent.ConcurrentHashMap.newKeySet();

    @Override
    public boolean processGone(long procId) {
        return goneProcs.contains(procId);
    }

    @Override
    public boolean peerGone(int peer) {
        synchronized (early) {
            JobInfo j = job;
            for (String[] e : early) {
                if (Integer.parseInt(e[0]) == peer && (j == null || !stale(e, peer, j.procIds()))) return true;
            }
            return false;
        }
    }

    /** Splits the transports into those that route some peer ({@link #busy}) and the idle ones. */
    private void classifyTransports() {
        List<Transport> routed = new ArrayList<>(), spare = new ArrayList<>();
        for (Transport t : transports) {
            boolean used = false;
            for (Transport r : route) used |= r == t;
            (used ? routed : spare).add(t);
        }
        busy = routed.toArray(new Transport[0]);
        idleTransports = spare.toArray(new Transport[0]);
    }

    public int rank() { return rank; }
    /** The recovery timeline of this process (job option {@code ft-trace}). */
    public FtTrace trace() { return trace; }
    public int size() { return size; }
    public JobInfo job() { return job; }
    public RankRuntime runtime() { return runtime; }

    /** The transport name that carries traffic to {@code worldRank} (diagnostics, tests). */
    public String transportTo(int worldRank) { return route[worldRank].name(); }

    // ------------------------------------------------------------------ sending

    /**
     * Starts a send.
     *
     * @param context   context id of the communicator
     * @param epoch     communicator epoch
     * @param myRank    the sender's rank in the communicator (the receiver's status source)
     * @param dest      destination rank in the communicator, or {@link #PROC_NULL}
     * @param destWorld destination's world rank
     */
    public Request send(int context, int epoch, int myRank, int dest, int destWorld, int tag,
                        MemorySegment memory, long offset, long length, int mode) {
        return send(context, epoch, myRank, dest, destWorld, tag, memory, offset, null, length, mode, false);
    }

    /**
     * {@link #send} of a message whose {@code length} bytes {@code packed} produces a segment
     * at a time: an eager message is packed into a scratch buffer when sent, a rendezvous one
     * fragment by fragment as the transport takes them (never the whole message at once).
     */
    public Request sendPacked(int context, int epoch, int myRank, int dest, int destWorld, int tag,
                              PackedPayload packed, long length, int mode) {
        return send(context, epoch, myRank, dest, destWorld, tag, null, 0, packed, length, mode, false);
    }

    /**
     * {@link #send} for a caller that only waits for the request and reads its error (a blocking
     * send, a collective's internal send): an eager send that completes at once returns
     * {@link #SENT}, shared and already complete, instead of a new request, so the common small
     * message allocates nothing here.
     */
    public Request sendAndForget(int context, int epoch, int myRank, int dest, int destWorld, int tag,
                                 MemorySegment memory, long offset, long length, int mode) {
        return send(context, epoch, myRank, dest, destWorld, tag, memory, offset, null, length, mode, true);
    }

    /** The completed, successful send that {@link #sendAndForget} returns; never changes. */
    private final Request SENT = Request.completedSend(this);

    private Request send(int context, int epoch, int myRank, int dest, int destWorld, int tag,
                         MemorySegment memory, long offset, PackedPayload packed, long length, int mode,
                         boolean forget) {
        lock.lock();
        try {
            if (forget && dest >= 0 && length <= eagerLimit[destWorld] && mode != Request.SYNC && !peerFailed[destWorld]
                    && abortReason == null && ftEvents == 0 && !ftmpiSuspect(epoch) && deferred.isEmpty()) {
                try {
                    if (tryWriteFrame(destWorld, FrameHeader.EAGER, context, myRank, tag, epoch, 0, length,
                            memory, offset, (int) length)) {
                        return SENT;
                    }
                    // no room: the request below waits in the deferred queue
                } catch (IOException e) {
                    peerLost(destWorld, e.getMessage()); // and fall through: the request reports it
                }
            }
            Request r = newRequest(Request.Kind.SEND);
            r.context = context;
            r.source = myRank;
            r.peer = dest;
            r.peerWorld = destWorld;
            r.tag = tag;
            r.epoch = epoch;
            r.mode = mode;
            r.capacity = length;
            if (dest == PROC_NULL) {
                r.succeed(PROC_NULL, ANY_TAG, 0);
                return r;
            }
            if (failIfUnusable(r)) return r;
            r.memory = memory;
            r.offset = offset;
            r.packed = packed;
            try {
                if (deferredTo[destWorld] > 0 || !startSend(r)) defer(r);
            } catch (IOException e) {
                writeFailed(destWorld, e, r);
            }
            return r;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Under the lock: writes the first frame of send {@code r} (EAGER, EAGER_SYNC, or the RTS
     * of a rendezvous) and returns true, or returns false when the transport has no room for it
     * now (nothing written; contiguous payloads only: a packed one is packed and always taken).
     */
    private boolean startSend(Request r) throws IOException {
        int destWorld = r.peerWorld;
        long length = r.capacity;
        MemorySegment memory = r.memory;
        long offset = r.offset;
        if (length <= eagerLimit[destWorld]) {
            byte type = r.mode != Request.SYNC ? FrameHeader.EAGER : FrameHeader.EAGER_SYNC;
            long id = type == FrameHeader.EAGER ? 0 : r.id;
            if (r.packed != null) {
                writeFrame(destWorld, type, r.context, r.source, r.tag, r.epoch, id, 0, length,
                        packScratch(r.packed, length), 0, (int) length);
            } else if (!tryWriteFrame(destWorld, type, r.context, r.source, r.tag, r.epoch, id, length,
                    memory, offset, (int) length)) {
                return false;
            }
            if (type == FrameHeader.EAGER) r.succeed(r.peer, r.tag, length);
            else byId.put(r.id, r);
            return true;
        }
        int inline = rndvInline[destWorld];
        if (r.packed != null) {
            writeFrame(destWorld, FrameHeader.RTS, r.context, r.source, r.tag, r.epoch, r.id, 0, length,
                    inline > 0 ? packScratch(r.packed, inline) : null, 0, inline);
        } else if (!tryWriteFrame(destWorld, FrameHeader.RTS, r.context, r.source, r.tag, r.epoch, r.id, length,
                inline > 0 ? memory : null, offset, inline)) {
            return false;
        }
        r.sent = inline; // the CTS asks for the rest
        byId.put(r.id, r);
        return true;
    }

    /** Under the lock: {@code r} waits in {@link #deferred} until its first frame can be written. */
    private void defer(Request r) {
        r.deferred = true;
        deferred.add(r);
        if (deferredTo[r.peerWorld]++ == 0) deferredPeers++;
    }

    /** Under the lock: {@code r}'s first frame is written, or it failed; it leaves {@link #deferred}'s counts. */
    private void undefer(Request r) {
        r.deferred = false;
        if (--deferredTo[r.peerWorld] == 0) deferredPeers--;
    }

    /** Ranks with a deferred send; a flush pass stops once that many have refused. */
    private int deferredPeers;
    /** Per world rank: the flush pass in which a send to it was refused (its later sends wait). */
    private final int[] refusedIn;
    private int flushPass;

    /**
     * Writes the first frames of deferred sends, in order, while their transports take them; a
     * send to a rank whose earlier deferred send was refused waits (no overtaking). A transport
     * that fails a write reports the loss itself before it throws ({@link #writeFailed}), which
     * edits {@link #deferred}: the pass stops there.
     */
    private int flushDeferred() {
        int pass = ++flushPass;
        int work = 0;
        int refused = 0;
        Request failed = null;
        IOException failure = null;
        for (int i = 0; i < deferred.size() && refused < deferredPeers; i++) {
            Request r = deferred.get(i);
            if (!r.deferred || refusedIn[r.peerWorld] == pass) continue;
            try {
                if (startSend(r)) {
                    undefer(r); // stays in the list until the pass ends
                    work++;
                } else {
                    refusedIn[r.peerWorld] = pass;
                    refused++;
                }
            } catch (IOException e) {
                failed = r;
                failure = e;
                break;
            }
        }
        if (work > 0 || failed != null) {
            int kept = 0;
            for (int i = 0, n = deferred.size(); i < n; i++) {
                Request r = deferred.get(i);
                if (r.deferred) deferred.set(kept++, r);
            }
            for (int i = deferred.size() - 1; i >= kept; i--) deferred.remove(i);
        }
        if (failed != null) writeFailed(failed.peerWorld, failure, failed);
        return work;
    }

    /**
     * Under the lock: fails the deferred sends to {@code peer} (every rank: -1), except with
     * {@code keepCont} those of point-to-point contexts (message mode CONT keeps them), and
     * takes them out of {@link #deferred}.
     */
    private void failDeferred(int peer, boolean keepCont, int errorClass, String msg, int failedRank) {
        if (deferred.isEmpty()) return;
        for (Iterator<Request> it = deferred.iterator(); it.hasNext(); ) {
            Request r = it.next();
            if (!r.deferred) { // written by a flush pass that this failure interrupted
                it.remove();
                continue;
            }
            if (peer >= 0 && r.peerWorld != peer) continue;
            if (keepCont && (r.context & 1) == 0) continue;
            it.remove();
            undefer(r);
            if (!r.complete) r.fail(errorClass, msg, failedRank);
        }
    }

    /** A request that is already complete with success (buffered sends, null operations). */
    public Request completedRequest(Request.Kind kind, int peer, int tag, long bytes) {
        lock.lock();
        try {
            Request r = newRequest(kind);
            r.peer = peer;
            r.tag = tag;
            r.succeed(peer, tag, bytes);
            return r;
        } finally {
            lock.unlock();
        }
    }

    /**
     * A request that code outside the engine completes with {@link #completeExternal} (a
     * non-blocking collective running as a schedule). It counts as outstanding, so the
     * progress agent keeps the transports moving while it is pending.
     */
    public Request externalRequest() {
        lock.lock();
        try {
            Request r = newRequest(Request.Kind.COLL);
            r.peer = ANY_SOURCE;
            r.peerWorld = -1;
            r.tag = ANY_TAG;
            return r;
        } finally {
            lock.unlock();
        }
    }

    /** Completes a request made by {@link #externalRequest}; {@code errorClass} 0 is success. */
    public void completeExternal(Request r, int errorClass, String message, int failedRank) {
        lock.lock();
        try {
            if (r.complete) return;
            if (errorClass == ErrorClass.SUCCESS) r.succeed(ANY_SOURCE, ANY_TAG, 0);
            else r.fail(errorClass, message, failedRank);
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------ receiving

    /**
     * Posts a receive.
     *
     * @param source      source rank in the communicator, {@link #ANY_SOURCE} or {@link #PROC_NULL}
     * @param sourceWorld the source's world rank, or -1 for ANY_SOURCE
     */
    public Request receive(int context, int source, int sourceWorld, int tag,
                           MemorySegment memory, long offset, long capacity) {
        return receive(context, generation, source, sourceWorld, tag, memory, offset, capacity);
    }

    /**
     * Posts a receive that matches messages of communicator epoch {@code epoch} only (the epoch
     * of the communicator, as in {@link #send}).
     */
    public Request receive(int context, int epoch, int source, int sourceWorld, int tag,
                           MemorySegment memory, long offset, long capacity) {
        return receive(context, epoch, source, sourceWorld, tag, memory, offset, null, capacity);
    }

    /** {@link #receive} into {@code packed}, which takes the message a fragment at a time as it arrives. */
    public Request receivePacked(int context, int epoch, int source, int sourceWorld, int tag,
                                 PackedPayload packed, long capacity) {
        return receive(context, epoch, source, sourceWorld, tag, null, 0, packed, capacity);
    }

    private Request receive(int context, int epoch, int source, int sourceWorld, int tag,
                            MemorySegment memory, long offset, PackedPayload packed, long capacity) {
        lock.lock();
        try {
            Request r = newRequest(Request.Kind.RECV);
            r.context = context;
            r.epoch = epoch;
            r.peer = source;
            r.peerWorld = sourceWorld;
            r.tag = tag;
            r.memory = memory;
            r.offset = offset;
            r.packed = packed;
            r.capacity = capacity;
            if (source == PROC_NULL) {
                r.succeed(PROC_NULL, ANY_TAG, 0);
                return r;
            }
            if (ftmpiSuspect(epoch) && ftmpiBlocked(r)) return r;
            MatchQueues q = queues(context);
            MatchQueues.Unexpected u = q.findUnexpected(source, sourceWorld, tag, epoch, true);
            if (u != null) {
                deliverUnexpected(r, u, q.cont ? contSource(context, u.sourceWorld, u.source, u.epoch) : u.source);
                keepUnexpected(u); // out of the queue, and no matched probe holds it (this receive took it)
            } else if (failIfUnusable(r)) {
                return r;
            } else {
                q.posted.add(r);
            }
            return r;
        } finally {
            lock.unlock();
        }
    }

    /** A message found by {@link #probe}: its envelope, and (for matched probes) the message. */
    public record Probed(int source, int tag, long length, MatchQueues.Unexpected message) {}

    /**
     * Looks for a matching message without receiving it; with {@code remove}, takes it out of
     * matching (MPI_Improbe) so that only {@link #receiveMatched} can receive it. {@code epoch}:
     * the communicator's, as for {@link #receive}.
     */
    public Probed probe(int context, int epoch, int source, int sourceWorld, int tag, boolean remove) throws P2pException {
        lock.lock();
        try {
            progressLocked();
            if (ftmpiSuspect(epoch)) ftmpiProbeCheck(context);
            MatchQueues q = queues(context);
            MatchQueues.Unexpected u = q.findUnexpected(source, sourceWorld, tag, generation, remove);
            if (u != null) {
                int src = q.cont ? contSource(context, u.sourceWorld, u.source, u.epoch) : u.source;
                return new Probed(src, u.tag, u.length, remove ? u : null);
            }
            if (abortReason != null) throw new P2pException(ErrorClass.ERR_OTHER, abortReason);
            if (sourceWorld >= 0 && peerFailed[sourceWorld]) {
                throw new P2pException(procFailedClass, "probe: rank " + sourceWorld + " has failed: "
                        + peerFailure[sourceWorld], sourceWorld);
            }
            return null;
        } finally {
            lock.unlock();
        }
    }

    /** Receives a message previously taken by a matched probe. */
    public Request receiveMatched(Probed p, MemorySegment memory, long offset, long capacity) {
        lock.lock();
        try {
            Request r = newRequest(Request.Kind.RECV);
            r.peer = p.source();
            r.peerWorld = p.message().sourceWorld;
            r.tag = p.tag();
            r.memory = memory;
            r.offset = offset;
            r.capacity = capacity;
            deliverUnexpected(r, p.message(), p.source());
            return r;
        } finally {
            lock.unlock();
        }
    }

    /** Cancels a receive that has not matched yet; sends cannot be cancelled once started. */
    public boolean cancel(Request r) {
        lock.lock();
        try {
            if (!takeBack(r)) return false;
            r.cancelled = true;
            r.succeed(r.peer, r.tag, 0);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Under the lock: removes a receive that has not matched yet from its posted queue. */
    private boolean takeBack(Request r) {
        if (r.complete || r.kind != Request.Kind.RECV) return false;
        MatchQueues q = contexts.get(r.context);
        return q != null && q.posted.remove(r);
    }

    // ------------------------------------------------------------------ waiting

    /** Progresses until {@code r} completes (spin, yield, then park; never forever on a dead peer). */
    public void await(Request r) {
        await(r, false);
    }

    /** Progresses until {@code r} completes (true) or, with {@code untilDetected}, a failure awaits recovery (false). */
    private boolean await(Request r, boolean untilDetected) {
        int idle = 0;
        while (!r.complete) {
            if (untilDetected && detected) return false;
            int work = 0;
            if (lock.tryLock()) {
                try {
                    work = progressLocked();
                } finally {
                    lock.unlock();
                }
            }
            idle = work > 0 ? 0 : pause(idle);
        }
        return true;
    }

    /** Progresses once and tells whether {@code r} is complete. */
    public boolean test(Request r) {
        if (r.complete) return true;
        if (lock.tryLock()) {
            try {
                progressLocked();
            } finally {
                lock.unlock();
            }
        }
        return r.complete;
    }

    /** Progresses once (used by wait-any/some loops); returns the work done. */
    public int progress() {
        if (!lock.tryLock()) return 0;
        try {
            return progressLocked();
        } finally {
            lock.unlock();
        }
    }

    /** Idle polls spent spinning, then yielding, before a waiting thread starts to park. */
    private static final int IDLE_SPIN = 256, IDLE_YIELD = 20_000;

    /**
     * Where this engine's waiters start: at 0 (spin first) when this host has a core for each
     * of the job's ranks on it, at {@link #IDLE_SPIN} (yield at once, Open MPI's
     * yield-when-idle, which mpirun turns on when it oversubscribes) when it has fewer: a rank
     * that spins then holds the core its peer needs to make the progress it waits for.
     * Job option {@code idle=spin|yield} overrides the choice.
     */
    private final int idleStart;

    /** {@link RankRuntime#waiterDuty}, or null: run by threads waiting in {@link #pause}. */
    private Runnable waiterDuty;
    /** Idle polls of this engine's waiters (plain: a lost update only shifts a duty call). */
    private int idlePolls;
    /** Waiters run {@link #waiterDuty} every this many idle polls (a power of two) before they park. */
    private static final int WAITER_DUTY_POLLS = 256;

    /** The adaptive length of the spin phase (see {@link SpinBudget}). */
    private final SpinBudget spin = new SpinBudget();

    /**
     * {@link #idle} from this engine's starting point: call with 0 after each piece of work. The
     * spin phase lasts {@link SpinBudget#polls} polls; the first yield after it is timed, and a
     * yield during which another thread had the core (the peer of a ping-pong that shares it)
     * shortens the next spin phases.
     */
    public int pause(int idle) {
        Runnable duty = waiterDuty;
        // the runtime's work (the detector's round) costs a clock read when nothing is due: every
        // WAITER_DUTY_POLLS idle polls while spinning or yielding, at every park
        if (duty != null && ((++idlePolls & (WAITER_DUTY_POLLS - 1)) == 0 || idle >= IDLE_YIELD)) duty.run();
        if (idle <= IDLE_SPIN && idleStart == 0) {
            if (idle == 0) spin.streakStarted();
            if (idle < spin.polls()) {
                Thread.onSpinWait();
                return idle + 1;
            }
            long t0 = System.nanoTime();
            Thread.yield();
            spin.spent(System.nanoTime() - t0);
            return IDLE_SPIN + 1;
        }
        int i = Math.max(idle, idleStart);
        if (i < IDLE_YIELD) return idle(i);
        Thread t = Thread.currentThread(); // idle for tens of ms: a failure notice wakes it
        parked.add(t);
        try {
            return idle(i);
        } finally {
            parked.remove(t);
        }
    }

    /**
     * Threads of this engine's waiters that are parking ({@link #pause} past the yield phase):
     * {@link #peerLost} and {@link #abort} unpark them, so that a failure is seen at once, not at
     * the end of a park of up to 800 us. Only the park phase touches it.
     */
    private final java.util.Set<Thread> parked = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private void wakeParked() {
        for (Thread t : parked) LockSupport.unpark(t);
    }

    /**
     * One progress step for a thread that waits for something the engine does not track: returns
     * the idle count to pass next time (0 after work, else one more {@link #pause}).
     */
    public int progressOrPause(int idle) {
        return progress() > 0 ? 0 : pause(idle);
    }

    /** Whether waiters of this engine yield at once (oversubscribed host, or {@code idle=yield}). */
    public boolean yieldsWhenIdle() {
        return idleStart > 0;
    }

    /**
     * Job option {@code agree-fast}: the sizes {min, max, smallMax} of the communicators whose
     * agreement tries the fast path first (min to max, and 2 to smallMax). {@code auto} (the
     * default): more than 16 members, and up to 4; {@code N}: 2 to N members; {@code 0}: none.
     */
    static int[] agreeFast(String value) throws IOException {
        if (value.trim().equals("auto")) return new int[] {FtProtocol.FAST_MIN_AUTO, Integer.MAX_VALUE, FtProtocol.FAST_SMALL_AUTO};
        try {
            int n = Integer.parseInt(value.trim());
            if (n >= 0) return new int[] {2, n, 0};
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IOException("job option agree-fast=" + value
                + " must be auto (the default: up to 4 and more than 16 members) or a number of members (0 or more; 0: no fast path)");
    }

    /**
     * Job option {@code agree-direct}: the fast path of communicators of up to this many members
     * exchanges all-to-all; {@code auto} (the default) is {@link FtProtocol#DIRECT_MAX_AUTO}.
     */
    static int agreeDirect(String value) throws IOException {
        if (value.trim().equals("auto")) return FtProtocol.DIRECT_MAX_AUTO;
        try {
            int n = Integer.parseInt(value.trim());
            if (n >= 0 && n <= FtProtocol.DIRECT_LIMIT) return n;
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IOException("job option agree-direct=" + value + " must be auto (the default: up to "
                + FtProtocol.DIRECT_MAX_AUTO + " members) or a number of members from 0 to " + FtProtocol.DIRECT_LIMIT);
    }

    private static int idleStart(JobInfo job, String mode) {
        if (mode.equals("spin")) return 0;
        if (mode.equals("yield")) return IDLE_SPIN;
        int rank = job.rank();
        String[] hosts = job.hosts();
        if (hosts == null || hosts.length <= rank || hosts[rank] == null) return 0;
        int local = 0;
        for (String h : hosts) if (hosts[rank].equals(h)) local++;
        return local > hostCpus(job.options()) ? IDLE_SPIN : 0;
    }

    /**
     * The CPUs of this rank's host: the launcher's CPU set (job option {@code host-cpus}), else
     * this JVM's. Not {@link Runtime#availableProcessors()} alone: a rank bound to one CPU
     * ({@code ftmpirun --bind-to core}) sees 1 there, and is not oversubscribed for that.
     */
    private static int hostCpus(Map<String, String> options) {
        String list = options.get(org.ftmpi.runtime.Binding.HOST_CPUS);
        if (list != null) {
            try {
                return org.ftmpi.runtime.Binding.parseList(list).size();
            } catch (IllegalArgumentException e) {
                // not from ftmpirun; fall back to this JVM's view
            }
        }
        return Runtime.getRuntime().availableProcessors();
    }

    /**
     * One step of the idle strategy; returns the new idle count. A waiter spins first (each
     * step follows a poll of the transports), then yields its core (so that more ranks than
     * cores keep running, as Open MPI's yield-when-idle), and only after tens of milliseconds
     * of nothing parks, from 50 us up to 800 us: a message that arrives within a typical
     * exchange is seen by a running thread, never by a parked one.
     */
    public static int idle(int idle) {
        if (idle < IDLE_SPIN) {
            Thread.onSpinWait();
        } else if (idle < IDLE_YIELD) {
            Thread.yield();
        } else {
            int shift = Math.min(idle - IDLE_YIELD, 4);
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(50L << shift));
        }
        return idle + 1;
    }

    private int progressLocked() {
        USER_STEPS.setOpaque(this, ++steps);
        return step();
    }

    private int step() {
        completedInStep = false;
        int work = 0;
        for (Transport t : busy) work += t.progress();
        if ((steps & (IDLE_POLL_PERIOD - 1)) == 0) {
            for (Transport t : idleTransports) work += t.progress();
        }
        if (!deferred.isEmpty()) work += flushDeferred();
        if (!pumping.isEmpty()) work += pump();
        return work;
    }

    /**
     * The agent progresses outstanding operations when no application thread has made a
     * progress step for a whole sleep. On a machine with as many busy ranks as cores every
     * wake-up preempts a rank, and a timed wake-up costs 60-100 us of CPU on the 2-vCPU VM, so:
     * <ul>
     * <li>nothing outstanding: it sleeps without a timeout ({@link #sleepUntilPosted}) until the
     *     application posts a non-blocking operation ({@link #posted});
     * <li>something outstanding while an application thread makes progress steps (it waits in
     *     MPI): it is not needed and sleeps 2 ms, doubling up to {@link #AGENT_IDLE_MAX_NS}
     *     while that lasts (a ping-pong woke it ~440 times a second with a fixed 2 ms);
     * <li>something outstanding and no application step for a whole sleep: it makes a step and
     *     sleeps {@link #AGENT_PERIOD_NS} while steps find work (a rendezvous streams), doubling
     *     up to {@link #AGENT_NEEDED_MAX_NS} while they find none (a receive posted long before
     *     its message: 5 000 wake-ups a second at a fixed 200 us, a third of a core here).
     * </ul>
     */
    private static final long AGENT_PERIOD_NS = 200_000, AGENT_NEEDED_MAX_NS = 1_600_000;
    private static final long AGENT_IDLE_MIN_NS = 2_000_000, AGENT_IDLE_MAX_NS = 8_000_000;

    /**
     * The agent's next timed sleep: while it is needed, its period after a step that found work
     * (or on becoming needed), else {@code previous} doubled up to {@link #AGENT_NEEDED_MAX_NS};
     * while it is not needed, {@code previous} doubled from 2 ms up to {@link #AGENT_IDLE_MAX_NS}.
     */
    static long agentParkNs(long previous, boolean needed, boolean worked) {
        if (needed) {
            return worked || previous >= AGENT_IDLE_MIN_NS ? AGENT_PERIOD_NS : Math.min(AGENT_NEEDED_MAX_NS, previous * 2);
        }
        return previous < AGENT_IDLE_MIN_NS ? AGENT_IDLE_MIN_NS : Math.min(AGENT_IDLE_MAX_NS, previous * 2);
    }

    /**
     * A sleep without a timeout that a post ended sooner than this saved fewer timed wake-ups
     * than it cost (the post's wake-up and the check after it): the agent then keeps to timed
     * sleeps for a while ({@link #agentCooldownNs}), so that a loop of non-blocking operations
     * does not wake it at every post.
     */
    private static final long AGENT_SLEEP_WORTH_NS = 2 * AGENT_IDLE_MAX_NS;
    private static final long AGENT_COOLDOWN_MIN_NS = AGENT_SLEEP_WORTH_NS, AGENT_COOLDOWN_MAX_NS = 1_000_000_000;

    /**
     * How long after a post woke it the agent keeps to timed sleeps: none after a sleep that was
     * worth it ({@code slept} at least {@link #AGENT_SLEEP_WORTH_NS}), else {@code previous}
     * doubled from {@link #AGENT_COOLDOWN_MIN_NS} up to a second (at most one wasted wake-up a
     * second in a tight loop of non-blocking operations).
     */
    static long agentCooldownNs(long previous, long slept) {
        if (slept >= AGENT_SLEEP_WORTH_NS) return 0;
        return Math.min(AGENT_COOLDOWN_MAX_NS, Math.max(AGENT_COOLDOWN_MIN_NS, previous * 2));
    }

    /** Set while the agent sleeps without a timeout; the first {@link #posted} after it clears it and wakes the agent. */
    private volatile boolean agentAsleep;

    /**
     * The application posted a non-blocking operation ({@code mpi} facade: iSend, iRecv, start,
     * imRecv, non-blocking collectives): it may compute now while {@code r} needs progress. If
     * the agent sleeps without a timeout, wakes it; otherwise costs one volatile read, so a
     * loop of posts pays no system call. Call after the post returned (its progress lock is
     * released): the agent decides to sleep under that lock after setting the flag, so either
     * it saw this request outstanding or this read sees the flag.
     */
    public void posted(Request r) {
        if (agentAsleep && !r.complete) {
            agentAsleep = false;
            LockSupport.unpark(agent);
        }
    }

    /** Whether the agent sleeps without a timeout (nothing outstanding); for tests. */
    boolean agentAsleep() {
        return agentAsleep;
    }

    /**
     * Sleeps until a {@link #posted} operation (or {@link #close}) wakes the agent, unless a
     * request is outstanding or a thread holds the progress lock; returns whether it slept.
     */
    private boolean sleepUntilPosted() {
        agentAsleep = true;
        if (!lock.tryLock()) {
            agentAsleep = false;
            return false;
        }
        try {
            if (outstanding > 0) {
                agentAsleep = false;
                return false;
            }
        } finally {
            lock.unlock();
        }
        while (agentAsleep && !closed) LockSupport.park(this);
        agentAsleep = false;
        return true;
    }

    private void agentLoop() {
        preloadFailurePath();
        int seen = (int) USER_STEPS.getOpaque(this);
        long parkNs = AGENT_PERIOD_NS, cooldownNs = 0, wokenAt = System.nanoTime();
        while (!closed) {
            int pending = (int) OUTSTANDING.getOpaque(this);
            if (pending == 0 && System.nanoTime() - wokenAt >= cooldownNs) {
                long t0 = System.nanoTime();
                if (sleepUntilPosted()) {
                    wokenAt = System.nanoTime();
                    cooldownNs = agentCooldownNs(cooldownNs, wokenAt - t0);
                    seen = (int) USER_STEPS.getOpaque(this);
                    parkNs = AGENT_PERIOD_NS; // the application may compute now: check after one period
                    LockSupport.parkNanos(parkNs);
                    pending = (int) OUTSTANDING.getOpaque(this);
                } else {
                    LockSupport.parkNanos(parkNs);
                }
            } else {
                LockSupport.parkNanos(parkNs);
            }
            int now = (int) USER_STEPS.getOpaque(this);
            boolean needed = pending > 0 && now == seen;
            seen = now;
            boolean worked = false;
            if (needed && lock.tryLock()) {
                try {
                    steps++;
                    worked = step() > 0;
                } catch (RuntimeException e) {
                    System.err.println("ftmpi: rank " + rank + ": progress agent: " + e);
                } finally {
                    lock.unlock();
                }
            }
            parkNs = agentParkNs(parkNs, needed, worked);
        }
    }

    /**
     * Classes that only a failure and its recovery use, found with {@code -Xlog:class+load} and
     * {@code -Xlog:class+init} on the ranks of {@code bench ft-recover}: loaded and initialized
     * by the progress agent as it starts, so that the first failure does not load them on its
     * critical path (docs/fault-tolerance.md, "Cold failure path"). Initialized, not only
     * loaded, since session 16: C2 compiles a {@code new} of a class not initialized yet as a
     * trap, so the first failure deoptimised the compiled collective it interrupted ({@code
     * DefaultCollectives.allReduce} at {@code Comm.throwIfFailed}'s {@code new P2pException}, in
     * every survivor of an np 4 job killed at call 20 000). A class missing here only means it
     * is loaded on demand.
     */
    private static final String[] FAILURE_PATH_CLASSES = {"org.ftmpi.p2p.Agreement", "org.ftmpi.p2p.Agreement$Contrib",
        "org.ftmpi.p2p.Engine$Decision", "org.ftmpi.p2p.MatchList$1", "java.util.NoSuchElementException",
        "java.util.TreeMap$Values", "java.util.TreeMap$ValueIterator", "java.util.concurrent.ConcurrentHashMap$KeyIterator",
        "mpi.ErrorCodes", "mpi.Recovery", "org.ftmpi.p2p.P2pException", "mpi.MPIException", "mpi.ProcFailedException",
        "mpi.RevokedException", "java.io.IOException", "org.ftmpi.runtime.ControlClient$Declared",
        "org.ftmpi.p2p.FtTrace$Late", "org.ftmpi.transport.shm.ShmTransport$Settle", "java.util.concurrent.ScheduledThreadPoolExecutor",
        "java.util.concurrent.ScheduledThreadPoolExecutor$ScheduledFutureTask",
        "java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue", "mpi.BlankColls$Dense", "mpi.Recovery$TraceLine"};

    private static void preloadFailurePath() {
        org.ftmpi.runtime.Preload.classes(Engine.class.getClassLoader(), FAILURE_PATH_CLASSES);
    }

    // ------------------------------------------------------------------ frames in

    /** Set when a frame of the current progress step completed a request (see {@link #returnEarly}). */
    private boolean completedInStep;

    /**
     * True once a frame handed over in this progress step completed a receive or a synchronous
     * send: a transport reading a batch returns then, so that the waiting thread sees its request
     * complete before the transport looks at (and waits for the cache line of) the next record.
     */
    @Override
    public boolean returnEarly() {
        return completedInStep;
    }

    @Override
    public void onFrame(int peer, MemorySegment h, MemorySegment payload) {
        if (peerFailed[peer]) return; // fenced: traffic of a failed process is dropped
        switch (FrameHeader.type(h)) {
            case FrameHeader.EAGER, FrameHeader.EAGER_SYNC, FrameHeader.RTS -> onEnvelope(peer, h, payload, 0, payload.byteSize());
            case FrameHeader.CTS -> onCts(h);
            case FrameHeader.DATA -> onData(h, payload);
            case FrameHeader.FT -> onFt(peer, h, payload, 0, (int) payload.byteSize());
            case FrameHeader.SYNC_ACK -> {
                Request s = byId.remove(FrameHeader.sendRequest(h));
                if (s != null) {
                    s.succeed(s.peer, s.tag, s.capacity);
                    completedInStep = true;
                }
            }
            default -> peerLost(peer, "unknown frame type " + FrameHeader.type(h));
        }
    }

    /** A frame whose payload is {@code length} bytes of {@code memory} at {@code offset}: matched without a slice. */
    @Override
    public void onFrame(int peer, MemorySegment h, MemorySegment memory, long offset, int length) {
        byte type = FrameHeader.type(h);
        if ((type == FrameHeader.EAGER || type == FrameHeader.EAGER_SYNC || type == FrameHeader.RTS) && !peerFailed[peer]) {
            onEnvelope(peer, h, memory, offset, length);
        } else if (type == FrameHeader.FT && !peerFailed[peer]) {
            onFt(peer, h, memory, offset, length);
        } else { // a CTS or SYNC_ACK has no payload: no slice for it
            onFrame(peer, h, slice(memory, offset, length));
        }
    }

    /** {@code n} bytes of {@code m} from {@code at}; no segment object for none (a CTS, an RTS without inline data). */
    private static MemorySegment slice(MemorySegment m, long at, long n) {
        return n == 0 ? MemorySegment.NULL : m.asSlice(at, n);
    }

    /** An FT frame (revoke, agreement, welcome, failure report) whose payload is {@code length} bytes of {@code memory} at {@code offset}. */
    private void onFt(int peer, MemorySegment h, MemorySegment memory, long offset, int length) {
        int ctx = FrameHeader.context(h);
        if (trace.messages() && traced(ctx)) trace.record(FtTrace.RECEIVED, FrameHeader.tag(h), peer);
        if (ctx == WELCOME) welcome(FrameHeader.epoch(h), memory.asSlice(offset, length));
        else if (ctx == FAILED) failedReported(peer, FrameHeader.tag(h), memory.asSlice(offset, length));
        else if (ctx >= 0 && FrameHeader.epoch(h) != generation) otherEpochFt(peer, h, memory.asSlice(offset, length));
        else ft.onFrame(peer, ctx, FrameHeader.tag(h), memory, offset, length);
    }

    /** An EAGER, EAGER_SYNC or RTS frame whose payload is {@code length} bytes of {@code payload} at {@code at}. */
    private void onEnvelope(int peer, MemorySegment h, MemorySegment payload, long at, long length) {
        byte type = FrameHeader.type(h);
        int source = FrameHeader.source(h);
        int tag = FrameHeader.tag(h);
        MatchQueues q = queues(FrameHeader.context(h));
        int epoch = FrameHeader.epoch(h);
        Request r = q.takePosted(source, peer, tag, epoch);
        if (q.cont) source = contSource(FrameHeader.context(h), peer, source, epoch);
        if (r == null) {
            if (epoch < generation && !q.cont) return; // RESET: a message of an older epoch is never delivered
            MatchQueues.Unexpected u = unexpectedEntry();
            u.type = type;
            u.source = source;
            u.sourceWorld = peer;
            u.tag = tag;
            u.epoch = epoch;
            u.sendId = FrameHeader.sendRequest(h);
            u.length = FrameHeader.length(h);
            u.data = payloadArray((int) length);
            MemorySegment.copy(payload, at, u.data, 0, length);
            q.unexpected.add(u);
            return;
        }
        r.peerWorld = peer;
        if (type == FrameHeader.RTS) {
            acceptRendezvous(r, source, tag, peer, FrameHeader.sendRequest(h), FrameHeader.length(h),
                    slice(payload, at, length));
        } else {
            copyIn(r, source, tag, payload, at, length);
            completedInStep = true;
            if (type == FrameHeader.EAGER_SYNC) ack(peer, FrameHeader.sendRequest(h));
        }
    }

    /** Delivers {@code u} to {@code r}; {@code source} is the rank its status names. */
    private void deliverUnexpected(Request r, MatchQueues.Unexpected u, int source) {
        r.peerWorld = u.sourceWorld;
        if (u.type == FrameHeader.RTS) {
            acceptRendezvous(r, source, u.tag, u.sourceWorld, u.sendId, u.length, u.data);
        } else {
            copyIn(r, source, u.tag, u.data, 0, u.data.byteSize());
            if (u.type == FrameHeader.EAGER_SYNC) ack(u.sourceWorld, u.sendId);
            keepPayloadArray(u.data); // copied out (or unpacked) above; nothing else reads it
            u.data = null;
        }
    }

    /**
     * Regions of unexpected eager payloads that were delivered, for the next unexpected messages
     * of the same length (Open MPI's free lists for its unexpected fragments): a loop of equal
     * messages that arrive before their receives are posted (a collective's partner that is
     * ahead) then copies each into the region of an earlier one instead of a new array and
     * segment. Up to {@value #PAYLOAD_ARRAYS} regions of up to {@value #PAYLOAD_ARRAY_MAX} bytes.
     * Touched under {@link #lock} only, as the match queues are.
     */
    private final MemorySegment[] payloadArrays = new MemorySegment[PAYLOAD_ARRAYS];
    /**
     * The payload of every zero-byte unexpected message (a barrier's round, a synchronisation):
     * shared, since it holds nothing. Without it each one cost an array, a segment and its
     * session, some 72 bytes per barrier call at np 4.
     */
    private static final MemorySegment NO_PAYLOAD = MemorySegment.ofArray(new byte[0]);
    private int payloadVictim;
    static final int PAYLOAD_ARRAYS = 8, PAYLOAD_ARRAY_MAX = 16 * 1024;

    private MemorySegment payloadArray(int length) {
        if (length == 0) return NO_PAYLOAD;
        if (length <= PAYLOAD_ARRAY_MAX) {
            for (int i = 0; i < PAYLOAD_ARRAYS; i++) {
                MemorySegment b = payloadArrays[i];
                if (b != null && b.byteSize() == length) {
                    payloadArrays[i] = null;
                    return b;
                }
            }
        }
        return MemorySegment.ofArray(new byte[length]);
    }

    /** Entries of delivered unexpected messages, for the next ones (under {@link #lock}). */
    private final MatchQueues.Unexpected[] unexpectedEntries = new MatchQueues.Unexpected[64];
    private int unexpectedKept;

    private MatchQueues.Unexpected unexpectedEntry() {
        if (unexpectedKept == 0) return new MatchQueues.Unexpected();
        MatchQueues.Unexpected u = unexpectedEntries[--unexpectedKept];
        unexpectedEntries[unexpectedKept] = null;
        return u;
    }

    /** Keeps {@code u}, delivered and taken off its queue by a receive, for {@link #unexpectedEntry}. */
    private void keepUnexpected(MatchQueues.Unexpected u) {
        if (u.data != null || u.list != null || unexpectedKept == unexpectedEntries.length) return; // RTS, or still queued
        unexpectedEntries[unexpectedKept++] = u;
    }

    private void keepPayloadArray(MemorySegment b) {
        if (b.byteSize() == 0 || b.byteSize() > PAYLOAD_ARRAY_MAX) return;
        for (int i = 0; i < PAYLOAD_ARRAYS; i++) {
            if (payloadArrays[i] == null) {
                payloadArrays[i] = b;
                return;
            }
        }
        payloadArrays[payloadVictim++ & (PAYLOAD_ARRAYS - 1)] = b;
    }

    /** Completes receive {@code r} with the {@code length} bytes of {@code payload} at {@code from}. */
    private void copyIn(Request r, int source, int tag, MemorySegment payload, long from, long length) {
        long n = Math.min(length, r.capacity);
        if (n > 0) place(r, 0, payload, from, n);
        if (length > r.capacity) {
            r.statusSource = source;
            r.statusTag = tag;
            r.statusBytes = n;
            r.errorClass = ErrorClass.ERR_TRUNCATE;
            r.errorMessage = "message truncated: " + length + " bytes arrived from rank " + source
                    + " (tag " + tag + ") but the receive buffer holds " + r.capacity;
            r.succeedKeepingError();
        } else {
            r.succeed(source, tag, length);
        }
    }

    /**
     * Matches a rendezvous request: copies the data it carried inline, then asks the sender for
     * the rest (the CTS carries the bytes wanted in all; the sender resumes after the inline part).
     */
    private void acceptRendezvous(Request r, int source, int tag, int peer, long sendId, long length,
                                  MemorySegment inline) {
        r.statusSource = source;
        r.statusTag = tag;
        r.expected = Math.min(length, r.capacity);
        r.truncated = length > r.capacity;
        long first = Math.min(inline.byteSize(), r.expected);
        if (first > 0) place(r, 0, inline, first);
        r.received = first;
        if (r.truncated) {
            r.errorClass = ErrorClass.ERR_TRUNCATE;
            r.errorMessage = "message truncated: " + length + " bytes arrived from rank " + source
                    + " (tag " + tag + ") but the receive buffer holds " + r.capacity;
        }
        boolean done = r.received >= r.expected;
        if (peerFailed[peer]) { // a matched probe's message, received after its sender failed
            if (done) finishRendezvousReceive(r);
            else failForPeer(r, peer);
            return;
        }
        if (!done) byId.put(r.id, r);
        try {
            writeFrame(peer, FrameHeader.CTS, 0, 0, 0, 0, sendId, r.id, r.expected, null, 0, 0);
        } catch (IOException e) {
            writeFailed(peer, e, done ? null : r);
        }
        if (done) finishRendezvousReceive(r);
    }

    private void finishRendezvousReceive(Request r) {
        r.statusBytes = r.expected;
        r.succeedKeepingError();
    }

    private void onCts(MemorySegment h) {
        Request s = byId.remove(FrameHeader.sendRequest(h));
        if (s == null) return;
        s.remoteId = FrameHeader.recvRequest(h);
        s.toSend = FrameHeader.length(h);
        if (s.sent >= s.toSend) { // the inline part was all the receiver wanted
            s.succeed(s.peer, s.tag, s.capacity);
        } else {
            pumping.add(s);
            pump();
        }
    }

    private void onData(MemorySegment h, MemorySegment payload) {
        Request r = byId.get(FrameHeader.recvRequest(h));
        if (r == null) return;
        long n = payload.byteSize();
        if ((FrameHeader.flags(h) & FrameHeader.FLAG_PLACED) == 0) {
            place(r, FrameHeader.length(h), payload, n);
        }
        received(r, n);
    }

    /** {@code n} more bytes of rendezvous receive {@code r} are in place. */
    private void received(Request r, long n) {
        r.received += n;
        if (r.received >= r.expected) {
            byId.remove(r.id);
            finishRendezvousReceive(r);
        }
    }

    @Override
    public void onPlaced(int peer, MemorySegment h, long address, int length) {
        if (peerFailed[peer]) return; // fenced, as in onFrame
        Request r = byId.get(FrameHeader.recvRequest(h));
        if (r != null) received(r, length);
    }

    /**
     * Where the DATA fragment {@code h} lands in its receive request's memory (the transport
     * may copy it there itself), or null when no request expects it.
     */
    @Override
    public MemorySegment placement(int peer, MemorySegment h) {
        Request r = placedReceive(peer, h);
        return r == null ? null : r.memory.asSlice(r.offset + FrameHeader.length(h), FrameHeader.payloadLength(h));
    }

    /** {@link #placement} as an address, without a slice: 0 unless the receive's memory is native. */
    @Override
    public long placementAddress(int peer, MemorySegment h) {
        Request r = placedReceive(peer, h);
        if (r == null || !r.memory.isNative()) return 0;
        long at = r.offset + FrameHeader.length(h);
        if (at + FrameHeader.payloadLength(h) > r.memory.byteSize()) return 0;
        return r.memory.address() + at;
    }

    /** The receive that the DATA fragment {@code h} from {@code peer} may be placed into directly, or null. */
    private Request placedReceive(int peer, MemorySegment h) {
        if (FrameHeader.type(h) != FrameHeader.DATA || peerFailed[peer]) return null;
        Request r = byId.get(FrameHeader.recvRequest(h));
        if (r == null || r.peerWorld != peer || r.packed != null) return null;
        long at = FrameHeader.length(h);
        int n = FrameHeader.payloadLength(h);
        return at < 0 || n < 0 || at + n > r.expected ? null : r;
    }

    /** Puts {@code n} received bytes of {@code r}'s message, starting at byte {@code at}, where they belong. */
    private static void place(Request r, long at, MemorySegment src, long n) {
        place(r, at, src, 0, n);
    }

    /** {@link #place} from {@code src} at {@code from}. */
    private static void place(Request r, long at, MemorySegment src, long from, long n) {
        if (r.packed != null) r.packed.unpack(src, from, n); // fragments arrive in order: at == bytes so far
        else MemorySegment.copy(src, from, r.memory, r.offset + at, n);
    }

    /** Reused buffer the next {@code n} bytes of a packed send are packed into before the transport copies them. */
    private MemorySegment packScratch(PackedPayload packed, long n) {
        MemorySegment s = scratch;
        if (s == null || s.byteSize() < n) scratch = s = MemorySegment.ofArray(new byte[(int) Math.max(n, 64 * 1024)]);
        packed.pack(s, 0, n);
        return s;
    }

    /** {@link #packScratch}'s buffer (grows to the largest eager message or fragment packed). */
    private MemorySegment scratch;

    /**
     * Streams DATA fragments of matched rendezvous sends while the transports take them. Large
     * fragments of native memory go through {@link Transport#sendPinned}; such a send completes
     * only once the transport has {@link Transport#released released} its memory.
     */
    private int pump() {
        int work = 0;
        Request failed = null;
        IOException failure = null;
        // By index, not by iterator: this runs at every progress step while a large message
        // streams, and the iterator was not scalar-replaced (137 MB of garbage per 2-second bw
        // run at 512 KiB, a young collection every second or two stopping both ranks 7-32 ms).
        for (int i = 0; i < pumping.size(); i++) {
            Request s = pumping.get(i);
            if (s.complete) {
                pumping.remove(i--);
                continue;
            }
            int peer = s.peerWorld;
            Transport t = route[peer];
            int frag = fragment[peer];
            try {
                while (s.sent < s.toSend && t.backlogBytes(peer) < frag) {
                    long left = s.toSend - s.sent;
                    int n = (int) Math.min(frag, left);
                    if (s.packed != null) {
                        writeFrame(peer, FrameHeader.DATA, 0, 0, 0, 0, s.id, s.remoteId, s.sent,
                                packScratch(s.packed, n), 0, n);
                    } else if (n >= pinnedMin[peer] && s.memory.isNative()) {
                        n = (int) Math.min(pinnedMax[peer], left);
                        FrameHeader.write(header, FrameHeader.DATA, 0, 0, 0, 0, n, sequence[peer]++,
                                s.id, s.remoteId, s.sent);
                        t.sendPinned(peer, header, s.memory, s.offset + s.sent, n);
                        s.pinned = true;
                    } else {
                        writeFrame(peer, FrameHeader.DATA, 0, 0, 0, 0, s.id, s.remoteId, s.sent,
                                s.memory, s.offset + s.sent, n);
                    }
                    s.sent += n;
                    work++;
                }
            } catch (IOException e) {
                // The transport may have reported the loss already (peerLost, which edits
                // pumping): leave the loop before touching it again.
                failed = s;
                failure = e;
                break;
            }
            if (s.sent >= s.toSend && (!s.pinned || t.released(peer))) {
                pumping.remove(i--);
                s.succeed(s.peer, s.tag, s.capacity);
            }
        }
        if (failed != null) writeFailed(failed.peerWorld, failure, failed); // the rest are pumped next time
        return work;
    }

    private void ack(int peer, long sendId) {
        try {
            writeFrame(peer, FrameHeader.SYNC_ACK, 0, 0, 0, 0, sendId, 0, 0, null, 0, 0);
        } catch (IOException e) {
            peerLost(peer, e.getMessage());
        }
    }

    private void writeFrame(int peer, byte type, int context, int source, int tag, int epoch,
                            long sendId, long recvId, long length,
                            MemorySegment payload, long offset, int payloadLength) throws IOException {
        FrameHeader.write(header, type, context, source, tag, epoch, payloadLength, sequence[peer]++,
                sendId, recvId, length);
        route[peer].send(peer, header, payload, offset, payloadLength);
    }

    /** {@link #writeFrame} through {@link Transport#trySend}: false (nothing written) when the transport has no room now. */
    private boolean tryWriteFrame(int peer, byte type, int context, int source, int tag, int epoch, long sendId,
                                  long length, MemorySegment payload, long offset, int payloadLength) throws IOException {
        FrameHeader.write(header, type, context, source, tag, epoch, payloadLength, sequence[peer],
                sendId, 0, length);
        if (!route[peer].trySend(peer, header, payload, offset, payloadLength)) return false;
        sequence[peer]++;
        return true;
    }

    // ------------------------------------------------------------------ failures

    @Override
    public void onPeerLost(int peer, String cause) {
        trace.record(FtTrace.HEARD, peer, 1);
        peerLost(peer, "connection to rank " + peer + " lost: " + cause);
    }

    @Override
    public void processFailed(int worldRank, long procId, String how) {
        trace.record(FtTrace.HEARD, worldRank, 0);
        goneProcs.add(procId); // before the lock: a transport connecting under it checks it
        lock.lock();
        try {
            // A late notice about a process that a replacement has taken over since (REBUILD).
            if (procIdOf != null && procIdOf[worldRank] != procId) return;
            if (procIdOf == null) { // still starting: checked against the job table once it is known
                synchronized (early) {
                    if (!constructed) {
                        early.add(new String[] {Integer.toString(worldRank), "rank " + worldRank + " " + how,
                                Long.toString(procId)});
                        return;
                    }
                }
            }
            // not passed on: the job tells every process (the controller each survivor, or the
            // heartbeat ring's broadcast), and at np 8 on 2 cores the n * (n - 1) frames of
            // everyone passing it on cost the survivors more CPU than they saved
            // (docs/fault-tolerance.md, "The recovery")
            peerLost(worldRank, "rank " + worldRank + " " + how, false);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void abort(int exitCode, String reason) {
        abortReason = "the job is being aborted: " + reason;
        lock.lock();
        try {
            ArrayList<Request> waiting = byId.requests();
            byId.clear();
            for (Request r : waiting) r.fail(ErrorClass.ERR_OTHER, abortReason, -1);
            for (Request r : pumping) r.fail(ErrorClass.ERR_OTHER, abortReason, -1);
            pumping.clear();
            failDeferred(-1, false, ErrorClass.ERR_OTHER, abortReason, -1);
            for (MatchQueues q : contexts.values()) {
                for (Request r : q.posted) r.fail(ErrorClass.ERR_OTHER, abortReason, -1);
                q.posted.clear();
            }
        } finally {
            lock.unlock();
        }
        wakeParked();
    }

    /** Marks a peer failed and completes, with an error, everything that depends on it. */
    private void peerLost(int peer, String cause) {
        peerLost(peer, cause, true);
    }

    /**
     * {@link #peerLost(int, String)}; {@code passOn}: under FT-MPI recovery, whether to pass the
     * failure on to the other processes ({@link #passOn}), which is for a failure this process
     * may be the only one to have seen (a transport's, another survivor's report).
     */
    private void peerLost(int peer, String cause, boolean passOn) {
        if (!constructed) {
            synchronized (early) {
                if (!constructed) {
                    early.add(new String[] {Integer.toString(peer), cause});
                    return;
                }
            }
        }
        if (peerFailed[peer]) return;
        trace.record(FtTrace.NOTICE, peer, 0);
        peerFailed[peer] = true;
        lastFailureNs = System.nanoTime();
        failureSeen = true;
        peerFailure[peer] = cause;
        String msg = "process failure: " + cause;
        boolean ftmpiNow = ftmpi && !recovered[peer];
        if (ftmpiNow) { // FT-MPI state DETECTED, published before any request fails
            if (!detected) detectedAtNs = System.nanoTime();
            detected = true;
            ftmpiActive = true;
            suspectBelow = suspectBound();
        }
        for (Request r : byId.requests()) {
            if (r.peerWorld == peer) {
                byId.remove(r.id);
                r.fail(procFailedClass, msg, peer);
            }
        }
        for (Iterator<Request> it = pumping.iterator(); it.hasNext(); ) {
            Request r = it.next();
            if (r.peerWorld == peer) {
                it.remove();
                r.fail(procFailedClass, msg, peer);
            }
        }
        failDeferred(peer, false, procFailedClass, msg, peer);
        for (MatchQueues q : contexts.values()) {
            for (Request r : q.removePostedFrom(peer)) r.fail(procFailedClass, msg, peer);
            q.dropRendezvousFrom(peer); // a receive posted later must not match one (acceptRendezvous)
        }
        ftPeerLost(peer, msg);
        if (ftmpiNow) {
            if (passOn) passOn(peer, cause);
            failAllPending(procFailedClass, msg + " (FT-MPI: communication fails until the recovery)", peer);
        }
        wakeParked();
    }

    /**
     * A write to {@code peer} for request {@code r} (or null) failed. The peer is lost; and
     * {@code r} fails unless that completed it: a transport that notices the loss in the write
     * reports it itself ({@link #onPeerLost}) before it throws, when {@code r} may not be in the
     * lists that {@link #peerLost} fails yet (an eager send), and then the peerLost here does
     * nothing.
     */
    private void writeFailed(int peer, IOException e, Request r) {
        peerLost(peer, e.getMessage());
        if (r != null && !r.complete) {
            byId.remove(r.id);
            pumping.remove(r);
            if (r.deferred && deferred.remove(r)) undefer(r);
            failForPeer(r, peer);
        }
    }

    /** Completes {@code r} with the process-failure error of {@code peer}, which has failed. */
    private void failForPeer(Request r, int peer) {
        r.fail(procFailedClass, "process failure: " + peerFailure[peer], peer);
    }

    /** Completes {@code r} at once with an error when its peer failed or the job aborts. */
    private boolean failIfUnusable(Request r) {
        if (abortReason != null) {
            r.fail(ErrorClass.ERR_OTHER, abortReason, -1);
            return true;
        }
        if (ftmpiSuspect(r.epoch) && ftmpiBlocked(r)) return true;
        if (r.peerWorld >= 0 && peerFailed[r.peerWorld]) {
            if (blankMode && recovered[r.peerWorld] && (r.context & 1) == 0) {
                r.succeed(PROC_NULL, ANY_TAG, 0); // BLANK: a blank behaves as MPI_PROC_NULL
                return true;
            }
            failForPeer(r, r.peerWorld);
            return true;
        }
        return ftEvents != 0 && ftUnusable(r);
    }

    // ------------------------------------------------------------------ fault tolerance (ULFM)

    /** FT state of the communicators of this process, by point-to-point context id. */
    private final Map<Integer, CommFt> ftComms = new HashMap<>();
    private final FtProtocol ft = new FtProtocol(new FtHost(), ftComms);

    /** What {@link FtProtocol} needs of this engine (called under the progress lock). */
    private final class FtHost implements FtProtocol.Host {
        @Override
        public int rank() {
            return rank;
        }

        @Override
        public boolean isFailed(int worldRank) {
            return peerFailed[worldRank];
        }

        @Override
        public void ftSend(int worldRank, int context, int kind, byte[] payload, int length) {
            Engine.this.ftSend(worldRank, context, kind, payload, length);
        }

        @Override
        public void revoked(int context, String why) {
            ftEvent();
            failContext(context, ErrorClass.ERR_REVOKED, "the communicator was " + why, -1);
            failContext(context + 1, ErrorClass.ERR_REVOKED, "the communicator was " + why, -1);
        }
    }
    /** Number of failures and revokes seen; 0 keeps the FT checks off the fast path. */
    private volatile int ftEvents;
    /** World ranks of the failed processes, in the order the failures became known. */
    private final ArrayList<Integer> failedOrder = new ArrayList<>();

    void ftEvent() {
        ftEvents++;
    }

    /** The error class of process-failure errors in this job (ERR_OTHER, or ERR_PROC_FAILED with ulfm-error-classes). */
    public int procFailedClass() { return procFailedClass; }

    /**
     * Registers a communicator (context id {@code context}, members {@code world}) for failure
     * handling: revoke, agreement, and failing its collectives when a member fails.
     */
    public CommFt registerComm(int context, int[] world) {
        boolean take = lockUnlessHeld();
        try {
            CommFt f = ft.state(context);
            f.world = world.clone();
            f.rankOf = new int[size];
            Arrays.fill(f.rankOf, -1);
            for (int i = 0; i < world.length; i++) f.rankOf[world[i]] = i;
            for (int w : failedOrder) {
                if (f.contains(w) && !(blankMode && recovered[w] && context >= 0)) {
                    memberFailed(f, w, "process failure: " + peerFailure[w]);
                }
            }
            if (context >= 0) commGeneration.put(context, generation);
            if (f.revoked) ft.floodRevoke(f);
            ft.replay(f);
            return f;
        } finally {
            if (take) lock.unlock();
        }
    }

    /** Forgets a freed communicator's FT state. */
    public void unregisterComm(int context) {
        boolean take = lockUnlessHeld();
        try {
            ftComms.remove(context);
        } finally {
            if (take) lock.unlock();
        }
    }

    /**
     * Takes the progress lock unless this thread holds it (a recovery re-makes COMM_WORLD under
     * {@link #beginGeneration}'s lock); returns whether the caller must unlock. Releasing a lock
     * taken twice runs a branch of {@code ReentrantLock}'s release that a fault-free run never
     * takes, which C2 compiles as a trap: the first recovery would send that compiled code back
     * to the interpreter in every survivor.
     */
    private boolean lockUnlessHeld() {
        if (lock.isHeldByCurrentThread()) return false;
        lock.lock();
        return true;
    }

    /** The instance number to {@link #agree} on in a union agreement ({@link #joinUnion}). */
    public static final int UNION_INSTANCE = FtProtocol.UNION_K;

    /**
     * Joins the union agreement of two groups that learned each other through their leaders
     * (FT-MPI ATOMIC {@code createIntercomm}): this process's group receives on context {@code
     * ownContext} (a context of its own, known to the other group) and its call is {@code
     * ownToken}; likewise the other group. Invites every live member of the other group, so that
     * a member whose call failed before it learned this group joins too ({@link #refuseUnion}).
     * The caller then {@link #agree}s on the returned state, instance {@link #UNION_INSTANCE}.
     */
    public CommFt joinUnion(int ownContext, long ownToken, int[] ownWorld, int otherContext, long otherToken,
                            int[] otherWorld) {
        lock.lock();
        try {
            return ft.joinUnion(ownContext, ownToken, ownWorld, otherContext, otherToken, otherWorld);
        } finally {
            lock.unlock();
        }
    }

    /**
     * This process's part of its group's call failed: it votes 0 in the union agreement ({@link
     * #joinUnion}) without waiting for the decision, at once if it knows the other group
     * ({@code otherWorld} not null), else when the other group's invitation comes. Nothing if
     * it has voted already.
     */
    public void refuseUnion(int ownContext, long ownToken, int[] ownWorld, int otherContext, long otherToken,
                            int[] otherWorld) {
        lock.lock();
        try {
            ft.refuseUnion(ownContext, ownToken, ownWorld, otherContext, otherToken, otherWorld);
        } finally {
            lock.unlock();
        }
    }

    private void ftPeerLost(int peer, String msg) {
        failedOrder.add(peer);
        ftEvents++;
        for (CommFt f : ftComms.values()) {
            if (f.contains(peer)) memberFailed(f, peer, msg);
        }
    }

    /**
     * A member of {@code f} failed: its collectives can no longer complete, so every pending
     * request on its collective context fails (on every member, as each learns of the failure),
     * and its agreements move on.
     */
    private void memberFailed(CommFt f, int peer, String msg) {
        if (f.failed.contains(f.rankOf[peer])) return;
        f.failed.add(f.rankOf[peer]);
        f.failedCount = f.failed.size();
        f.collBroken = true;
        failContext(f.context + 1, procFailedClass, "collective: rank " + f.rankOf[peer] + " of the communicator"
                + " (world rank " + peer + ") failed: " + msg, peer);
        ft.memberFailed(f);
    }

    /** Fails every pending request on context id {@code ctx}. */
    void failContext(int ctx, int errorClass, String msg, int failedRank) {
        for (Request r : byId.requests()) {
            if (r.context == ctx && r.kind != Request.Kind.COLL) {
                byId.remove(r.id);
                r.fail(errorClass, msg, failedRank);
            }
        }
        for (Iterator<Request> it = pumping.iterator(); it.hasNext(); ) {
            Request r = it.next();
            if (r.context == ctx) {
                it.remove();
                r.fail(errorClass, msg, failedRank);
            }
        }
        MatchQueues q = contexts.get(ctx);
        if (q != null) {
            for (Request r : q.posted) r.fail(errorClass, msg, failedRank);
            q.posted.clear();
        }
    }

    /** New requests on a revoked communicator, or collective ones on a communicator with a failed member. */
    private boolean ftUnusable(Request r) {
        CommFt f = ftComms.get(r.context & ~1);
        if (f == null) return false;
        if (f.revoked) {
            r.fail(ErrorClass.ERR_REVOKED, "the communicator has been revoked", -1);
            return true;
        }
        if ((r.context & 1) != 0 && f.collBroken) {
            int w = f.world[f.failed.get(0)];
            r.fail(procFailedClass, "collective: rank " + f.failed.get(0) + " of the communicator (world rank "
                    + w + ") has failed: " + peerFailure[w], w);
            return true;
        }
        return false;
    }

    /** Sends a fault-tolerance control frame (never matched against receives). */
    void ftSend(int worldRank, int context, int kind, byte[] payload, int length) {
        if (peerFailed[worldRank]) return;
        if (trace.messages() && traced(context)) trace.record(FtTrace.SENT, kind, worldRank);
        if (payload != ftSendArray) { // the protocol's reused buffer: one segment until it grows
            ftSendArray = payload;
            ftSendSegment = MemorySegment.ofArray(payload);
        }
        try {
            writeFrame(worldRank, FrameHeader.FT, context, rank, kind, generation, 0, 0, length,
                    ftSendSegment, 0, length);
        } catch (IOException e) {
            peerLost(worldRank, e.getMessage());
        }
    }

    /** The last payload array {@link #ftSend} sent from, and its segment (under the progress lock, as every FT send). */
    private byte[] ftSendArray;
    private MemorySegment ftSendSegment;

    /** This engine's fault-tolerance protocol (tests). */
    FtProtocol ftProtocol() {
        return ft;
    }

    /** MPIX_COMM_REVOKE: revokes the communicator here and at every live member. */
    public void revoke(CommFt f) {
        lock.lock();
        try {
            ft.revoke(f, "revoked by rank " + rank);
        } finally {
            lock.unlock();
        }
    }

    /** World ranks of the members of {@code f} known failed, in the order the failures became known. */
    public int[] failedMembers(CommFt f) {
        lock.lock();
        try {
            int[] out = new int[f.failed.size()];
            for (int i = 0; i < out.length; i++) out[i] = f.world[f.failed.get(i)];
            return out;
        } finally {
            lock.unlock();
        }
    }

    /** The failed set of a fault-free agreement's {@link Decision}, shared (nothing to change in it). */
    private static final int[] NO_FAILED = {};

    /** The outcome of an agreement: the AND of the flags, and the world ranks of the agreed failed set. */
    public record Decision(int value, int[] failedWorld) {}

    /**
     * Runs this process's part of agreement instance {@code k} of communicator {@code f} (every
     * member calls it with the same {@code k}; fault-tolerant, see {@link FtProtocol}). Blocks,
     * progressing the transports, until the decision is known.
     */
    public Decision agree(CommFt f, int k, int value) throws P2pException {
        Agreement g;
        boolean traced = traced(f.context); // the application's agreements only with ft-trace=all
        if (traced) trace.record(FtTrace.AGREE, f.context, k);
        lock.lock();
        try {
            g = ft.start(f, k, value);
        } finally {
            lock.unlock();
        }
        int idle = 0;
        QuietStreak quiet = new QuietStreak();
        while (true) {
            int work = 0;
            if (lock.tryLock()) {
                try {
                    work = progressLocked();
                    ft.advance(f, g);
                    if (g.decided) {
                        int[] failed = g.dFailed.isEmpty() ? NO_FAILED : new int[g.dFailed.cardinality()];
                        for (int i = 0, r = g.dFailed.nextSetBit(0); r >= 0; r = g.dFailed.nextSetBit(r + 1)) {
                            failed[i++] = f.world[r];
                        }
                        if (traced) trace.record(FtTrace.DECIDED, g.dValue, failed.length);
                        return new Decision(g.dValue, failed);
                    }
                } finally {
                    lock.unlock();
                }
            }
            if (abortReason != null) throw new P2pException(ErrorClass.ERR_OTHER, abortReason);
            if (work > 0) {
                idle = 0;
                quiet.reset();
            } else if (parksInFailure() && failureSeen && quiet.longEnough() && inFailureHandling(f)) {
                parkInFailure();
            } else {
                idle = pause(idle);
            }
        }
    }

    /** Whether this engine has learned of a failure (plain: read racily by waiters, who see it at a later poll). */
    private boolean failureSeen;
    /** When this engine last learned of a failure ({@link System#nanoTime}; plain, as {@link #failureSeen}). */
    private long lastFailureNs;

    /**
     * How long after a failure notice an agreement's waiter still parks ({@link #parkInFailure}):
     * the time of the failure's handling, when the victim's teardown, the survivors' failure
     * paths and their JIT compilers hold the cores. Later a ULFM program that keeps using a
     * communicator with an acknowledged failed member is in a steady state where yielding is
     * faster: parking there made such an agree at np 4 take 65 instead of 31 us (median of 50).
     */
    private static final long FAILURE_FRESH_NS = 100_000_000;

    /**
     * Whether an agreement on {@code f} is part of a failure's handling: within {@link
     * #FAILURE_FRESH_NS} of the last failure notice, a member of {@code f} is known failed here
     * and no FT-MPI recovery covered it (a BLANK COMM_WORLD's blanks are not).
     */
    private boolean inFailureHandling(CommFt f) {
        if (System.nanoTime() - lastFailureNs >= FAILURE_FRESH_NS) return false;
        for (int w : f.world) if (peerFailed[w] && !recovered[w]) return true;
        return false;
    }

    /**
     * One waiting thread's streak of idle polls in a failure's handling: after {@link
     * #FAILURE_YIELDS} polls it starts a clock, and once {@link #FAILURE_QUIET_NS} have passed
     * the waiter parks ({@link #parkInFailure}) instead of yielding; a quick exchange pays no park.
     */
    private static final class QuietStreak {
        private int polls;
        private long since;

        /** The waiter found work: a new streak starts at its next idle poll. */
        void reset() {
            polls = 0;
        }

        /** Counts an idle poll; whether the streak has lasted long enough to park. */
        boolean longEnough() {
            if (polls <= FAILURE_YIELDS) {
                if (++polls > FAILURE_YIELDS) since = System.nanoTime();
                return false;
            }
            return System.nanoTime() - since >= FAILURE_QUIET_NS;
        }
    }

    /** Idle polls of a failure waiter before its streak's clock starts ({@link QuietStreak}). */
    private static final int FAILURE_YIELDS = 16;

    /** How long a waiter in a failure's handling yields before it parks ({@link QuietStreak}). */
    private static final long FAILURE_QUIET_NS = 200_000;

    /** Job option {@code failure-park-us} when not given. */
    static final int FAILURE_PARK_US_DEFAULT = 20;

    /**
     * How long a waiter parks in a failure's handling on an oversubscribed host (job option
     * {@code failure-park-us}; 0: it yields as every other waiter).
     */
    private final long failureParkNs;

    /** Whether waiters in a failure's handling park ({@link #parkInFailure}): an oversubscribed host, failure-park-us above 0. */
    private boolean parksInFailure() {
        return failureParkNs > 0 && idleStart > 0;
    }

    /**
     * One idle step, after {@link #FAILURE_QUIET_NS} without work ({@link QuietStreak}), of a
     * thread that waits, on a host with more ranks than cores ({@link #parksInFailure}), for the
     * others in a failure's handling: an agreement with a failed member (FT-MPI's recovery, ULFM's {@code agree} and
     * {@code shrink} after a failure) or REBUILD's wait for replacements. It parks for
     * {@link #failureParkNs} (20 us, some 70 us with the kernel's timer slack) instead of
     * yielding. A yielding waiter keeps its full share of a core: a trace of an np 4 SHRINK
     * showed two survivors that had entered the recovery passing one core to each other for 10 ms
     * while the coordinator, which the agreement waited for, sat runnable behind a JIT
     * compilation and the victim's teardown on the other core; parked, their core goes idle and
     * the scheduler moves the coordinator there (docs/benchmarks.md, "Session 16"). Not used
     * without a failure: a parked waiter sees a message up to a park late, which a fault-free
     * agreement (a latency figure) must not pay.
     */
    private void parkInFailure() {
        Runnable duty = waiterDuty;
        if (duty != null) duty.run(); // the detector's round, as at every park of pause
        LockSupport.parkNanos(failureParkNs);
    }

    /** Parses job option {@code failure-park-us}: microseconds from 0 to 1000. */
    static long failureParkMicros(String value) throws IOException {
        try {
            long us = Long.parseLong(value.trim());
            if (us >= 0 && us <= 1000) return us;
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IOException("job option failure-park-us=" + value + " must be a number of microseconds from 0 to 1000 (default "
                + FAILURE_PARK_US_DEFAULT + "; 0: waiters in a failure's handling yield as every other waiter)");
    }

    // ------------------------------------------------------------------ FT-MPI recovery

    /** FT-MPI recovery is on: comm-mode shrink/blank/rebuild and recovery-mode auto/manual. */
    private final boolean ftmpi;
    /** Comm-mode rebuild: failed ranks are replaced by new processes. */
    private final boolean rebuildMode;
    /** This process replaces a failed one (MPI_INIT_RESTARTED_NODE). */
    private final boolean restarted;
    /**
     * A replacement's ranks that were being replaced as well when it registered (no endpoints in
     * its table): it connects to them when the controller announces them, before MPI_Init returns.
     */
    private final boolean[] joinLater;
    /** Rebuild: endpoints of the replacements announced by the controller, by world rank. */
    private final HashMap<Integer, Map<String, byte[]>> replacements = new HashMap<>();
    /** Rebuild: process ids of the announced replacements, by world rank. */
    private final HashMap<Integer, Long> replacementIds = new HashMap<>();
    /** The process id of each world rank's current process (a replacement has a new one). */
    private final long[] procIdOf;
    /** A replacement's first FT frame from each survivor: its context id, and the generation as epoch. */
    static final int WELCOME = Integer.MIN_VALUE;
    /** The transports a replacement (FT-MPI REBUILD) opens: those whose {@code reconnect} re-makes a connection. */
    public static final List<String> REPLACEMENT_TRANSPORTS = List.of("tcp", "shm");
    /**
     * FT-MPI: a survivor passes on a failure it learned of (context id of an FT frame; tag: the
     * failed world rank; payload: its process id and the cause), see {@link #passOn}.
     */
    static final int FAILED = Integer.MIN_VALUE + 1;
    private volatile boolean welcomed;
    /** Comm-mode blank: recovered failed members of a communicator act as PROC_NULL. */
    private final boolean blankMode;
    /** Message mode CONT: point-to-point traffic survives a recovery (see {@link MatchQueues#cont}). */
    private final boolean contMode;
    /**
     * The FT-MPI generation count (epoch): the number of recoveries so far. Communicators made
     * in generation g carry epoch g in their envelopes; older messages are dropped (RESET).
     * Written under the lock.
     */
    private volatile int generation;
    /** A failure is known that no recovery has covered yet (communicator state DETECTED). */
    private volatile boolean detected;
    /** {@link System#nanoTime()} when {@link #detected} was last set (the notice). */
    private volatile long detectedAtNs;
    /** {@link #detected} was ever set: the FT-MPI checks below are on (plain, read under the lock). */
    private boolean ftmpiActive;
    /** World ranks whose failure a recovery covered (blanks in comm-mode blank). */
    private final boolean[] recovered;
    /** Generation in which each live communicator (point-to-point context id) was made. */
    private final HashMap<Integer, Integer> commGeneration = new HashMap<>();
    /** FT control frames of a later generation, kept until this process reaches it. */
    private final ArrayList<Object[]> laterFt = new ArrayList<>();

    /** Whether this job recovers from failures (FT-MPI comm-mode shrink/blank/rebuild, recovery auto/manual). */
    public boolean recovers() { return ftmpi; }

    /** Whether a failure is known that no recovery has covered yet (FT-MPI state DETECTED). */
    public boolean needsRecovery() { return ftmpi && detected; }

    /** {@link System#nanoTime()} of the notice that put this process in state DETECTED last. */
    public long detectedAtNanos() { return detectedAtNs; }

    /** The current generation (number of recoveries); the epoch of communicators made now. */
    public int generation() { return generation; }

    /** Whether this process replaces a failed one (comm-mode rebuild; MPI_INIT_RESTARTED_NODE). */
    public boolean isRestarted() { return restarted; }

    /** Whether the controller announced a replacement for this world rank that has not joined yet. */
    public boolean replacementAnnounced(int worldRank) {
        lock.lock();
        try {
            return replacements.containsKey(worldRank);
        } finally {
            lock.unlock();
        }
    }

    /** Set once {@link #transports} is complete (before the exchange): warm spares can be prepared for. */
    private volatile boolean transportsOpen;

    /** A warm spare is ready: each transport may connect to it ahead of need (in the background). */
    @Override
    public void spareReady(long procId, Map<String, byte[]> endpoints) {
        if (!transportsOpen || closed) return;
        for (Transport t : transports) {
            var made = t.prepareSpare(procId, endpoints);
            if (made != null && trace.on()) made.whenComplete((c, e) -> System.err.println("ftmpi: rank " + rank + ": "
                    + (e == null ? "made a " + t.name() + " connection to warm spare (process id " + procId + ") ahead"
                    : "could not connect to warm spare (process id " + procId + ") ahead: " + e.getMessage())));
        }
    }

    @Override
    public void spareGone(long procId) {
        if (!transportsOpen) return;
        for (Transport t : transports) t.dropSpare(procId);
        if (trace.on()) System.err.println("ftmpi: rank " + rank + ": warm spare (process id " + procId
                + ") is gone; the connections made to it ahead are closed");
    }

    @Override
    public void processReplaced(int worldRank, long procId, String host, Map<String, byte[]> endpoints) {
        lock.lock();
        try {
            trace.record(FtTrace.ANNOUNCED, worldRank, 0);
            replacements.put(worldRank, endpoints);
            replacementIds.put(worldRank, procId);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Rebuild: waits (progressing) until the controller has announced a replacement for every
     * world rank in {@code failedWorld}.
     */
    public void awaitReplacements(int[] failedWorld) throws P2pException {
        int idle = 0;
        QuietStreak quiet = new QuietStreak();
        while (true) {
            int work = 0;
            if (lock.tryLock()) {
                try {
                    boolean all = true;
                    for (int w : failedWorld) all &= replacements.containsKey(w);
                    if (all) {
                        trace.record(FtTrace.REPLACEMENTS, failedWorld.length, 0);
                        return;
                    }
                    work = progressLocked();
                } finally {
                    lock.unlock();
                }
            }
            if (abortReason != null) throw new P2pException(ErrorClass.ERR_OTHER, abortReason);
            if (work > 0) {
                idle = 0;
                quiet.reset();
            } else if (parksInFailure() && quiet.longEnough()) {
                parkInFailure();
            } else {
                idle = idle(idle);
            }
        }
    }

    /**
     * Rebuild, under the lock: connects to the replacement of {@code w} (every transport's
     * reconnect runs; the one with the highest exclusivity that reaches it routes it: shared
     * memory when the replacement is on this host, else TCP), makes it a live peer again and
     * sends it WELCOME with the generation.
     */
    private void join(int w, int[] covered) {
        Map<String, byte[]> eps = replacements.remove(w);
        long newId = replacementIds.remove(w);
        Transport best = null;
        String error = "no transport reaches it";
        trace.record(FtTrace.CONNECT, w, 0);
        boolean premade = false, bestPremade = false;
        for (Transport t : transports) {
            try {
                int ahead = t.premadeConnections();
                boolean reached = t.reconnect(w, newId, eps);
                // A connection made ahead (TCP, warm spare) is taken even when shared memory routes the rank.
                boolean took = t.premadeConnections() > ahead;
                premade |= took;
                if (reached && (best == null || t.limits().exclusivity() > best.limits().exclusivity())) {
                    best = t;
                    bestPremade = took;
                }
            } catch (IOException e) {
                error = e.getMessage();
            }
        }
        if (best == null) {
            peerFailure[w] = "its replacement could not be reached: " + error;
            return; // stays failed; the next round of the recovery handles it
        }
        trace.record(premade ? FtTrace.PREMADE : FtTrace.CONNECTED, w, 0);
        if (best.name().equals("shm")) trace.record(FtTrace.SHM, w, bestPremade ? 1 : 0);
        route[w] = best;
        eagerLimit[w] = best.limits().eagerLimitBytes();
        fragment[w] = best.limits().maxFragmentBytes();
        pinnedMin[w] = best.limits().singleCopyMinBytes();
        pinnedMax[w] = best.limits().maxPinnedBytes();
        sequence[w] = 0;
        classifyTransports();
        procIdOf[w] = newId;
        peerFailed[w] = false;
        peerFailure[w] = null;
        failedOrder.remove((Integer) w);
        recovered[w] = false;
        byte[] list = new byte[4 * covered.length];
        MemorySegment listed = MemorySegment.ofArray(list);
        for (int i = 0; i < covered.length; i++) listed.set(FrameHeader.WIRE_INT, 4L * i, covered[i]);
        try {
            writeFrame(w, FrameHeader.FT, WELCOME, rank, 0, generation, 0, 0, list.length, listed, 0,
                    list.length);
        } catch (IOException e) {
            peerLost(w, e.getMessage());
        }
    }

    /**
     * REBUILD, at the end of a recovery round, before its joins: the ranks whose failure a
     * recovery up to this generation covered and whose replacement this process has not joined
     * yet (this round's, and an earlier round's whose replacement could not be reached). A
     * replacement's WELCOME carries them ({@link #welcome}): any other rank it found dead is a
     * failure the next round covers.
     */
    private int[] coveredNotJoined() {
        int n = 0;
        for (int w = 0; w < size; w++) if (peerFailed[w] && recovered[w]) n++;
        int[] out = new int[n];
        for (int w = 0, i = 0; w < size; w++) if (peerFailed[w] && recovered[w]) out[i++] = w;
        return out;
    }

    /**
     * FT-MPI: tells every other live process of the failure of {@code peer}, which this process
     * has just learned of, over the FT channel (one frame each, ahead of user messages). Every
     * survivor has to learn of the failure before the recovery's agreement can decide, and the
     * survivors learn of it from the controller, a transport or the heartbeat ring at different
     * times (up to tens of milliseconds apart under load): a survivor that is waiting in MPI
     * sees a frame on a transport it polls sooner than the controller's notice, which a thread
     * of its own has to be scheduled to read. Each process passes a failure on once (when it
     * first learns of it), so a failure costs n - 2 frames per survivor.
     */
    private void passOn(int peer, String cause) {
        long id = procIdOf == null ? -1 : procIdOf[peer];
        byte[] text = cause.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] payload = new byte[8 + Math.min(text.length, 1024)];
        java.nio.ByteBuffer.wrap(payload).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(id)
                .put(text, 0, payload.length - 8);
        for (int w = 0; w < size; w++) {
            if (w == rank || peerFailed[w]) continue;
            try {
                writeFrame(w, FrameHeader.FT, FAILED, rank, peer, generation, 0, 0, payload.length,
                        MemorySegment.ofArray(payload), 0, payload.length);
            } catch (IOException e) {
                // that peer is lost too: its transport reports it
            }
        }
    }

    /** FT-MPI: a peer passed on the failure of world rank {@code w} ({@link #passOn}). */
    private void failedReported(int from, int w, MemorySegment payload) {
        if (!ftmpi || w < 0 || w >= size || w == rank || peerFailed[w] || payload.byteSize() < 8) return;
        // A ByteBuffer, as the agreement's frames: a value layout's first use would spin a VarHandle here.
        java.nio.ByteBuffer b = payload.asByteBuffer().order(java.nio.ByteOrder.LITTLE_ENDIAN);
        if (procIdOf[w] != b.getLong()) return; // a late report about a process a replacement has taken over since
        trace.record(FtTrace.HEARD, w, 2);
        byte[] text = new byte[b.remaining()];
        b.get(text);
        peerLost(w, new String(text, java.nio.charset.StandardCharsets.UTF_8));
    }

    /** Whether {@code context} is a recovery communicator's ({@code -2 - 2g}, g >= 1), whose agreement the trace shows. */
    private static boolean recoveryContext(int context) {
        return context <= -4 && context > FAILED;
    }

    /** Whether the agreements of {@code context} are traced: a recovery's, and with {@code ft-trace=all} every one. */
    private boolean traced(int context) {
        return trace.all() || recoveryContext(context);
    }

    /**
     * A replacement learns the survivors' generation from their WELCOME, and which ranks it found
     * dead (no endpoints in its table, {@link #joinLater}) that generation covers: {@code payload}
     * lists them (ints). Those it joins when their replacements are announced. Any other rank it
     * found dead died after the recovery's agreement (a second failure while the survivors were
     * rebuilding): a failure of this generation, which the next recovery round covers, so this
     * process takes part in it. Before, it waited for such a rank to join, and the survivors
     * waited for it in the next round (found by a test that kills a survivor as the recovery's
     * agreement decides: {@code --inject at-step=recovery.agreed}).
     */
    private void welcome(int g, MemorySegment payload) {
        if (!restarted || welcomed) return;
        int[] covered = new int[(int) (payload.byteSize() / 4)];
        for (int i = 0; i < covered.length; i++) covered[i] = payload.get(FrameHeader.WIRE_INT, 4L * i);
        generation = g;
        welcomeCovered = covered;
        boolean[] isCovered = new boolean[size];
        for (int w : covered) if (w >= 0 && w < size) isCovered[w] = true;
        for (int r = 0; r < size; r++) {
            if (r == rank) continue;
            if (joinLater[r] && !isCovered[r]) {
                joinLater[r] = false;
                peerFailed[r] = false; // marked only as "joins later": now a failure of this generation
                peerLost(r, "rank " + r + " failed after the recovery to generation " + g + " agreed; the next"
                        + " recovery covers it");
            } else if (isCovered[r] && peerFailed[r] && !joinLater[r] && !recovered[r]) {
                // a failure this generation covers, heard of after this process registered: its replacement joins
                recovered[r] = true;
                joinLater[r] = true;
            }
        }
        detected = anyUncovered();
        suspectBelow = suspectBound();
        welcomed = true;
    }

    /** Whether a failure known here is not covered by a recovery yet (FT-MPI state DETECTED). */
    private boolean anyUncovered() {
        for (int w : failedOrder) if (!recovered[w]) return true;
        return false;
    }

    /** What this replacement's first WELCOME said the generation covers ({@link #welcome}), for the WELCOMEs it sends. */
    private int[] welcomeCovered = new int[0];

    /**
     * A replacement's MPI_Init waits until a survivor welcomed it (it then knows the generation)
     * and, when other ranks were replaced at the same time and registered after it ({@link
     * #joinLater}), until it has connected to each of them as the survivors do: when the
     * controller announces it, after the welcome (so that its WELCOME carries the generation).
     */
    private void awaitWelcome() {
        int idle = 0;
        while (abortReason == null && !closed) {
            if (welcomed && !joinPending()) return;
            idle = progressOrPause(idle);
        }
    }

    /** Joins the announced replacements this process waits for; whether any is still to come. */
    private boolean joinPending() {
        lock.lock();
        try {
            boolean left = false;
            for (int r = 0; r < size; r++) {
                if (!joinLater[r]) continue;
                if (replacements.containsKey(r)) {
                    joinLater[r] = false;
                    join(r, welcomeCovered);
                } else {
                    left = true;
                }
            }
            return left;
        } finally {
            lock.unlock();
        }
    }

    /** Whether a recovery covered the failure of this world rank. */
    public boolean isRecovered(int worldRank) { return recovered[worldRank]; }

    /** World ranks known failed here, in the order the failures became known. */
    public int[] failedWorldRanks() {
        lock.lock();
        try {
            return failedOrder.stream().mapToInt(Integer::intValue).toArray();
        } finally {
            lock.unlock();
        }
    }

    /** Re-makes the communicators that survive a recovery; called by {@link #beginGeneration} under the lock. */
    public interface Rebind {
        /** Re-makes them in the new generation; {@code failedWorld} are the agreed failed world ranks. */
        void rebind(int[] failedWorld);
    }

    /**
     * Ends a recovery: the survivors agreed that the processes {@code failedWorld} have failed;
     * generation {@code g} starts. Under the lock: every message of an older epoch is dropped
     * (RESET), every communicator made before is invalidated (its operations fail with
     * ERR_COMM), then {@code rebind} re-makes COMM_WORLD and COMM_SELF in the new generation and
     * FT frames that peers sent in it are handled.
     */
    public void beginGeneration(int g, int[] failedWorld, Rebind rebind) {
        lock.lock();
        try {
            for (int w : failedWorld) {
                if (!peerFailed[w]) peerLost(w, "rank " + w + " agreed failed by the survivors");
            }
            for (int w : failedWorld) recovered[w] = true;
            generation = g;
            ftmpiActive = true;
            ft.clearUnions(); // every survivor passed the recovery's agreement: none is in one any more
            if (rebuildMode) {
                int[] covered = coveredNotJoined();
                for (int w : failedWorld) if (replacements.containsKey(w)) join(w, covered);
            }
            boolean[] dead = new boolean[size];
            for (int w : failedWorld) dead[w] = true;
            for (MatchQueues q : contexts.values()) {
                // Loops, not removeIf with a lambda: a lambda site first run here would spin its
                // class on the recovery's critical path (docs/fault-tolerance.md, "Cold failure path").
                for (MatchQueues.Unexpected u = q.unexpected.first(); u != null; ) {
                    MatchQueues.Unexpected next = q.unexpected.next(u);
                    // CONT: only messages of the failed processes are discarded
                    if (q.cont ? dead[u.sourceWorld] : u.epoch < g) q.unexpected.remove(u);
                    u = next;
                }
                if (q.cont) continue;
                for (Request r : q.posted) {
                    r.fail(ErrorClass.ERR_COMM, "the communicator was invalidated by a recovery", -1);
                }
                q.posted.clear();
            }
            // Communicators made before are invalid: their context ids are free again, so that
            // communicators re-created in the same order get the same ids (spec chapter 5).
            for (Map.Entry<Integer, Integer> e : commGeneration.entrySet()) {
                int ctx = e.getKey();
                if (e.getValue() < g && ctx > 2) {
                    contextIds.remove(ctx);
                    ftComms.remove(ctx);
                }
            }
            forgetQueues();
            detected = anyUncovered();
            suspectBelow = suspectBound();
            rebind.rebind(failedWorld);
            // The communicators of the new generation are clean unless a failure is still
            // uncovered: the fast paths that ftEvents keeps off come back (a revoke or a failure
            // from now on turns them off again).
            ftEvents = detected || brokenCommunicator(g) ? ftEvents + 1 : 0;
            trace.record(FtTrace.REBUILT, g, 0);
            for (Iterator<Object[]> it = laterFt.iterator(); it.hasNext(); ) {
                Object[] m = it.next();
                int e = (Integer) m[4];
                if (e <= g) {
                    it.remove();
                    int peer = (Integer) m[0];
                    if (e == g && !peerFailed[peer]) {
                        ft.onFrame(peer, (Integer) m[1], (Integer) m[2], MemorySegment.ofArray((byte[]) m[3]));
                    }
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Under the lock: whether a communicator made in generation {@code g} or later is revoked or
     * has a failed member ({@link #ftUnusable} must see its requests). The FT-only states
     * (negative or odd ids: the recovery's and ATOMIC group agreements') carry no requests.
     */
    private boolean brokenCommunicator(int g) {
        for (CommFt f : ftComms.values()) {
            if (f.context < 0 || (f.context & 1) != 0) continue;
            Integer made = commGeneration.get(f.context);
            if (made != null && made >= g && (f.revoked || f.collBroken)) return true;
        }
        return false;
    }

    /** An FT frame of another generation: an older one is stale, a later one waits for it. */
    private void otherEpochFt(int peer, MemorySegment h, MemorySegment payload) {
        int e = FrameHeader.epoch(h);
        if (e < generation) return;
        laterFt.add(new Object[] {peer, FrameHeader.context(h), FrameHeader.tag(h),
                payload.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), e});
    }

    /**
     * FT-MPI: whether an operation of communicator epoch {@code epoch} needs {@link
     * #ftmpiBlocked}'s checks: never before a failure was seen ({@link #ftmpiActive}); after
     * one, while it is not recovered or when the communicator was made before the last recovery.
     * A communicator's epoch is the generation it was made in, the one {@link #registerComm}
     * records, so the operations of a recovered job's COMM_WORLD and of communicators made since
     * skip the map lookup (and a blocking send its fast path comes back).
     *
     * <p>One comparison with {@link #suspectBelow}, which holds the three states: the JIT
     * compiles this branch as never taken (an uncommon trap) from a fault-free profile, and a
     * recovered job's operations still never take it. Written as {@code ftmpiActive && (detected
     * || epoch < generation)}, the first term became true for good at the first failure, and every
     * survivor's first operations after its recovery deoptimized {@code send}, {@code receive} and
     * {@link #failIfUnusable} (seen with {@code -Xlog:deoptimization}).
     */
    private boolean ftmpiSuspect(int epoch) {
        return epoch < suspectBelow;
    }

    /**
     * {@link #ftmpiSuspect}'s bound, under the lock: below every epoch before a failure was seen,
     * above every epoch while one is not recovered, else the generation. Recomputed
     * ({@link #suspectBound}) wherever {@link #ftmpiActive}, {@link #detected} or {@link
     * #generation} change.
     */
    private int suspectBelow = Integer.MIN_VALUE;

    private int suspectBound() {
        return !ftmpiActive ? Integer.MIN_VALUE : detected ? Integer.MAX_VALUE : generation;
    }

    /** FT-MPI: fails {@code r} while a failure is not recovered, or on a communicator a recovery invalidated. */
    private boolean ftmpiBlocked(Request r) {
        if (detected) {
            int w = firstUnrecovered();
            r.fail(procFailedClass, "process failure: " + (w >= 0 ? peerFailure[w] : "?")
                    + " (FT-MPI: communication fails until the recovery)", w);
            return true;
        }
        Integer g = commGeneration.get(r.context & ~1);
        if (g != null && g < generation) {
            r.fail(ErrorClass.ERR_COMM, "the communicator was invalidated by the recovery from a process"
                    + " failure (only MPI.COMM_WORLD and MPI.COMM_SELF survive it)", -1);
            return true;
        }
        return false;
    }

    private void ftmpiProbeCheck(int context) throws P2pException {
        if (detected) {
            int w = firstUnrecovered();
            throw new P2pException(procFailedClass, "process failure: " + (w >= 0 ? peerFailure[w] : "?")
                    + " (FT-MPI: communication fails until the recovery)", w);
        }
        Integer g = commGeneration.get(context & ~1);
        if (g != null && g < generation) {
            throw new P2pException(ErrorClass.ERR_COMM, "the communicator was invalidated by the recovery"
                    + " from a process failure");
        }
    }

    /** World rank of the first failure no recovery covered yet, or -1. */
    public int firstUnrecoveredFailure() {
        lock.lock();
        try {
            return firstUnrecovered();
        } finally {
            lock.unlock();
        }
    }

    private int firstUnrecovered() {
        for (int w : failedOrder) if (!recovered[w]) return w;
        return -1;
    }

    /**
     * Fails every pending request (FT-MPI: on a failure all communication stops). Under message
     * mode CONT only collective traffic stops; point-to-point operations with live peers stay
     * pending and complete after the recovery (their waits raise meanwhile, see {@link
     * #awaitUnlessDetected}).
     */
    private void failAllPending(int errorClass, String msg, int failedRank) {
        for (Request r : byId.requests()) {
            if (contMode && (r.context & 1) == 0) continue;
            byId.remove(r.id);
            r.fail(errorClass, msg, failedRank);
        }
        for (Iterator<Request> it = pumping.iterator(); it.hasNext(); ) {
            Request r = it.next();
            if (contMode && (r.context & 1) == 0) continue;
            it.remove();
            r.fail(errorClass, msg, failedRank);
        }
        failDeferred(-1, contMode, errorClass, msg, failedRank);
        for (MatchQueues q : contexts.values()) {
            if (q.cont) continue;
            for (Request r : q.posted) r.fail(errorClass, msg, failedRank);
            q.posted.clear();
        }
    }

    // ------------------------------------------------------------------ FT-MPI message mode CONT

    /** Whether the job runs FT-MPI message mode CONT (job option {@code msg-mode=cont}). */
    public boolean contMode() { return contMode; }

    /**
     * CONT: the rank a message's status names. A message of another generation carries its
     * sender's rank of that generation; the receiver reports the sender's rank in the
     * communicator as it is now (comm-mode SHRINK moves ranks).
     */
    private int contSource(int context, int sourceWorld, int source, int epoch) {
        if (epoch == generation) return source;
        CommFt f = ftComms.get(context & ~1);
        return f != null && f.contains(sourceWorld) ? f.rankOf[sourceWorld] : source;
    }

    /**
     * Progresses until {@code r} completes and returns true; under message mode CONT it also
     * returns (false, {@code r} still pending) as soon as a failure is known that no recovery
     * covered, so that the caller can raise and the process can take part in the recovery.
     */
    public boolean awaitUnlessDetected(Request r) {
        return await(r, contMode && r.kind != Request.Kind.COLL);
    }

    /**
     * CONT: a blocking receive interrupted by a failure. If it has not matched, it is taken back
     * and fails with {@code message} (the application repeats it after the recovery) and this
     * returns true; a receive that matched already receives from a live peer and completes
     * without the application (false).
     */
    public boolean withdraw(Request r, String message) {
        lock.lock();
        try {
            if (!takeBack(r)) return false;
            int w = firstUnrecovered();
            r.fail(procFailedClass, message + " (world rank " + w + " failed: " + (w >= 0 ? peerFailure[w] : "?") + ")", w);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * CONT: a blocking send interrupted by a failure returns as if buffered: what it still has
     * to send is copied out of the caller's memory, and the send completes after the recovery
     * when the receiver matches it. Returns false when its data is already being transferred
     * from the caller's memory (the receiver matched; the caller waits for the end).
     */
    public boolean detach(Request r) {
        lock.lock();
        try {
            if (r.complete) return true;
            if (r.pinned) return false;
            if (r.memory != null && r.capacity > 0) {
                MemorySegment copy = Arena.ofAuto().allocate(r.capacity, 8);
                MemorySegment.copy(r.memory, r.offset, copy, 0, r.capacity);
                r.memory = copy;
                r.offset = 0;
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * CONT: receives from ANY_SOURCE still posted on point-to-point contexts: the library cannot
     * tell whether a failed process would have matched them (spec 5.1); the recovery reports them.
     */
    public List<Request> pendingAnySource() {
        lock.lock();
        try {
            List<Request> out = new ArrayList<>();
            for (MatchQueues q : contexts.values()) {
                if (!q.cont) continue;
                for (Request r : q.posted) if (r.peer == ANY_SOURCE) out.add(r);
            }
            return out;
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------ context ids

    private final java.util.Set<Integer> contextIds = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * Marks the context id pair {@code (id, id + 1)} as used by a communicator of this process;
     * returns false if it already is. Communicator construction agrees on ids collectively
     * and only needs them unique per process (see docs/architecture.md).
     */
    public boolean reserveContext(int id) {
        return contextIds.add(id);
    }

    /** Whether a communicator of this process uses the context id pair {@code (id, id + 1)}. */
    public boolean contextInUse(int id) {
        return contextIds.contains(id);
    }

    /**
     * Releases a context id pair when its communicator is freed, with its matching queues (a
     * correct program has no message of a freed communicator left to match).
     */
    public void releaseContext(int id) {
        lock.lock();
        try {
            MatchQueues p = contexts.get(id), c = contexts.get(id + 1);
            if (p != null && p.posted.isEmpty()) contexts.remove(id);
            if (c != null && c.posted.isEmpty()) contexts.remove(id + 1);
            forgetQueues();
        } finally {
            lock.unlock();
        }
        contextIds.remove(id);
    }

    /** Whether the world rank has been declared failed. */
    public boolean isFailed(int worldRank) { return peerFailed[worldRank]; }

    // ------------------------------------------------------------------ misc

    private Request newRequest(Request.Kind kind) {
        OUTSTANDING.setOpaque(this, outstanding + 1);
        RequestPool p = pools.get();
        Request r = p == null ? null : p.pop();
        if (r == null) return new Request(this, kind, nextId++);
        r.reuse(kind, nextId++);
        return r;
    }

    /**
     * Completed requests given back by one thread ({@link #recycle}) for its own next
     * operations: touched only by that thread, so giving back takes no lock and no atomic.
     */
    static final class RequestPool {
        /** Most requests a thread keeps: a window of 64 sends and 64 receives, twice. */
        static final int MAX = 256;
        private Request[] free = new Request[16];
        private int n;

        Request pop() {
            if (n == 0) return null;
            Request r = free[--n];
            free[n] = null;
            return r;
        }

        void push(Request r) {
            if (n == free.length) {
                if (n == MAX) return; // the garbage collector takes it
                free = Arrays.copyOf(free, Math.min(MAX, 2 * n));
            }
            r.pooled = true;
            free[n++] = r;
        }
    }

    /** This engine's request pool of each thread that gave a request back. */
    private final ThreadLocal<RequestPool> pools = new ThreadLocal<>();

    /**
     * Takes back a request whose user is done with it, for {@link #newRequest} to reuse on the
     * same thread, so that a steady stream of small messages allocates no engine requests (Open
     * MPI's free lists). The caller (the {@code mpi} facade) must hold the only reference the
     * application could reach: a blocking call's own request after it read the status, or the
     * operation of an {@code mpi.Request} after it released it. Only requests that completed
     * with success (or were cancelled) and are in none of the engine's queues are kept
     * ({@link Request#recyclable}); others are left to the garbage collector.
     */
    public void recycle(Request r) {
        if (r.engine != this || !r.recyclable()) return;
        RequestPool p = pools.get();
        if (p == null) pools.set(p = new RequestPool());
        p.push(r);
    }

    private MatchQueues queues(int context) {
        if (context == lastContext) return lastQueues;
        MatchQueues q = contexts.get(context);
        if (q == null) {
            q = new MatchQueues(contMode && (context & 1) == 0);
            contexts.put(context, q);
        }
        lastContext = context;
        lastQueues = q;
        return q;
    }

    /**
     * One-entry cache of {@link #queues}: most traffic goes to one communicator at a time. Emptied
     * ({@link #forgetQueues}) with a context id no communicator has, so that the lookup's only
     * test is one the JIT has seen fail on the fault-free path (a context switch): a null test
     * that only a recovery took deoptimized it in every survivor (seen with
     * {@code -Xlog:deoptimization}).
     */
    private int lastContext = NO_CONTEXT;
    private MatchQueues lastQueues;
    private static final int NO_CONTEXT = Integer.MIN_VALUE;

    private void forgetQueues() {
        lastContext = NO_CONTEXT;
        lastQueues = null;
    }

    /** MPI_Finalize: waits for every rank, then closes the transports. */
    public void finish() throws IOException {
        // Drain our own outstanding sends so that no message a user sent is lost.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        int idle = 0;
        while (hasUnsentData() && System.nanoTime() < deadline && abortReason == null) {
            idle = progressOrPause(idle);
        }
        runtime.finalizeBarrier();
        if (contMode && generation > 0) reportStaleCont();
        close();
        runtime.close();
    }

    /**
     * Message mode CONT at MPI_Finalize. A message sent on a communicator that a recovery then
     * invalidated stays queued for a re-created communicator with the same context id (spec
     * chapter 5: "reconstruct the communicators in the identical order"); every recovery restarts
     * the creation sequences, so before MPI_Finalize no point is certain at which the program
     * will not re-create it. Here it is: the messages of an older generation still queued on a
     * context id that no communicator of this process uses, and the receives still posted there,
     * are reported on stderr (one line) and go with the engine.
     */
    private void reportStaleCont() {
        int messages = 0, receives = 0;
        lock.lock();
        try {
            for (Map.Entry<Integer, MatchQueues> e : contexts.entrySet()) {
                MatchQueues q = e.getValue();
                if (!q.cont || e.getKey() <= 2 || contextIds.contains(e.getKey())) continue;
                for (MatchQueues.Unexpected u = q.unexpected.first(); u != null; u = q.unexpected.next(u)) {
                    if (u.epoch < generation) messages++;
                }
                for (Request r : q.posted) if (r.epoch < generation) receives++;
            }
        } finally {
            lock.unlock();
        }
        if (messages + receives == 0) return;
        System.err.println("ftmpi: rank " + rank + ": MPI_Finalize (msg-mode cont): " + messages + " message(s) sent"
                + " on communicators that a recovery invalidated were never received, and " + receives + " receive(s)"
                + " posted on them never matched: the program did not re-create those communicators in the same order");
    }

    private boolean hasUnsentData() {
        lock.lock();
        try {
            if (!pumping.isEmpty() || !deferred.isEmpty()) return true;
            for (int r = 0; r < size; r++) {
                if (!peerFailed[r] && route[r].backlogBytes(r) > 0) return true;
            }
            return false;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        trace.flush();
        if (trace.all()) trace.print(System.err, rank); // ft-trace=all: the application's agreements too
        closed = true;
        pools.remove(); // the pools of other threads go with them (a rank's thread, MPI.Finalize's)
        if (agent != null) agent.interrupt();
        lock.lock();
        try {
            for (Transport t : transports) t.close();
        } finally {
            lock.unlock();
        }
    }
}
