package mpi;

import java.lang.foreign.MemorySegment;
import java.nio.Buffer;
import java.nio.IntBuffer;
import org.ftmpi.p2p.CommFt;
import org.ftmpi.coll.Channel;
import org.ftmpi.coll.Collectives;
import org.ftmpi.coll.Dissemination;
import org.ftmpi.coll.Reducer;
import org.ftmpi.p2p.Engine;
import org.ftmpi.p2p.ErrorClass;
import org.ftmpi.p2p.P2pException;
import org.ftmpi.runtime.RankRuntime;

/**
 * A communicator: a group of processes and a context in which they exchange messages. Method
 * names, signatures and semantics are those of Open MPI's Java bindings.
 *
 * <p><b>Note:</b> thread-safe under {@code MPI.THREAD_MULTIPLE}.
 */
public class Comm implements Freeable, Cloneable {
    Engine engine;
    /** Context id of point-to-point traffic; collectives use {@code context + 1}. */
    int context;
    int epoch;
    int rank;
    int size;
    /** World rank of each rank of this communicator. */
    int[] world;
    /** World rank of each rank point-to-point calls address: {@link #world}, or an intercommunicator's remote group. */
    int[] peers;
    volatile Errhandler errhandler;
    String name;
    boolean predefined;
    /** The engine's fault-tolerance state of this communicator (revoked, failed members, agreements). */
    CommFt ft;
    /** Failures of members acknowledged with {@link #ackFailed} (a prefix of {@link #getFailed}). */
    volatile int acked;
    /**
     * Under recovery mode IGNORE (job option {@code recovery-mode=ignore}), receives and probes
     * from ANY_SOURCE raise while a member's failure is unacknowledged (ULFM); otherwise they
     * keep matching the survivors' messages.
     */
    boolean anySourceRule;
    /** Cached attributes (copied by dup, dropped by free). */
    Attributes attrs = new Attributes(Attributes.Kind.COMM);
    /** FT-MPI recovery of this process's job (shared by COMM_WORLD and everything made from it); null for none. */
    Recovery recovery;
    /**
     * Comm-mode BLANK: the ranks of the members that are not blanks, in order, when some member is
     * a blank (a failed process a recovery covered); null otherwise. Collectives run over these.
     */
    int[] live;
    /**
     * FT-MPI collective mode ATOMIC (job option {@code coll-mode=atomic}): collectives compute
     * into scratch buffers and copy out only after the members agreed that every part succeeded.
     */
    boolean atomic;

    Comm() {}

    /** Binds this communicator to an engine. */
    void bind(Engine engine, int context, int rank, int[] world, String name, boolean predefined) {
        this.engine = engine;
        this.context = context;
        this.rank = rank;
        this.size = world.length;
        this.world = world;
        this.peers = world;
        this.name = name;
        this.predefined = predefined;
        this.errhandler = MPI.ERRORS_ARE_FATAL;
        this.ft = engine.registerComm(context, world);
        this.anySourceRule = "ignore".equals(engine.job().option("recovery-mode", "abort"));
        this.epoch = engine.generation();
        this.live = engine.recovers() ? BlankColls.liveRanks(engine, world) : null;
        this.atomic = engine.job().option("coll-mode", "nonatomic").equals("atomic");
        // --inject at-call: armed once, by an original process (not by a rebind after a
        // recovery, nor in a replacement, which would otherwise die at the same call again)
        if (predefined && context == 0 && epoch == 0 && !engine.isRestarted()) FaultPoint.arm(engine);
    }

    /**
     * FT-MPI recovery: re-makes this predefined communicator (COMM_WORLD or COMM_SELF) in the new
     * generation with the given members, keeping its context id, name and error handler; its
     * construction and agreement sequences restart, as after MPI_Init.
     */
    final void rebind(int[] members, int newRank) {
        Errhandler h = errhandler;
        bind(engine, context, newRank, members, name, true);
        errhandler = h;
        acked = 0;
        synchronized (this) {
            creations = 0;
            agreements = 0;
            groupAgreements = null;
            channel = null;
            schedule = null;
        }
    }

    // ------------------------------------------------------------------ basics

    /** Size of the group of this communicator. */
    public final int getSize() throws MPIException {
        check("getSize");
        return size;
    }

    /** Rank of the calling process in this communicator. */
    public final int getRank() throws MPIException {
        check("getRank");
        return rank;
    }

    /** Whether this is an intercommunicator. */
    public boolean isInter() throws MPIException {
        check("isInter");
        return false;
    }

    public final void setName(String name) throws MPIException {
        check("setName");
        this.name = name;
    }

    public final String getName() throws MPIException {
        check("getName");
        return name;
    }

    /** Sets the error handler of this communicator. */
    public final void setErrhandler(Errhandler errhandler) throws MPIException {
        check("setErrhandler");
        if (errhandler == null) throw raise(MPI.ERR_ARG, "setErrhandler: errhandler is null");
        this.errhandler = errhandler;
    }

    /** The error handler of this communicator. */
    public final Errhandler getErrhandler() throws MPIException {
        check("getErrhandler");
        return errhandler;
    }

    /**
     * MPI_COMM_CALL_ERRHANDLER: invokes this communicator's error handler with {@code errorCode}
     * (an error class or code, predefined or added with {@link MPI#addErrorCode}). Under
     * {@link MPI#ERRORS_ARE_FATAL} the job aborts with that code; under {@link MPI#ERRORS_RETURN}
     * the call returns normally, as MPI_Comm_call_errhandler returns MPI_SUCCESS once the
     * handler has returned.
     */
    public final void callErrhandler(int errorCode) throws MPIException {
        check("callErrhandler");
        int errorClass;
        String text;
        try {
            errorClass = ErrorCodes.classOf(errorCode);
            text = ErrorCodes.string(errorCode);
        } catch (MPIException e) {
            throw raise(MPI.ERR_ARG, "callErrhandler: errorCode " + errorCode + " is not an error class or code"
                    + " (predefined, or added with MPI.addErrorClass/addErrorCode)");
        }
        handle(new MPIException(errorCode, errorClass, "callErrhandler: error code " + errorCode
                + (text.isEmpty() ? "" : " (" + text + ")") + " passed to the error handler of " + name));
    }

    /** MPI_ABORT: ends every process of the job with {@code errorcode}. */
    public final void abort(int errorcode) throws MPIException {
        check("abort");
        abortJob(errorcode, "MPI_Abort was called on " + name + " with errorcode " + errorcode);
    }

    /** Predefined communicators cannot be freed. */
    @Override
    public void free() throws MPIException {
        if (invalidated()) { // its context id may belong to a communicator re-created since
            attrs.clear();
            engine = null;
            return;
        }
        check("free");
        if (predefined) throw raise(MPI.ERR_COMM, "free: cannot free the predefined communicator " + name);
        if (context > 2) {
            engine.unregisterComm(context);
            engine.releaseContext(context);
        }
        attrs.clear();
        engine = null;
    }

    /** Made before the last FT-MPI recovery, which invalidated it (COMM_WORLD and COMM_SELF are re-made). */
    final boolean invalidated() {
        return engine != null && !predefined && engine.recovers() && epoch < engine.generation();
    }

    /** Whether this communicator has been freed (MPI_COMM_NULL). */
    public final boolean isNull() {
        return engine == null && !predefined;
    }

    /**
     * Duplicates this communicator (MPI_COMM_DUP), as Open MPI's bindings do; collective.
     * Prefer {@link #dup()}, which can throw {@link MPIException}.
     */
    @Override
    public Comm clone() {
        try {
            return dup();
        } catch (MPIException e) {
            throw new RuntimeException(e.getMessage(), e);
        }
    }

    // ------------------------------------------------------------------ blocking point-to-point

    /** Blocking send (MPI_SEND). */
    public final void send(Object buf, int count, Datatype type, int dest, int tag) throws MPIException {
        blockingSend("send", buf, count, type, dest, tag, org.ftmpi.p2p.Request.STANDARD);
    }

    /** Synchronous send (MPI_SSEND): returns once the matching receive has started. */
    public final void sSend(Object buf, int count, Datatype type, int dest, int tag) throws MPIException {
        blockingSend("sSend", buf, count, type, dest, tag, org.ftmpi.p2p.Request.SYNC);
    }

    /** Ready send (MPI_RSEND). */
    public final void rSend(Object buf, int count, Datatype type, int dest, int tag) throws MPIException {
        blockingSend("rSend", buf, count, type, dest, tag, org.ftmpi.p2p.Request.READY);
    }

    /** Buffered send (MPI_BSEND): copies into the attached buffer and returns at once. */
    public final void bSend(Object buf, int count, Datatype type, int dest, int tag) throws MPIException {
        check("bSend");
        checkDest("bSend", dest);
        checkSendTag("bSend", tag);
        bufferedSend("bSend", region(buf, count, type, "bSend", false), dest, tag);
    }

    private void blockingSend(String op, Object buf, int count, Datatype type, int dest, int tag, int mode)
            throws MPIException {
        check(op);
        checkDest(op, dest);
        checkSendTag(op, tag);
        Buffers.Region g = region(buf, count, type, op, Buffers.STREAM_SEND);
        org.ftmpi.p2p.Request r = g.streamed ? startSend(g, dest, tag, mode)
                : engine.sendAndForget(context, epoch, rank, dest, dest >= 0 ? peers[dest] : -1, tag,
                        g.seg, g.off, g.bytes, mode);
        awaitBlocking(r, true, op);
        report(r, op);
        engine.recycle(r);
    }

    /** Blocking receive (MPI_RECV). */
    public final Status recv(Object buf, int count, Datatype type, int source, int tag) throws MPIException {
        check("recv");
        checkSource("recv", source);
        checkRecvTag("recv", tag);
        Buffers.Region g = region(buf, count, type, "recv", Buffers.STREAM_RECV);
        if (source == MPI.ANY_SOURCE && unacknowledgedFailure()) throw anySourceFailure("recv", false);
        org.ftmpi.p2p.Request r = startRecv(g, source, tag);
        if (source == MPI.ANY_SOURCE && anySourceRule) awaitAnySource(r, "recv", true);
        else awaitBlocking(r, false, "recv");
        Status s = received(r, g, "recv");
        engine.recycle(r);
        return s;
    }

    /** MPI_SENDRECV. */
    public final Status sendRecv(Object sendbuf, int sendcount, Datatype sendtype, int dest, int sendtag,
                                 Object recvbuf, int recvcount, Datatype recvtype, int source, int recvtag)
            throws MPIException {
        check("sendRecv");
        checkDest("sendRecv", dest);
        checkSendTag("sendRecv", sendtag);
        checkSource("sendRecv", source);
        checkRecvTag("sendRecv", recvtag);
        Buffers.Region s = region(sendbuf, sendcount, sendtype, "sendRecv", Buffers.STREAM_SEND);
        Buffers.Region g = region(recvbuf, recvcount, recvtype, "sendRecv", Buffers.STREAM_RECV);
        org.ftmpi.p2p.Request rr = startRecv(g, source, recvtag);
        org.ftmpi.p2p.Request sr = startSend(s, dest, sendtag, org.ftmpi.p2p.Request.STANDARD);
        awaitBlocking(sr, true, "sendRecv");
        awaitBlocking(rr, false, "sendRecv");
        report(sr, "sendRecv");
        Status st = received(rr, g, "sendRecv");
        engine.recycle(sr);
        engine.recycle(rr);
        return st;
    }

    /** MPI_SENDRECV_REPLACE. */
    public final Status sendRecvReplace(Object buf, int count, Datatype type, int dest, int sendtag,
                                        int source, int recvtag) throws MPIException {
        check("sendRecvReplace");
        checkDest("sendRecvReplace", dest);
        checkSendTag("sendRecvReplace", sendtag);
        checkSource("sendRecvReplace", source);
        checkRecvTag("sendRecvReplace", recvtag);
        Buffers.Region g = region(buf, count, type, "sendRecvReplace", Buffers.INOUT);
        // the outgoing copy in this thread's kept scratch (not a new array per call: a halo
        // exchange of 1 MiB made a humongous object at every call); not given back on an error,
        // so that a send that is still reading it can never see a later call's data
        MemorySegment copy = org.ftmpi.coll.Scratch.take(g.bytes);
        MemorySegment.copy(g.seg, g.off, copy, 0, g.bytes);
        org.ftmpi.p2p.Request rr = startRecv(g, source, recvtag);
        org.ftmpi.p2p.Request sr = engine.send(context, epoch, rank, dest, dest >= 0 ? peers[dest] : -1, sendtag, copy, 0,
                g.bytes, org.ftmpi.p2p.Request.STANDARD);
        awaitBlocking(sr, true, "sendRecvReplace");
        awaitBlocking(rr, false, "sendRecvReplace");
        report(sr, "sendRecvReplace");
        Status st = received(rr, g, "sendRecvReplace");
        engine.recycle(sr);
        engine.recycle(rr);
        org.ftmpi.coll.Scratch.giveBack(copy);
        return st;
    }

    // ------------------------------------------------------------------ non-blocking

    /** MPI_ISEND (direct buffers only, as in Open MPI's bindings). */
    public final Request iSend(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return nonBlockingSend("iSend", buf, count, type, dest, tag, org.ftmpi.p2p.Request.STANDARD);
    }

    /** MPI_ISSEND. */
    public final Request isSend(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return nonBlockingSend("isSend", buf, count, type, dest, tag, org.ftmpi.p2p.Request.SYNC);
    }

    /** MPI_IRSEND. */
    public final Request irSend(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return nonBlockingSend("irSend", buf, count, type, dest, tag, org.ftmpi.p2p.Request.READY);
    }

    /** MPI_IBSEND: complete as soon as the message is copied into the attached buffer. */
    public final Request ibSend(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        check("ibSend");
        checkDest("ibSend", dest);
        checkSendTag("ibSend", tag);
        Buffers.Region g = direct(buf, count, type, "ibSend");
        bufferedSend("ibSend", g, dest, tag);
        return new Request(engine.completedRequest(org.ftmpi.p2p.Request.Kind.SEND, dest, tag, g.bytes), this, null);
    }

    /** Same as {@link #isSend} (MPI C name MPI_Issend). */
    public final Request iSsend(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return isSend(buf, count, type, dest, tag);
    }

    /** Same as {@link #irSend} (MPI C name MPI_Irsend). */
    public final Request iRsend(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return irSend(buf, count, type, dest, tag);
    }

    /** Same as {@link #ibSend} (MPI C name MPI_Ibsend). */
    public final Request iBsend(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return ibSend(buf, count, type, dest, tag);
    }

    /** MPI_IRECV (direct buffers only). */
    public final Request iRecv(Buffer buf, int count, Datatype type, int source, int tag) throws MPIException {
        check("iRecv");
        checkSource("iRecv", source);
        checkRecvTag("iRecv", tag);
        Buffers.Region g = direct(buf, count, type, "iRecv", Buffers.STREAM_RECV);
        Request q = new Request(startRecv(g, source, tag), this, g);
        q.anySource = source == MPI.ANY_SOURCE;
        if (q.anySource) q.op.owner = q; // CONT reports it if it is still pending at a recovery
        return q;
    }

    private Request nonBlockingSend(String op, Buffer buf, int count, Datatype type, int dest, int tag, int mode)
            throws MPIException {
        check(op);
        checkDest(op, dest);
        checkSendTag(op, tag);
        Buffers.Region g = direct(buf, count, type, op, Buffers.STREAM_SEND);
        return new Request(startSend(g, dest, tag, mode), this, null);
    }

    // ------------------------------------------------------------------ persistent

    /** MPI_SEND_INIT. */
    public final Prequest sendInit(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return persistentSend("sendInit", buf, count, type, dest, tag, org.ftmpi.p2p.Request.STANDARD);
    }

    /** MPI_BSEND_INIT. */
    public final Prequest bSendInit(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        check("bSendInit");
        checkDest("bSendInit", dest);
        checkSendTag("bSendInit", tag);
        Buffers.Region g = direct(buf, count, type, "bSendInit");
        return new Prequest(this, null, () -> {
            check("start");
            g.refill();
            bufferedSend("bSendInit", g, dest, tag);
            return engine.completedRequest(org.ftmpi.p2p.Request.Kind.SEND, dest, tag, g.bytes);
        });
    }

    /** MPI_SSEND_INIT. */
    public final Prequest sSendInit(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return persistentSend("sSendInit", buf, count, type, dest, tag, org.ftmpi.p2p.Request.SYNC);
    }

    /** MPI_RSEND_INIT. */
    public final Prequest rSendInit(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return persistentSend("rSendInit", buf, count, type, dest, tag, org.ftmpi.p2p.Request.READY);
    }

    /** MPI_RECV_INIT. */
    public final Prequest recvInit(Buffer buf, int count, Datatype type, int source, int tag) throws MPIException {
        check("recvInit");
        checkSource("recvInit", source);
        checkRecvTag("recvInit", tag);
        Buffers.Region g = direct(buf, count, type, "recvInit", Buffers.STREAM_RECV);
        int sourceWorld = source >= 0 ? peers[source] : -1, since = epoch;
        Prequest[] self = new Prequest[1];
        Prequest p = new Prequest(this, g, () -> {
            check("start");
            org.ftmpi.p2p.Request r = startRecv(g, follow(source, sourceWorld, since), tag);
            if (source == MPI.ANY_SOURCE) r.owner = self[0];
            return r;
        });
        self[0] = p;
        p.anySource = source == MPI.ANY_SOURCE;
        return p;
    }

    private Prequest persistentSend(String op, Buffer buf, int count, Datatype type, int dest, int tag, int mode)
            throws MPIException {
        check(op);
        checkDest(op, dest);
        checkSendTag(op, tag);
        Buffers.Region g = direct(buf, count, type, op, Buffers.STREAM_SEND);
        int destWorld = dest >= 0 ? peers[dest] : -1, since = epoch;
        return new Prequest(this, null, () -> {
            check("start");
            int d = follow(dest, destWorld, since);
            g.refill();
            return startSend(g, d, tag, mode);
        });
    }

    /**
     * A persistent request's peer: after a recovery (FT-MPI spec chapter 5), the rank its process
     * has now (comm-mode SHRINK moves ranks; BLANK and REBUILD keep them). A peer that a SHRINK
     * removed makes the start fail with {@code ERR_REQUEST}.
     */
    final int follow(int rank, int world, int since) throws MPIException {
        if (rank < 0 || epoch == since) return rank;
        for (int i = 0; i < peers.length; i++) if (peers[i] == world) return i;
        throw raise(MPI.ERR_REQUEST, "start: the persistent request's peer (rank " + rank + ", rank " + world
                + " of the initial COMM_WORLD) failed and was removed by the recovery");
    }

    /**
     * Waits for the request of a blocking point-to-point call. Under message mode CONT a failure
     * interrupts the wait: a send then returns as if buffered (it completes after the recovery),
     * a receive that has not matched is taken back and fails (repeat it after the recovery); one
     * that matched already receives from a live peer and is waited for.
     */
    final void awaitBlocking(org.ftmpi.p2p.Request r, boolean send, String op) {
        if (engine.awaitUnlessDetected(r)) return;
        boolean done = send ? engine.detach(r)
                : engine.withdraw(r, op + ": interrupted by a process failure before a message matched;"
                        + " repeat it after the recovery (msg-mode cont)");
        if (!done) engine.await(r);
        else if (send) Request.posted(r); // returns as if buffered: the progress agent completes it
    }

    /** CONT: a failure is known that no recovery covered, so waits on pending requests raise. */
    final boolean contInterrupts() {
        return engine != null && engine.contMode() && engine.needsRecovery();
    }

    /**
     * CONT: a wait or test interrupted by a failure; the request stays active, to be waited for
     * again after the recovery ({@link ProcFailedException#isPending()}; AUTO recovers first).
     */
    final MPIException contInterrupted(String op) {
        int w = engine.firstUnrecoveredFailure();
        return deliver(new ProcFailedException(engine.procFailedClass(), op + ": interrupted by the failure of rank " + w
                + " of the initial COMM_WORLD; the request stays active: wait for it again after the recovery"
                + " (msg-mode cont)", w, true));
    }

    // ------------------------------------------------------------------ probes

    /** MPI_PROBE: blocks until a matching message can be received and returns its status. */
    public final Status probe(int source, int tag) throws MPIException {
        check("probe");
        checkSource("probe", source);
        checkRecvTag("probe", tag);
        if (nullPeer(source)) return new Status(MPI.PROC_NULL, MPI.ANY_TAG, MPI.SUCCESS, false, 0);
        int idle = 0;
        while (true) {
            Engine.Probed p = probeOnce("probe", source, tag, false);
            if (p != null) return new Status(p.source(), p.tag(), MPI.SUCCESS, false, p.length());
            idle = engine.pause(idle);
        }
    }

    /** MPI_IPROBE: the status of a matching message, or {@code null} if there is none yet. */
    public final Status iProbe(int source, int tag) throws MPIException {
        check("iProbe");
        checkSource("iProbe", source);
        checkRecvTag("iProbe", tag);
        if (nullPeer(source)) return new Status(MPI.PROC_NULL, MPI.ANY_TAG, MPI.SUCCESS, false, 0);
        Engine.Probed p = probeOnce("iProbe", source, tag, false);
        return p == null ? null : new Status(p.source(), p.tag(), MPI.SUCCESS, false, p.length());
    }

    Engine.Probed probeOnce(String op, int source, int tag, boolean remove) throws MPIException {
        if (ft.isRevoked()) throw raise(MPI.ERR_REVOKED, op + ": the communicator " + name + " has been revoked");
        if (source == MPI.ANY_SOURCE && unacknowledgedFailure()) throw anySourceFailure(op, false);
        try {
            return engine.probe(context, epoch, source, source >= 0 ? peers[source] : -1, tag, remove);
        } catch (P2pException e) {
            throw raise(e, op);
        }
    }

    // ------------------------------------------------------------------ groups and comparison

    /** MPI_COMM_GROUP: the group of this communicator. */
    public final Group getGroup() throws MPIException {
        check("getGroup");
        return new Group(world, world[rank]);
    }

    /**
     * MPI_COMM_COMPARE: {@link MPI#IDENT} for the same communicator (same context), {@link
     * MPI#CONGRUENT} for the same processes in the same order, {@link MPI#SIMILAR} for the same
     * processes in another order, else {@link MPI#UNEQUAL}.
     */
    public static int compare(Comm comm1, Comm comm2) throws MPIException {
        if (comm1 == null || comm2 == null) {
            throw MPIException.of(MPI.ERR_COMM, "compare: " + (comm1 == null ? "comm1" : "comm2") + " is null");
        }
        comm1.check("compare");
        comm2.check("compare");
        if (comm1.engine == comm2.engine && comm1.context == comm2.context) return MPI.IDENT;
        if (comm1 instanceof Intercomm || comm2 instanceof Intercomm) {
            if (!(comm1 instanceof Intercomm && comm2 instanceof Intercomm)) return MPI.UNEQUAL;
            int l = Group.compareMembers(comm1.world, comm2.world), r = Group.compareMembers(comm1.peers, comm2.peers);
            if (l == MPI.IDENT && r == MPI.IDENT) return MPI.CONGRUENT;
            return l == MPI.UNEQUAL || r == MPI.UNEQUAL ? MPI.UNEQUAL : MPI.SIMILAR;
        }
        int c = Group.compareMembers(comm1.world, comm2.world);
        return c == MPI.IDENT ? MPI.CONGRUENT : c;
    }

    /** MPI_COMM_DUP: a new communicator with the same group, a new context and this error handler. */
    public Comm dup() throws MPIException {
        return dupIntra("dup");
    }

    final Intracomm dupIntra(String op) throws MPIException {
        check(op);
        if (recovery != null && recovery.world == this && engine.needsRecovery()) {
            return recovery.recoverFromDup(); // FT-MPI manual recovery: MPI_Comm_dup(MPI_COMM_WORLD)
        }
        int id = agreeContext(op, K_DUP, true);
        Intracomm c = initDerived(newSameKind(), id, rank, world, name + ".dup");
        c.hints = hints;
        c.attrs = attrs.copy();
        return c;
    }

    /**
     * MPI_INTERCOMM_CREATE, called on the peer communicator (significant at the local leader
     * only, which talks to the remote leader over it with {@code tag}): an intercommunicator
     * between the group of {@code localComm} (collective over it) and the remote group.
     *
     * @param localComm    the local intracommunicator
     * @param localLeader  rank of the local leader in {@code localComm}
     * @param remoteLeader rank of the remote leader in this (peer) communicator
     * @param tag          tag of the leaders' messages on the peer communicator
     */
    public final Intercomm createIntercomm(Comm localComm, int localLeader, int remoteLeader, int tag)
            throws MPIException {
        if (localComm == null) throw MPIException.of(MPI.ERR_COMM, "createIntercomm: localComm is null");
        localComm.check("createIntercomm");
        if (!(localComm instanceof Intracomm lc)) {
            throw localComm.raise(MPI.ERR_COMM, "createIntercomm: localComm " + localComm.name + " is not an intracommunicator");
        }
        if (localLeader < 0 || localLeader >= lc.size) {
            throw lc.raise(MPI.ERR_RANK, "createIntercomm: localLeader " + localLeader + " is not a rank of "
                    + lc.name + " (size " + lc.size + ")");
        }
        if (lc.blankPeer(localLeader)) {
            throw lc.raise(MPI.ERR_RANK, "createIntercomm: localLeader " + localLeader + " is a blank of " + lc.name
                    + " (comm-mode BLANK): the leader must be a live member");
        }
        return Intercomm.create(this, lc, localLeader, remoteLeader, tag);
    }

    // ------------------------------------------------------------------ context ids

    static final int K_DUP = 1, K_SPLIT = 2, K_CREATE = 3, K_INTERCOMM = 7, K_MERGE = 8;
    /** Communicator constructions started on this communicator by this process. */
    private int creations;

    /**
     * Agrees collectively on the context id of a communicator made from this one. Every member
     * derives the same candidate from this communicator's id and its creation sequence number,
     * reserves it tentatively, and an allreduce checks that every member proposed the same id for
     * the same kind of construction (else the calls were made in different orders: ERR_COMM)
     * and that the id is free at every member (else all move on to the next candidate).
     *
     * @param keep whether this process will be a member of the new communicator
     */
    final int agreeContext(String op, int kind, boolean keep) throws MPIException {
        return agreeContext(op, kind, keep, nextCreation(), cc(), atomic);
    }

    /** Communicator constructions started on this communicator so far (the same at every member between calls). */
    final synchronized int creationCount() {
        return creations;
    }

    /** The next creation sequence number (taken at the call, in call order, for {@code iDup}). */
    final synchronized int nextCreation() {
        return ++creations;
    }

    /**
     * {@link #agreeContext(String, int, boolean)} for sequence {@code seq}, over channel {@code ch}.
     * {@code vote}: FT-MPI ATOMIC (blocking constructors): after each attempt's reduction the
     * members agree whether every member's part succeeded, so that either all of them get the new
     * communicator or all raise. The non-blocking {@code iDup} passes false: its schedule agrees
     * once over the whole operation ({@link Schedule#submitColl}).
     */
    final int agreeContext(String op, int kind, boolean keep, int seq, Channel ch, boolean vote) throws MPIException {
        return agreeContext(op, kind, keep, seq, ch, vote ? ok -> atomicVote(atomicAgreementId(), ok) : null,
                op + ": the members of " + name + " did not call communicator constructors (dup, split, create) in"
                        + " the same order");
    }

    /** ATOMIC: one agreement whether every member's part of a step succeeded ({@link #atomicVote}). */
    @FunctionalInterface
    interface Voter {
        P2pException vote(boolean ok) throws P2pException;
    }

    /**
     * The attempts of {@link #agreeContext(String, int, boolean, int, Channel, boolean)}: every
     * member checks {@code kind} (a construction's identity; a mismatch raises ERR_COMM with
     * {@code mismatch}), and under ATOMIC ({@code voter} not null) each attempt ends in the
     * voter's agreement.
     */
    final int agreeContext(String op, long kind, boolean keep, int seq, Channel ch, Voter voter, String mismatch)
            throws MPIException {
        for (int attempt = 0; ; attempt++) {
            int candidate = deriveContext(context, seq, attempt);
            boolean reserved = candidate > 2 && engine.reserveContext(candidate);
            long[] v = {candidate, -candidate, kind, -kind, reserved ? 0 : 1};
            MemorySegment s = MemorySegment.ofArray(v.clone());
            MemorySegment r = MemorySegment.ofArray(v);
            P2pException failed = null;
            try {
                collectives().allReduce(ch, s, r, v.length, MPI.MAX.reducer(MPI.LONG, op));
            } catch (P2pException e) {
                failed = e;
            }
            if (voter != null) {
                try {
                    P2pException other = voter.vote(failed == null);
                    if (failed == null) failed = other;
                } catch (P2pException e) {
                    if (failed == null) failed = e;
                }
            }
            if (failed != null) {
                if (reserved) engine.releaseContext(candidate);
                throw raise(failed, op);
            }
            if (v[0] != -v[1] || v[2] != -v[3]) {
                if (reserved) engine.releaseContext(candidate);
                throw raise(MPI.ERR_COMM, mismatch);
            }
            if (v[4] == 0) {
                if (!keep) engine.releaseContext(candidate);
                return candidate;
            }
            if (reserved) engine.releaseContext(candidate);
        }
    }

    /** An even context id (its successor carries collectives) from parent id, sequence and attempt. */
    static int deriveContext(int parent, int seq, int attempt) {
        long z = ((long) parent << 32) ^ ((long) seq << 8) ^ attempt;
        z += 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        z ^= z >>> 31;
        return (int) (z >>> 34) << 1;
    }

    final Intracomm derived(int id, int newRank, int[] members, String newName) {
        return initDerived(new Intracomm(), id, newRank, members, newName);
    }

    /** Binds {@code c} as a communicator derived from this one (inherits the error handler). */
    final <C extends Comm> C initDerived(C c, int id, int newRank, int[] members, String newName) {
        c.bind(engine, id, newRank, members, newName, false);
        c.errhandler = errhandler;
        c.recovery = recovery;
        return c;
    }

    /** An unbound communicator of this one's kind, for duplicates (topologies override it). */
    Intracomm newSameKind() {
        return new Intracomm();
    }

    // ------------------------------------------------------------------ collectives: plumbing

    private Channel channel;

    final Channel channel() {
        Channel ch = channel;
        if (ch == null) channel = ch = new CollChannel();
        return ch;
    }

    static Collectives collectives() {
        return Collectives.load();
    }

    /**
     * The channel the collectives run over: {@link #channel()}, or under comm-mode BLANK with
     * blanks the channel over the non-blank members only (spec 4.1: blanks are skipped, a
     * non-blank temporary root, no invented values, user operations never see a blank).
     */
    final Channel cc() {
        return dense(channel());
    }

    /** {@code c}, or under comm-mode BLANK with blanks the same channel over the non-blank members only. */
    final Channel dense(Channel c) {
        return live == null ? c : new BlankColls.Dense(c, live, rank);
    }

    /** Per-rank blocks as {@link #cc()} sees them: those of the non-blank members (blanks' stay untouched). */
    final MemorySegment[] sel(MemorySegment[] blocks) {
        return live == null || blocks == null ? blocks : BlankColls.select(blocks, live);
    }

    /** Per-rank counts as {@link #cc()} sees them (a copy). */
    final int[] sel(int[] counts) {
        return live == null ? counts.clone() : BlankColls.select(counts, live);
    }

    /** A vector of per-rank blocks ({@code counts[i]} elements of {@code type}) as {@link #cc()} sees it. */
    final MemorySegment sel(MemorySegment all, int[] counts, Datatype type) {
        return live == null ? all : BlankColls.compact(all, counts, live, type.sizeBytes);
    }

    /** MPI.PROC_NULL, or (comm-mode BLANK) a blank: probes for it return the null status at once. */
    final boolean nullPeer(int source) {
        return source == MPI.PROC_NULL || blankPeer(source);
    }

    /** Whether {@code peer} (a rank of the group point-to-point calls address) is a blank (comm-mode BLANK). */
    boolean blankPeer(int peer) {
        return live != null && peer >= 0 && peer < size && BlankColls.indexOf(live, peer) < 0;
    }

    /** Ranks (of neighbours) as {@link #cc()} sees them; a blank becomes a negative rank, which is skipped as PROC_NULL. */
    final int[] dense(int[] ranks) {
        if (live == null) return ranks;
        int[] out = new int[ranks.length];
        for (int i = 0; i < ranks.length; i++) out[i] = ranks[i] < 0 ? ranks[i] : BlankColls.indexOf(live, ranks[i]);
        return out;
    }

    /** {@code root} as a rank of {@link #cc()}; -1 when the root is a blank. */
    final int rt(int root) {
        return live == null ? root : BlankColls.indexOf(live, root);
    }

    /** The collective context as a {@link Channel}. */
    private final class CollChannel implements Channel {
        @Override public int rank() { return rank; }

        @Override public int size() { return size; }

        @Override
        public org.ftmpi.p2p.Request send(int dest, int tag, MemorySegment data) {
            return engine.sendAndForget(context + 1, epoch, rank, dest, world[dest], tag, data, 0, data.byteSize(),
                    org.ftmpi.p2p.Request.STANDARD);
        }

        @Override
        public org.ftmpi.p2p.Request receive(int source, int tag, MemorySegment into) {
            return engine.receive(context + 1, epoch, source, world[source], tag, into, 0, into.byteSize());
        }

        /** Waits for every request, throws the first error, and gives the requests back to the engine's pool. */
        @Override
        public void waitAll(org.ftmpi.p2p.Request... rs) throws P2pException {
            awaitAll(engine, rs);
            for (org.ftmpi.p2p.Request r : rs) engine.recycle(r);
        }

        /** As {@link #waitAll}, without its array. */
        @Override
        public void waitFor(org.ftmpi.p2p.Request r) throws P2pException {
            engine.await(r);
            throwIfFailed(r);
            engine.recycle(r);
        }

        /** As the default, without the array of a {@code waitAll(s, r)}, and the requests given back. */
        @Override
        public void sendReceive(int dest, MemorySegment data, int source, MemorySegment into, int tag)
                throws P2pException {
            org.ftmpi.p2p.Request r = receive(source, tag, into);
            org.ftmpi.p2p.Request s = send(dest, tag, data);
            engine.await(s);
            engine.await(r);
            throwIfFailed(s);
            throwIfFailed(r);
            engine.recycle(s);
            engine.recycle(r);
        }
    }

    /** Waits for every request, then throws the first error. */
    static void awaitAll(Engine engine, org.ftmpi.p2p.Request... rs) throws P2pException {
        for (org.ftmpi.p2p.Request r : rs) engine.await(r);
        for (org.ftmpi.p2p.Request r : rs) throwIfFailed(r);
    }

    /** Throws the error a completed request ended with, if any. */
    private static void throwIfFailed(org.ftmpi.p2p.Request r) throws P2pException {
        if (r.errorClass() != ErrorClass.SUCCESS) throw new P2pException(r.errorClass(), r.errorMessage(), r.failedRank());
    }

    private Schedule schedule;

    /** This communicator's non-blocking collective schedule (made on first use). */
    final synchronized Schedule schedule() {
        if (schedule == null) schedule = new Schedule(this);
        return schedule;
    }

    @FunctionalInterface
    interface CollBody {
        void run() throws P2pException;
    }

    /** Runs an algorithm; errors go through the error handler, user-function errors keep their class. */
    final void runColl(String op, CollBody body) throws MPIException {
        if (atomic) {
            runAtomic(op, body);
            return;
        }
        runPlain(op, body);
    }

    /**
     * Runs an algorithm without ATOMIC's agreement (also under {@code --coll-mode atomic}): for
     * steps that only some members take, such as the leaders' exchange of an intercommunicator,
     * whose outcome reaches the others through a later, agreed step.
     */
    final void runPlain(String op, CollBody body) throws MPIException {
        try {
            body.run();
        } catch (P2pException | RuntimeException e) {
            throw collError(op, e);
        }
    }

    /** What {@link #runPlain} raises for an algorithm's error {@code e}: a failed peer's error class, else ERR_OTHER. */
    private MPIException collError(String op, Exception e) {
        return e instanceof P2pException p ? collFailure(p, op) : handle(MPIException.of(MPI.ERR_OTHER, op + ": " + e));
    }

    /**
     * FT-MPI ATOMIC (spec 5.2): runs the algorithm (into the scratch buffers {@link #buf} gives
     * in this mode), then the members agree (the fault-tolerant agreement of {@link #agree}) on
     * whether every part succeeded. Only then does the caller copy the results out ({@link
     * Buf#done()}); otherwise every surviving member raises and no receive buffer changed.
     */
    private void runAtomic(String op, CollBody body) throws MPIException {
        P2pException failed = null;
        RuntimeException broken = null;
        try {
            body.run();
        } catch (P2pException e) {
            failed = e;
        } catch (RuntimeException e) {
            broken = e;
        }
        boolean ok = failed == null && broken == null;
        P2pException other;
        try {
            other = atomicVote(atomicAgreementId(), ok);
        } catch (P2pException e) {
            throw raise(e, op);
        }
        if (ok && other == null) return;
        if (failed != null) throw collFailure(failed, op);
        if (broken != null) throw handle(MPIException.of(MPI.ERR_OTHER, op + ": " + broken));
        throw raise(other, op);
    }

    /** ATOMIC: the id of the next agreement instance, taken in call order (as every member does). */
    final int atomicAgreementId() {
        return nextAgreement() << 6;
    }

    /**
     * ATOMIC: the members agree (instance {@code id}) whether every part of a collective
     * succeeded; null if all did, else the error this member reports although its own part
     * ({@code ok}) succeeded.
     */
    final P2pException atomicVote(int id, boolean ok) throws P2pException {
        return atomicVote(ft, id, ok);
    }

    /** {@link #atomicVote(int, boolean)} over the members of {@code f} (a subgroup: {@code createGroup}). */
    final P2pException atomicVote(CommFt f, int id, boolean ok) throws P2pException {
        Engine.Decision d = engine.agree(f, id, ok ? 1 : 0);
        if (d.value() == 1) return null;
        int[] gone = d.failedWorld();
        int w = gone.length > 0 ? gone[0] : -1;
        return new P2pException(w >= 0 ? engine.procFailedClass() : MPI.ERR_OTHER, "atomic collective: the part"
                + " of another member failed" + (w >= 0 ? " (rank " + w + " of the initial COMM_WORLD failed)" : "")
                + "; no receive buffer was changed", w);
    }

    /** ATOMIC, non-blocking collectives: scratch buffers made for the next {@link Schedule#submitColl}. */
    private java.util.List<Buf> nbScratch;

    /**
     * Registers {@code b}, a buffer the next non-blocking collective may write, for its copy-out
     * under ATOMIC (if it is a scratch copy); buffers it only reads are not registered.
     */
    final Buf nbOut(Buf b) {
        if (b.scratch) {
            if (nbScratch == null) nbScratch = new java.util.ArrayList<>();
            nbScratch.add(b);
        }
        return b;
    }

    /** The buffers registered by {@link #nbOut} since the last call. */
    final java.util.List<Buf> takeNbScratch() {
        java.util.List<Buf> l = nbScratch == null ? java.util.List.of() : nbScratch;
        nbScratch = null;
        return l;
    }

    /** The error of a failed collective algorithm; user-function errors keep their class. */
    final MPIException collFailure(P2pException e, String op) {
        if (e.getCause() instanceof MPIException m) {
            return handle(MPIException.of(m.getErrorClass(), op + ": user operation failed: " + m.getMessage()));
        }
        return raise(e, op);
    }

    /** ERR_COMM on an intercommunicator: forms and operations defined (or built) for intracommunicators only. */
    final void intraOnly(String op) throws MPIException {
        if (this instanceof Intercomm) {
            throw raise(MPI.ERR_COMM, op + ": not available on the intercommunicator " + name
                    + " (MPI_IN_PLACE forms and ULFM agreement/shrink are intracommunicator-only here;"
                    + " see docs/api-coverage.md)");
        }
    }

    /** {@link #check} for a non-blocking collective on an intracommunicator (intercommunicators dispatch before). */
    final void checkNb(String op) throws MPIException {
        takeNbScratch(); // drops what a call that failed its checks after making buffers left here
        check(op);
        intraOnly(op);
    }

    /** Argument errors found before any communication, through the error handler. */
    final MPIException argError(MPIException e) {
        return handle(e);
    }

    final void checkRoot(String op, int root) throws MPIException {
        if (root < 0 || root >= size) {
            throw raise(MPI.ERR_ROOT, op + ": root " + root + " is not a rank of " + name + " (size " + size + ")");
        }
    }

    final void checkCount(String op, String arg, int count) throws MPIException {
        if (count < 0) throw raise(MPI.ERR_COUNT, op + ": " + arg + " is negative (" + count + ")");
    }

    final Reducer reducerFor(Op op, Datatype type, String what) throws MPIException {
        if (op == null) throw raise(MPI.ERR_OP, what + ": op is null");
        if (type == null || type.isNull()) throw raise(MPI.ERR_TYPE, what + ": datatype is null");
        try {
            return op.reducer(type, what);
        } catch (MPIException e) {
            throw handle(e);
        }
    }

    /** A collective buffer: its region and its bytes as a segment. */
    static final class Buf {
        final Buffers.Region region;
        final MemorySegment seg;
        /** ATOMIC: {@link #seg} is a scratch copy of the caller's memory, copied back by {@link #done()}. */
        private final boolean scratch;

        Buf(Buffers.Region region) {
            this(region, false);
        }

        Buf(Buffers.Region region, boolean scratch) {
            this.region = region;
            MemorySegment user = region.segment();
            this.scratch = scratch && region.bytes > 0;
            if (this.scratch) {
                seg = java.lang.foreign.Arena.ofAuto().allocate(region.bytes, 8);
                MemorySegment.copy(user, 0, seg, 0, region.bytes); // blocks the collective leaves alone stay as they were
            } else {
                seg = user;
            }
        }

        /** A private copy (the send side of an in-place operation). */
        MemorySegment copy() {
            MemorySegment m = MemorySegment.ofArray(new byte[(int) seg.byteSize()]);
            MemorySegment.copy(seg, 0, m, 0, seg.byteSize());
            return m;
        }

        void done() throws MPIException {
            if (scratch) MemorySegment.copy(seg, 0, region.seg, region.off, region.bytes);
            region.finishReceive();
        }
    }

    final Buf buf(Object b, int count, Datatype type, String op, String arg) throws MPIException {
        return new Buf(collRegion(b, count, type, op, arg), atomic);
    }

    /** The checked region of a collective buffer (what {@link #buf} wraps). */
    private Buffers.Region collRegion(Object b, int count, Datatype type, String op, String arg) throws MPIException {
        checkCount(op, arg == null ? "count" : arg, count);
        try {
            return region(b, count, type, op, Buffers.INOUT);
        } catch (MPIException e) {
            throw handle(e);
        }
    }

    /** Per-rank blocks of {@code b}: {@code count} elements each, one after another. */
    final MemorySegment[] blocks(Buf b, int count, Datatype type) {
        return blocks(b.seg, count, type);
    }

    /**
     * Per-rank blocks of {@code seg} ({@code count} elements each): the array made for the same
     * segment and block size by one of the last two calls, else a new one. A cached region's
     * segment is the same object call after call, so a loop of gathers, scatters or all-to-alls
     * into the same buffers slices them once (at np 4, 200-400 bytes per call before).
     */
    final MemorySegment[] blocks(MemorySegment seg, int count, Datatype type) {
        long len = (long) count * type.sizeBytes;
        for (BlockSet b : blockSets) {
            if (b != null && b.seg == seg && b.counts == null && b.bytes == len) return b.blocks;
        }
        MemorySegment[] out = new MemorySegment[size];
        for (int i = 0; i < size; i++) out[i] = seg.asSlice(i * len, len);
        return keep(new BlockSet(seg, len, null, null, out));
    }

    /** {@link #blocks} for varying blocks: {@code counts[i]} elements at {@code displs[i]} (in elements). */
    final MemorySegment[] vblocks(MemorySegment seg, int[] counts, int[] displs, Datatype type) {
        long eb = type.sizeBytes;
        for (BlockSet b : blockSets) {
            if (b != null && b.seg == seg && b.counts != null && b.bytes == eb
                    && java.util.Arrays.equals(b.counts, 0, size, counts, 0, size)
                    && java.util.Arrays.equals(b.displs, 0, size, displs, 0, size)) {
                return b.blocks;
            }
        }
        return keep(new BlockSet(seg, eb, java.util.Arrays.copyOf(counts, size), java.util.Arrays.copyOf(displs, size),
                vblocks(seg, counts, displs, type, size)));
    }

    /**
     * Block arrays {@link #blocks} made: of segment {@code seg}, uniform blocks of {@code bytes}
     * ({@code counts} null) or {@code counts}/{@code displs} in elements of {@code bytes}.
     * Immutable (the algorithms only read {@code blocks}); the two slots are written racily,
     * which costs at most one more array.
     */
    private record BlockSet(MemorySegment seg, long bytes, int[] counts, int[] displs, MemorySegment[] blocks) {}

    private final BlockSet[] blockSets = new BlockSet[2];
    private int nextBlockSet;

    private MemorySegment[] keep(BlockSet b) {
        int i = nextBlockSet;
        blockSets[i] = b;
        nextBlockSet = i ^ 1;
        return b.blocks;
    }

    /** A buffer holding blocks of {@code counts[i]} elements at {@code displs[i]} (in elements). */
    final Buf vbuf(Object b, int[] counts, int[] displs, Datatype type, String op, String countsArg,
                   String displsArg) throws MPIException {
        return vbuf(b, counts, displs, type, op, countsArg, displsArg, size);
    }

    /** {@link #vbuf} for {@code n} blocks. */
    final Buf vbuf(Object b, int[] counts, int[] displs, Datatype type, String op, String countsArg,
                   String displsArg, int n) throws MPIException {
        return buf(b, vcount(counts, displs, op, countsArg, displsArg, n), type, op, null);
    }

    /** Elements a buffer of blocks {@code counts[i]} at {@code displs[i]} spans, checked ({@link #vbuf}). */
    private int vcount(int[] counts, int[] displs, String op, String countsArg, String displsArg, int n)
            throws MPIException {
        long need = 0;
        checkVector(op, countsArg, counts, n);
        if (displs != null) checkVector(op, displsArg, displs, n);
        for (int i = 0; i < n; i++) {
            long end = (displs == null ? 0 : displs[i]) + (long) counts[i];
            if (counts[i] > 0) need = Math.max(need, end);
        }
        if (need > Integer.MAX_VALUE) throw raise(MPI.ERR_COUNT, op + ": " + displsArg + " + " + countsArg + " overflow");
        return (int) need;
    }

    /** {@link #vbuf}'s checks and region, without the {@link Buf} (the direct paths outside ATOMIC mode). */
    private Buffers.Region vregion(Object b, int[] counts, int[] displs, Datatype type, String op, String countsArg,
                                   String displsArg) throws MPIException {
        int need = vcount(counts, displs, op, countsArg, displsArg, size);
        if (displs == null) throw raise(MPI.ERR_ARG, op + ": " + displsArg + " is null");
        return collRegion(b, need, type, op, null);
    }

    /** allGather(v) outside ATOMIC mode: the algorithm called directly (no lambda), then {@code r} finished. */
    private void allGatherDirect(String op, MemorySegment send, Buffers.Region r, MemorySegment[] blocks)
            throws MPIException {
        try {
            collectives().allGatherv(cc(), send, blocks);
        } catch (P2pException | RuntimeException e) {
            throw collError(op, e);
        }
        r.finishReceive();
    }

    /** allToAll(v) outside ATOMIC mode: the algorithm called directly (no lambda), then {@code r} finished. */
    private void allToAllDirect(String op, MemorySegment[] send, Buffers.Region r, MemorySegment[] recv)
            throws MPIException {
        try {
            collectives().allToAllv(cc(), send, recv);
        } catch (P2pException | RuntimeException e) {
            throw collError(op, e);
        }
        r.finishReceive();
    }

    final MemorySegment[] vblocks(Buf b, int[] counts, int[] displs, Datatype type) {
        return vblocks(b.seg, counts, displs, type);
    }

    /**
     * {@code n} blocks of {@code seg} (n: the size of the group they go to or come from), block
     * {@code i} of {@code counts[i]} elements at {@code displs[i]}; an empty block is the shared
     * empty segment (nothing is ever written into it).
     */
    static MemorySegment[] vblocks(MemorySegment seg, int[] counts, int[] displs, Datatype type, int n) {
        MemorySegment[] out = new MemorySegment[n];
        for (int i = 0; i < n; i++) {
            long len = (long) counts[i] * type.sizeBytes;
            out[i] = len == 0 ? Buffers.NO_BYTES : seg.asSlice((long) displs[i] * type.sizeBytes, len);
        }
        return out;
    }

    private void checkVector(String op, String arg, int[] v) throws MPIException {
        checkVector(op, arg, v, size);
    }

    private void checkVector(String op, String arg, int[] v, int n) throws MPIException {
        if (v == null) throw raise(MPI.ERR_ARG, op + ": " + arg + " is null");
        if (v.length < n) {
            throw raise(MPI.ERR_ARG, op + ": " + arg + " has " + v.length + " entries; " + name + " has " + n
                    + (n == size ? " ranks" : " ranks in its remote group"));
        }
        for (int i = 0; i < n; i++) {
            if (v[i] < 0) {
                throw raise(arg.toLowerCase().contains("displs") ? MPI.ERR_ARG : MPI.ERR_COUNT,
                        op + ": " + arg + "[" + i + "] is negative (" + v[i] + ")");
            }
        }
    }

    // ------------------------------------------------------------------ collectives

    /**
     * MPI_BARRIER: dissemination algorithm ({@link Dissemination}), ceil(log2 size) rounds of
     * zero-byte messages on the communicator's collective context.
     */
    public final void barrier() throws MPIException {
        check("barrier");
        if (this instanceof Intercomm ic) { ic.interBarrier(); return; }
        runColl("barrier", barrierBody);
    }

    /** The barrier's body, made once: a lambda made per call cost 16 bytes where the JIT kept it. */
    private final CollBody barrierBody = () -> Dissemination.barrier(cc());

    /** MPI_BCAST (binomial tree). */
    public final void bcast(Object buf, int count, Datatype type, int root) throws MPIException {
        check("bcast");
        if (this instanceof Intercomm ic) { ic.interBcast(buf, count, type, root); return; }
        checkRoot("bcast", root);
        if (rt(root) < 0) return; // BLANK root: every process returns at once, buffers untouched
        if (!atomic) { // as allReduce: no lambda, no Buf
            Buffers.Region r = collRegion(buf, count, type, "bcast", null);
            try {
                collectives().bcast(cc(), r.segment(), rt(root));
            } catch (P2pException | RuntimeException e) {
                throw collError("bcast", e);
            }
            r.finishReceive();
            return;
        }
        Buf b = buf(buf, count, type, "bcast", null);
        runColl("bcast", () -> collectives().bcast(cc(), b.seg, rt(root)));
        b.done();
    }

    /** MPI_REDUCE; {@code recvbuf} is significant at the root only. */
    public final void reduce(Object sendbuf, Object recvbuf, int count, Datatype type, Op op, int root)
            throws MPIException {
        check("reduce");
        if (this instanceof Intercomm ic) { ic.interReduce(sendbuf, recvbuf, count, type, op, root); return; }
        checkRoot("reduce", root);
        Reducer red = reducerFor(op, type, "reduce");
        if (rt(root) < 0) return;
        if (!atomic) { // as allReduce: no lambda, no Buf
            Buffers.Region s = collRegion(sendbuf, count, type, "reduce", null);
            Buffers.Region r = rank == root ? collRegion(recvbuf, count, type, "reduce", null) : null;
            try {
                collectives().reduce(cc(), s.segment(), r == null ? null : r.segment(), count, red, rt(root));
            } catch (P2pException | RuntimeException e) {
                throw collError("reduce", e);
            }
            if (r != null) r.finishReceive();
            return;
        }
        Buf s = buf(sendbuf, count, type, "reduce", null);
        Buf r = rank == root ? buf(recvbuf, count, type, "reduce", null) : null;
        runColl("reduce", () -> collectives().reduce(cc(), s.seg, r == null ? null : r.seg, count, red, rt(root)));
        if (r != null) r.done();
    }

    /** MPI_REDUCE with MPI_IN_PLACE at the root: {@code buf} is the send buffer elsewhere. */
    public final void reduce(Object buf, int count, Datatype type, Op op, int root) throws MPIException {
        check("reduce");
        intraOnly("reduce");
        checkRoot("reduce", root);
        Reducer red = reducerFor(op, type, "reduce");
        if (rt(root) < 0) return;
        Buf b = buf(buf, count, type, "reduce", null);
        MemorySegment send = rank == root ? b.copy() : b.seg;
        runColl("reduce", () -> collectives().reduce(cc(), send, b.seg, count, red, rt(root)));
        if (rank == root) b.done();
    }

    /** MPI_ALLREDUCE. */
    public final void allReduce(Object sendbuf, Object recvbuf, int count, Datatype type, Op op)
            throws MPIException {
        check("allReduce");
        if (this instanceof Intercomm ic) { ic.interAllReduce(sendbuf, recvbuf, count, type, op); return; }
        Reducer red = reducerFor(op, type, "allReduce");
        if (!atomic) {
            // runPlain without its lambda and Bufs: a loop of small allReduces (a solver's dot
            // products) allocates nothing per call, whatever the JIT inlines (48-80 bytes otherwise)
            Buffers.Region s = collRegion(sendbuf, count, type, "allReduce", null);
            Buffers.Region r = collRegion(recvbuf, count, type, "allReduce", null);
            try {
                collectives().allReduce(cc(), s.segment(), r.segment(), count, red);
            } catch (P2pException | RuntimeException e) {
                throw collError("allReduce", e);
            }
            r.finishReceive();
            return;
        }
        Buf s = buf(sendbuf, count, type, "allReduce", null);
        Buf r = buf(recvbuf, count, type, "allReduce", null);
        runColl("allReduce", () -> collectives().allReduce(cc(), s.seg, r.seg, count, red));
        r.done();
    }

    /** MPI_ALLREDUCE with MPI_IN_PLACE. */
    public final void allReduce(Object buf, int count, Datatype type, Op op) throws MPIException {
        check("allReduce");
        intraOnly("allReduce");
        Reducer red = reducerFor(op, type, "allReduce");
        Buf b = buf(buf, count, type, "allReduce", null);
        MemorySegment send = org.ftmpi.coll.Scratch.take(b.seg.byteSize());
        MemorySegment.copy(b.seg, 0, send, 0, b.seg.byteSize());
        runColl("allReduce", () -> collectives().allReduce(cc(), send, b.seg, count, red));
        org.ftmpi.coll.Scratch.giveBack(send); // not reached when the call failed
        b.done();
    }

    /** MPI_REDUCE_LOCAL: {@code inOutBuf[i] = inBuf[i] op inOutBuf[i]}. */
    public static void reduceLocal(Object inBuf, Object inOutBuf, int count, Datatype type, Op op)
            throws MPIException {
        if (op == null) throw MPIException.of(MPI.ERR_OP, "reduceLocal: op is null");
        Buffers.Region in = Buffers.region(inBuf, count, type, "reduceLocal", false);
        Buffers.Region io = Buffers.region(inOutBuf, count, type, "reduceLocal", Buffers.INOUT);
        Buf a = new Buf(in), b = new Buf(io);
        op.reduceLocal(type, a.seg, b.seg, count, "reduceLocal");
        b.done();
    }

    /** MPI_GATHER; {@code recvbuf} is significant at the root only. */
    public final void gather(Object sendbuf, int sendcount, Datatype sendtype,
                             Object recvbuf, int recvcount, Datatype recvtype, int root) throws MPIException {
        check("gather");
        if (this instanceof Intercomm ic) { ic.interGather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root); return; }
        checkRoot("gather", root);
        if (rt(root) < 0) return;
        if (!atomic) { // as allReduce: no lambda, no Buf, the block array reused
            Buffers.Region s = collRegion(sendbuf, sendcount, sendtype, "gather", "sendcount");
            Buffers.Region r = null;
            if (rank == root) {
                checkCount("gather", "recvcount", recvcount);
                r = collRegion(recvbuf, Math.multiplyExact(recvcount, size), recvtype, "gather", "recvcount");
            }
            try {
                collectives().gatherv(cc(), s.segment(), r == null ? null : sel(blocks(r.segment(), recvcount, recvtype)),
                        rt(root));
            } catch (P2pException | RuntimeException e) {
                throw collError("gather", e);
            }
            if (r != null) r.finishReceive();
            return;
        }
        Buf s = buf(sendbuf, sendcount, sendtype, "gather", "sendcount");
        Buf r = null;
        MemorySegment[] blocks = null;
        if (rank == root) {
            checkCount("gather", "recvcount", recvcount);
            r = buf(recvbuf, Math.multiplyExact(recvcount, size), recvtype, "gather", "recvcount");
            blocks = blocks(r, recvcount, recvtype);
        }
        MemorySegment[] bl = sel(blocks);
        runColl("gather", () -> collectives().gatherv(cc(), s.seg, bl, rt(root)));
        if (r != null) r.done();
    }

    /**
     * MPI_GATHER with MPI_IN_PLACE at the root: there {@code buf} receives {@code count}
     * elements from each rank (its own block already in place); elsewhere it is the send buffer.
     */
    public final void gather(Object buf, int count, Datatype type, int root) throws MPIException {
        check("gather");
        intraOnly("gather");
        checkRoot("gather", root);
        if (rt(root) < 0) return; // BLANK root: every process returns at once, buffers untouched
        if (rank == root) {
            checkCount("gather", "count", count);
            Buf r = buf(buf, Math.multiplyExact(count, size), type, "gather", "count");
            MemorySegment[] bl = blocks(r, count, type);
            runColl("gather", () -> collectives().gatherv(cc(), null, sel(bl), rt(root)));
            r.done();
        } else {
            Buf s = buf(buf, count, type, "gather", null);
            runColl("gather", () -> collectives().gatherv(cc(), s.seg, null, rt(root)));
        }
    }

    /** MPI_GATHERV; {@code recvbuf}, {@code recvcount} and {@code displs} are significant at the root only. */
    public final void gatherv(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf,
                              int[] recvcount, int[] displs, Datatype recvtype, int root) throws MPIException {
        check("gatherv");
        if (this instanceof Intercomm ic) { ic.interGatherv("gatherv", sendbuf, sendcount, sendtype, recvbuf, recvcount, displs, recvtype, root); return; }
        checkRoot("gatherv", root);
        if (rt(root) < 0) return; // BLANK root: every process returns at once, buffers untouched
        if (!atomic) {
            Buffers.Region s = collRegion(sendbuf, sendcount, sendtype, "gatherv", "sendcount");
            Buffers.Region r = rank == root ? vregion(recvbuf, recvcount, displs, recvtype, "gatherv", "recvcount", "displs")
                    : null;
            try {
                collectives().gatherv(cc(), s.segment(),
                        r == null ? null : sel(vblocks(r.segment(), recvcount, displs, recvtype)), rt(root));
            } catch (P2pException | RuntimeException e) {
                throw collError("gatherv", e);
            }
            if (r != null) r.finishReceive();
            return;
        }
        Buf s = buf(sendbuf, sendcount, sendtype, "gatherv", "sendcount");
        Buf r = null;
        MemorySegment[] blocks = null;
        if (rank == root) {
            r = vbuf(recvbuf, recvcount, displs, recvtype, "gatherv", "recvcount", "displs");
            blocks = vblocks(r, recvcount, displs, recvtype);
        }
        MemorySegment[] bl = blocks;
        runColl("gatherv", () -> collectives().gatherv(cc(), s.seg, sel(bl), rt(root)));
        if (r != null) r.done();
    }

    /** MPI_GATHERV with MPI_IN_PLACE, at the root (its own block is already in place). */
    public final void gatherv(Object recvbuf, int[] recvcount, int[] displs, Datatype recvtype, int root)
            throws MPIException {
        check("gatherv");
        intraOnly("gatherv");
        checkRoot("gatherv", root);
        if (rt(root) < 0) return; // BLANK root: every process returns at once, buffers untouched
        if (rank != root) {
            throw raise(MPI.ERR_ROOT, "gatherv: the in-place form (recvbuf, recvcount, displs, recvtype, root) is for"
                    + " the root " + root + " only; rank " + rank + " must call gatherv(sendbuf, sendcount, sendtype, root)");
        }
        Buf r = vbuf(recvbuf, recvcount, displs, recvtype, "gatherv", "recvcount", "displs");
        MemorySegment[] bl = vblocks(r, recvcount, displs, recvtype);
        runColl("gatherv", () -> collectives().gatherv(cc(), null, sel(bl), rt(root)));
        r.done();
    }

    /** MPI_GATHERV at a non-root rank, when the root gathers in place. */
    public final void gatherv(Object sendbuf, int sendcount, Datatype sendtype, int root) throws MPIException {
        check("gatherv");
        if (this instanceof Intercomm ic) { ic.interGatherv("gatherv", sendbuf, sendcount, sendtype, null, null, null, null, root); return; }
        checkRoot("gatherv", root);
        if (rt(root) < 0) return; // BLANK root: every process returns at once, buffers untouched
        if (rank == root) {
            throw raise(MPI.ERR_ROOT, "gatherv: the root " + root + " must call gatherv(recvbuf, recvcount, displs,"
                    + " recvtype, root) (in place) or the full form");
        }
        Buf s = buf(sendbuf, sendcount, sendtype, "gatherv", "sendcount");
        runColl("gatherv", () -> collectives().gatherv(cc(), s.seg, null, rt(root)));
    }

    /** MPI_SCATTER; {@code sendbuf} is significant at the root only. */
    public final void scatter(Object sendbuf, int sendcount, Datatype sendtype,
                              Object recvbuf, int recvcount, Datatype recvtype, int root) throws MPIException {
        check("scatter");
        if (this instanceof Intercomm ic) { ic.interScatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root); return; }
        checkRoot("scatter", root);
        if (rt(root) < 0) return;
        if (!atomic) {
            Buffers.Region r = collRegion(recvbuf, recvcount, recvtype, "scatter", "recvcount");
            MemorySegment[] bl = null;
            if (rank == root) {
                checkCount("scatter", "sendcount", sendcount);
                Buffers.Region s = collRegion(sendbuf, Math.multiplyExact(sendcount, size), sendtype, "scatter", "sendcount");
                bl = sel(blocks(s.segment(), sendcount, sendtype));
            }
            try {
                collectives().scatterv(cc(), bl, r.segment(), rt(root));
            } catch (P2pException | RuntimeException e) {
                throw collError("scatter", e);
            }
            r.finishReceive();
            return;
        }
        Buf r = buf(recvbuf, recvcount, recvtype, "scatter", "recvcount");
        MemorySegment[] blocks = null;
        if (rank == root) {
            checkCount("scatter", "sendcount", sendcount);
            Buf s = buf(sendbuf, Math.multiplyExact(sendcount, size), sendtype, "scatter", "sendcount");
            blocks = blocks(s, sendcount, sendtype);
        }
        MemorySegment[] bl = sel(blocks);
        runColl("scatter", () -> collectives().scatterv(cc(), bl, r.seg, rt(root)));
        r.done();
    }

    /**
     * MPI_SCATTER with MPI_IN_PLACE at the root: there {@code buf} holds {@code count} elements
     * for each rank (the root's own block stays in place); elsewhere it is the receive buffer.
     */
    public final void scatter(Object buf, int count, Datatype type, int root) throws MPIException {
        check("scatter");
        intraOnly("scatter");
        checkRoot("scatter", root);
        if (rt(root) < 0) return; // BLANK root: every process returns at once, buffers untouched
        if (rank == root) {
            checkCount("scatter", "count", count);
            Buf s = buf(buf, Math.multiplyExact(count, size), type, "scatter", "count");
            MemorySegment[] bl = blocks(s, count, type);
            runColl("scatter", () -> collectives().scatterv(cc(), sel(bl), null, rt(root)));
        } else {
            Buf r = buf(buf, count, type, "scatter", null);
            runColl("scatter", () -> collectives().scatterv(cc(), null, r.seg, rt(root)));
            r.done();
        }
    }

    /** MPI_SCATTERV; {@code sendbuf}, {@code sendcount} and {@code displs} are significant at the root only. */
    public final void scatterv(Object sendbuf, int[] sendcount, int[] displs, Datatype sendtype,
                               Object recvbuf, int recvcount, Datatype recvtype, int root) throws MPIException {
        check("scatterv");
        if (this instanceof Intercomm ic) { ic.interScatterv("scatterv", sendbuf, sendcount, displs, sendtype, recvbuf, recvcount, recvtype, root); return; }
        checkRoot("scatterv", root);
        if (rt(root) < 0) return; // BLANK root: every process returns at once, buffers untouched
        if (!atomic) {
            Buffers.Region r = collRegion(recvbuf, recvcount, recvtype, "scatterv", "recvcount");
            MemorySegment[] bl = null;
            if (rank == root) {
                Buffers.Region s = vregion(sendbuf, sendcount, displs, sendtype, "scatterv", "sendcount", "displs");
                bl = sel(vblocks(s.segment(), sendcount, displs, sendtype));
            }
            try {
                collectives().scatterv(cc(), bl, r.segment(), rt(root));
            } catch (P2pException | RuntimeException e) {
                throw collError("scatterv", e);
            }
            r.finishReceive();
            return;
        }
        Buf r = buf(recvbuf, recvcount, recvtype, "scatterv", "recvcount");
        MemorySegment[] blocks = null;
        if (rank == root) {
            Buf s = vbuf(sendbuf, sendcount, displs, sendtype, "scatterv", "sendcount", "displs");
            blocks = vblocks(s, sendcount, displs, sendtype);
        }
        MemorySegment[] bl = blocks;
        runColl("scatterv", () -> collectives().scatterv(cc(), sel(bl), r.seg, rt(root)));
        r.done();
    }

    /** MPI_SCATTERV with MPI_IN_PLACE, at the root (its own block stays in place). */
    public final void scatterv(Object sendbuf, int[] sendcount, int[] displs, Datatype sendtype, int root)
            throws MPIException {
        check("scatterv");
        intraOnly("scatterv");
        checkRoot("scatterv", root);
        if (rt(root) < 0) return; // BLANK root: every process returns at once, buffers untouched
        if (rank != root) {
            throw raise(MPI.ERR_ROOT, "scatterv: the in-place form (sendbuf, sendcount, displs, sendtype, root) is for"
                    + " the root " + root + " only; rank " + rank + " must call scatterv(recvbuf, recvcount, recvtype, root)");
        }
        Buf s = vbuf(sendbuf, sendcount, displs, sendtype, "scatterv", "sendcount", "displs");
        MemorySegment[] bl = vblocks(s, sendcount, displs, sendtype);
        runColl("scatterv", () -> collectives().scatterv(cc(), sel(bl), null, rt(root)));
    }

    /** MPI_SCATTERV at a non-root rank, when the root scatters in place. */
    public final void scatterv(Object recvbuf, int recvcount, Datatype recvtype, int root) throws MPIException {
        check("scatterv");
        if (this instanceof Intercomm ic) { ic.interScatterv("scatterv", null, null, null, null, recvbuf, recvcount, recvtype, root); return; }
        checkRoot("scatterv", root);
        if (rt(root) < 0) return; // BLANK root: every process returns at once, buffers untouched
        if (rank == root) {
            throw raise(MPI.ERR_ROOT, "scatterv: the root " + root + " must call scatterv(sendbuf, sendcount, displs,"
                    + " sendtype, root) (in place) or the full form");
        }
        Buf r = buf(recvbuf, recvcount, recvtype, "scatterv", "recvcount");
        runColl("scatterv", () -> collectives().scatterv(cc(), null, r.seg, rt(root)));
        r.done();
    }

    /** MPI_ALLGATHER (ring). */
    public final void allGather(Object sendbuf, int sendcount, Datatype sendtype,
                                Object recvbuf, int recvcount, Datatype recvtype) throws MPIException {
        check("allGather");
        if (this instanceof Intercomm ic) { ic.interAllGatherv(sendbuf, sendcount, sendtype, recvbuf, null, null, recvcount, recvtype); return; }
        if (!atomic) {
            Buffers.Region s = collRegion(sendbuf, sendcount, sendtype, "allGather", "sendcount");
            checkCount("allGather", "recvcount", recvcount);
            Buffers.Region r = collRegion(recvbuf, Math.multiplyExact(recvcount, size), recvtype, "allGather", "recvcount");
            allGatherDirect("allGather", s.segment(), r, sel(blocks(r.segment(), recvcount, recvtype)));
            return;
        }
        Buf s = buf(sendbuf, sendcount, sendtype, "allGather", "sendcount");
        checkCount("allGather", "recvcount", recvcount);
        Buf r = buf(recvbuf, Math.multiplyExact(recvcount, size), recvtype, "allGather", "recvcount");
        MemorySegment[] bl = sel(blocks(r, recvcount, recvtype));
        runColl("allGather", () -> collectives().allGatherv(cc(), s.seg, bl));
        r.done();
    }

    /** MPI_ALLGATHER with MPI_IN_PLACE: block {@code rank} of {@code buf} holds this rank's data. */
    public final void allGather(Object buf, int count, Datatype type) throws MPIException {
        check("allGather");
        intraOnly("allGather");
        checkCount("allGather", "count", count);
        if (!atomic) {
            Buffers.Region r = collRegion(buf, Math.multiplyExact(count, size), type, "allGather", "count");
            allGatherDirect("allGather", null, r, sel(blocks(r.segment(), count, type)));
            return;
        }
        Buf r = buf(buf, Math.multiplyExact(count, size), type, "allGather", "count");
        MemorySegment[] bl = blocks(r, count, type);
        runColl("allGather", () -> collectives().allGatherv(cc(), null, sel(bl)));
        r.done();
    }

    /** MPI_ALLGATHERV (ring). */
    public final void allGatherv(Object sendbuf, int sendcount, Datatype sendtype,
                                 Object recvbuf, int[] recvcount, int[] displs, Datatype recvtype) throws MPIException {
        check("allGatherv");
        if (this instanceof Intercomm ic) { ic.interAllGatherv(sendbuf, sendcount, sendtype, recvbuf, recvcount, displs, 0, recvtype); return; }
        if (!atomic) {
            Buffers.Region s = collRegion(sendbuf, sendcount, sendtype, "allGatherv", "sendcount");
            Buffers.Region r = vregion(recvbuf, recvcount, displs, recvtype, "allGatherv", "recvcount", "displs");
            allGatherDirect("allGatherv", s.segment(), r, sel(vblocks(r.segment(), recvcount, displs, recvtype)));
            return;
        }
        Buf s = buf(sendbuf, sendcount, sendtype, "allGatherv", "sendcount");
        Buf r = vbuf(recvbuf, recvcount, displs, recvtype, "allGatherv", "recvcount", "displs");
        MemorySegment[] bl = vblocks(r, recvcount, displs, recvtype);
        runColl("allGatherv", () -> collectives().allGatherv(cc(), s.seg, sel(bl)));
        r.done();
    }

    /** MPI_ALLGATHERV with MPI_IN_PLACE: this rank's block is already at {@code displs[rank]}. */
    public final void allGatherv(Object recvbuf, int[] recvcount, int[] displs, Datatype recvtype)
            throws MPIException {
        check("allGatherv");
        intraOnly("allGatherv");
        Buf r = vbuf(recvbuf, recvcount, displs, recvtype, "allGatherv", "recvcount", "displs");
        MemorySegment[] bl = vblocks(r, recvcount, displs, recvtype);
        runColl("allGatherv", () -> collectives().allGatherv(cc(), null, sel(bl)));
        r.done();
    }

    /** MPI_ALLTOALL (pairwise exchange). */
    public final void allToAll(Object sendbuf, int sendcount, Datatype sendtype,
                               Object recvbuf, int recvcount, Datatype recvtype) throws MPIException {
        check("allToAll");
        if (this instanceof Intercomm ic) { ic.interAllToAllv(sendbuf, null, null, sendcount, sendtype, recvbuf, null, null, recvcount, recvtype); return; }
        checkCount("allToAll", "sendcount", sendcount);
        checkCount("allToAll", "recvcount", recvcount);
        if (!atomic) {
            Buffers.Region s = collRegion(sendbuf, Math.multiplyExact(sendcount, size), sendtype, "allToAll", "sendcount");
            Buffers.Region r = collRegion(recvbuf, Math.multiplyExact(recvcount, size), recvtype, "allToAll", "recvcount");
            allToAllDirect("allToAll", sel(blocks(s.segment(), sendcount, sendtype)), r,
                    sel(blocks(r.segment(), recvcount, recvtype)));
            return;
        }
        Buf s = buf(sendbuf, Math.multiplyExact(sendcount, size), sendtype, "allToAll", "sendcount");
        Buf r = buf(recvbuf, Math.multiplyExact(recvcount, size), recvtype, "allToAll", "recvcount");
        MemorySegment[] sb = blocks(s, sendcount, sendtype), rb = blocks(r, recvcount, recvtype);
        runColl("allToAll", () -> collectives().allToAllv(cc(), sel(sb), sel(rb)));
        r.done();
    }

    /** MPI_ALLTOALLV (pairwise exchange). */
    public final void allToAllv(Object sendbuf, int[] sendcount, int[] sdispls, Datatype sendtype,
                                Object recvbuf, int[] recvcount, int[] rdispls, Datatype recvtype) throws MPIException {
        check("allToAllv");
        if (this instanceof Intercomm ic) { ic.interAllToAllv(sendbuf, sendcount, sdispls, 0, sendtype, recvbuf, recvcount, rdispls, 0, recvtype); return; }
        if (!atomic) {
            Buffers.Region s = vregion(sendbuf, sendcount, sdispls, sendtype, "allToAllv", "sendcount", "sdispls");
            Buffers.Region r = vregion(recvbuf, recvcount, rdispls, recvtype, "allToAllv", "recvcount", "rdispls");
            allToAllDirect("allToAllv", sel(vblocks(s.segment(), sendcount, sdispls, sendtype)), r,
                    sel(vblocks(r.segment(), recvcount, rdispls, recvtype)));
            return;
        }
        Buf s = vbuf(sendbuf, sendcount, sdispls, sendtype, "allToAllv", "sendcount", "sdispls");
        Buf r = vbuf(recvbuf, recvcount, rdispls, recvtype, "allToAllv", "recvcount", "rdispls");
        MemorySegment[] sb = vblocks(s, sendcount, sdispls, sendtype), rb = vblocks(r, recvcount, rdispls, recvtype);
        runColl("allToAllv", () -> collectives().allToAllv(cc(), sel(sb), sel(rb)));
        r.done();
    }

    /**
     * MPI_ALLTOALLW: block {@code i} has {@code sendCount[i]} elements of {@code sendTypes[i]} at
     * byte displacement {@code sDispls[i]} of {@code sendBuf} (receive side alike); direct
     * buffers, as in Open MPI's bindings. On an intercommunicator the blocks go to and come from
     * the remote group.
     */
    public final void allToAllw(Buffer sendBuf, int[] sendCount, int[] sDispls, Datatype[] sendTypes,
                                Buffer recvBuf, int[] recvCount, int[] rDispls, Datatype[] recvTypes)
            throws MPIException {
        String op = "allToAllw";
        check(op);
        WBlocks w = wBlocks(op, sendBuf, sendCount, sDispls, sendTypes, recvBuf, recvCount, rDispls, recvTypes);
        if (this instanceof Intercomm ic) ic.swapBlocks(op, w.send, w.recv);
        else runColl(op, () -> collectives().allToAllv(cc(), sel(w.send), sel(w.recv)));
        try {
            for (Buf g : w.recvBufs) g.done();
        } catch (MPIException e) {
            throw handle(e);
        }
    }

    /** MPI_IALLTOALLW: as {@link #allToAllw}, on the communicator's schedule. */
    public final Request iAllToAllw(Buffer sendBuf, int[] sendCount, int[] sDispls, Datatype[] sendTypes,
                                    Buffer recvBuf, int[] recvCount, int[] rDispls, Datatype[] recvTypes)
            throws MPIException {
        String op = "iAllToAllw";
        check(op);
        WBlocks w = wBlocks(op, sendBuf, sendCount, sDispls, sendTypes, recvBuf, recvCount, rDispls, recvTypes);
        if (this instanceof Intercomm ic) return ic.iSwapBlocks(op, w.send, w.recv, w.recvBufs);
        for (Buf b : w.recvBufs) nbOut(b); // ATOMIC: copied out (and finished) once the members agree
        return schedule().submitColl(this, op, ch -> {
            collectives().allToAllv(ch, sel(w.send), sel(w.recv));
            if (!atomic) for (Buffers.Region g : w.recvRegions) g.finishReceive();
        });
    }

    /** The blocks of an all-to-all-w: byte segments to send and receive, and the receive regions to finish. */
    private record WBlocks(MemorySegment[] send, MemorySegment[] recv, Buffers.Region[] recvRegions, Buf[] recvBufs) {}

    private WBlocks wBlocks(String op, Buffer sendBuf, int[] sendCount, int[] sDispls, Datatype[] sendTypes,
                            Buffer recvBuf, int[] recvCount, int[] rDispls, Datatype[] recvTypes) throws MPIException {
        Buffers.Region[] s = wRegions(op, sendBuf, sendCount, sDispls, sendTypes, "send", Buffers.SEND);
        Buffers.Region[] r = wRegions(op, recvBuf, recvCount, rDispls, recvTypes, "recv", Buffers.RECV);
        Buf[] rb = new Buf[r.length];
        for (int i = 0; i < r.length; i++) rb[i] = new Buf(r[i], atomic);
        MemorySegment[] recv = new MemorySegment[r.length];
        for (int i = 0; i < r.length; i++) recv[i] = rb[i].seg;
        return new WBlocks(wSegments(s), recv, r, rb);
    }

    /** One region per rank of the group blocks go to: {@code counts[i]} x {@code types[i]} at byte {@code displs[i]}. */
    private Buffers.Region[] wRegions(String op, Buffer buf, int[] counts, int[] displs, Datatype[] types, String side,
                                      int mode) throws MPIException {
        int n = peers.length;
        checkVector(op, side + "Count", counts, n);
        checkVector(op, (side.equals("send") ? "s" : "r") + "Displs", displs, n);
        if (types == null || types.length < n) {
            throw raise(MPI.ERR_ARG, op + ": " + side + "Types " + (types == null ? "is null" : "has " + types.length
                    + " entries; " + n + " are needed"));
        }
        if (buf != null && !buf.isDirect()) {
            throw raise(MPI.ERR_BUFFER, op + ": " + side + "Buf must be a direct buffer (see MPI.newByteBuffer)");
        }
        MemorySegment whole = buf == null ? MemorySegment.NULL : MemorySegment.ofBuffer(buf.duplicate().clear());
        Buffers.Region[] out = new Buffers.Region[n];
        for (int i = 0; i < n; i++) {
            if (types[i] == null || types[i].isNull()) {
                throw raise(MPI.ERR_TYPE, op + ": " + side + "Types[" + i + "] is null or freed");
            }
            if (counts[i] == 0) {
                out[i] = Buffers.EMPTY;
                continue;
            }
            if (buf == null) throw raise(MPI.ERR_BUFFER, op + ": " + side + "Buf is null but " + side + "Count[" + i + "] is " + counts[i]);
            if (displs[i] > whole.byteSize()) {
                throw raise(MPI.ERR_ARG, op + ": " + (side.equals("send") ? "s" : "r") + "Displs[" + i + "] = " + displs[i]
                        + " is past the end of " + side + "Buf (" + whole.byteSize() + " bytes)");
            }
            java.nio.ByteBuffer at = whole.asSlice(displs[i]).asByteBuffer().order(java.nio.ByteOrder.nativeOrder());
            out[i] = direct(at, counts[i], types[i], op, mode);
        }
        return out;
    }

    private static MemorySegment[] wSegments(Buffers.Region[] rs) {
        MemorySegment[] out = new MemorySegment[rs.length];
        for (int i = 0; i < rs.length; i++) out[i] = new Buf(rs[i]).seg;
        return out;
    }

    /** MPI_REDUCE_SCATTER: reduces {@code sum(recvcounts)} elements; block {@code rank} lands in {@code recvbuf}. */
    public final void reduceScatter(Object sendbuf, Object recvbuf, int[] recvcounts, Datatype type, Op op)
            throws MPIException {
        check("reduceScatter");
        if (this instanceof Intercomm ic) { ic.interReduceScatter(sendbuf, recvbuf, recvcounts, type, op); return; }
        Reducer red = reducerFor(op, type, "reduceScatter");
        int total = total("reduceScatter", recvcounts);
        Buf s = buf(sendbuf, total, type, "reduceScatter", "recvcounts");
        Buf r = buf(recvbuf, recvcounts[rank], type, "reduceScatter", "recvcounts[" + rank + "]");
        runColl("reduceScatter", () -> collectives().reduceScatter(cc(), sel(s.seg, recvcounts, type), r.seg, sel(recvcounts), red));
        r.done();
    }

    /** MPI_REDUCE_SCATTER with MPI_IN_PLACE: {@code buf} holds the input; the result is at its start. */
    public final void reduceScatter(Object buf, int[] counts, Datatype type, Op op) throws MPIException {
        check("reduceScatter");
        intraOnly("reduceScatter");
        Reducer red = reducerFor(op, type, "reduceScatter");
        int total = total("reduceScatter", counts);
        Buf b = buf(buf, total, type, "reduceScatter", "counts");
        MemorySegment send = b.copy();
        MemorySegment out = b.seg.asSlice(0, (long) counts[rank] * type.sizeBytes);
        runColl("reduceScatter", () -> collectives().reduceScatter(cc(), sel(send, counts, type), out, sel(counts), red));
        b.done();
    }

    /** MPI_REDUCE_SCATTER_BLOCK: {@code recvcount} elements per rank. */
    public final void reduceScatterBlock(Object sendbuf, Object recvbuf, int recvcount, Datatype type, Op op)
            throws MPIException {
        check("reduceScatterBlock");
        checkCount("reduceScatterBlock", "recvcount", recvcount);
        int[] counts = new int[size];
        java.util.Arrays.fill(counts, recvcount);
        reduceScatter(sendbuf, recvbuf, counts, type, op);
    }

    /** MPI_REDUCE_SCATTER_BLOCK with MPI_IN_PLACE. */
    public final void reduceScatterBlock(Object buf, int count, Datatype type, Op op) throws MPIException {
        check("reduceScatterBlock");
        intraOnly("reduceScatterBlock");
        checkCount("reduceScatterBlock", "count", count);
        int[] counts = new int[size];
        java.util.Arrays.fill(counts, count);
        reduceScatter(buf, counts, type, op);
    }

    final int total(String op, int[] counts) throws MPIException {
        checkVector(op, "recvcounts", counts);
        long t = 0;
        for (int i = 0; i < size; i++) t += counts[i];
        if (t > Integer.MAX_VALUE) throw raise(MPI.ERR_COUNT, op + ": the counts add up to more than 2^31-1");
        return (int) t;
    }

    // ------------------------------------------------------------------ pack

    /** MPI_PACK: packs {@code incount} elements into {@code outbuf} at {@code position}; returns the new position. */
    public final int pack(Object inbuf, int incount, Datatype type, byte[] outbuf, int position) throws MPIException {
        check("pack");
        try {
            return Packing.pack(inbuf, incount, type, org.ftmpi.ddt.PackOptions.NATIVE, outbuf, position, "pack");
        } catch (MPIException e) {
            throw handle(e);
        }
    }

    /** MPI_UNPACK: unpacks {@code outcount} elements from {@code inbuf} at {@code position}; returns the new position. */
    public final int unpack(byte[] inbuf, int position, Object outbuf, int outcount, Datatype type)
            throws MPIException {
        check("unpack");
        try {
            return Packing.unpack(inbuf, position, outbuf, outcount, type, org.ftmpi.ddt.PackOptions.NATIVE, "unpack");
        } catch (MPIException e) {
            throw handle(e);
        }
    }

    /** MPI_PACK_SIZE: bytes needed to pack {@code incount} elements of {@code type}. */
    public final int packSize(int incount, Datatype type) throws MPIException {
        check("packSize");
        try {
            return Packing.size(incount, type, "packSize");
        } catch (MPIException e) {
            throw handle(e);
        }
    }

    // ------------------------------------------------------------------ non-blocking collectives
    // Bodies in NbColls; algorithms run on this communicator's Schedule. Direct buffers only.

    /** Set on a communicator made by {@link #iDup}: completes when it is usable. */
    Request request;

    /** The request of a communicator made by {@link #iDup}, or {@code null}. */
    public final Request getRequest() {
        return request;
    }

    /** MPI_COMM_IDUP: returns at once; use the new communicator after {@link #getRequest()} completes. */
    public Comm iDup() throws MPIException {
        return NbColls.iDup(this);
    }

    /** MPI_IBARRIER. */
    public final Request iBarrier() throws MPIException {
        if (this instanceof Intercomm ic) return ic.iInterBarrier();
        return NbColls.iBarrier(this);
    }

    /** MPI_IBCAST. */
    public final Request iBcast(Buffer buf, int count, Datatype type, int root) throws MPIException {
        if (this instanceof Intercomm ic) return ic.iInterBcast(buf, count, type, root);
        return NbColls.iBcast(this, buf, count, type, root);
    }

    /** MPI_IGATHER. */
    public final Request iGather(Buffer sendbuf, int sendcount, Datatype sendtype,
                                 Buffer recvbuf, int recvcount, Datatype recvtype, int root) throws MPIException {
        if (this instanceof Intercomm ic) return ic.iInterGather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
        return NbColls.iGather(this, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
    }

    /** MPI_IGATHER with MPI_IN_PLACE at the root (elsewhere {@code buf} is the send buffer). */
    public final Request iGather(Buffer buf, int count, Datatype type, int root) throws MPIException {
        return NbColls.iGather(this, buf, count, type, root);
    }

    /** MPI_IGATHERV. */
    public final Request iGatherv(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf,
                                  int[] recvcount, int[] displs, Datatype recvtype, int root) throws MPIException {
        if (this instanceof Intercomm ic) return ic.iInterGatherv(sendbuf, sendcount, sendtype, recvbuf, recvcount, displs, recvtype, root);
        return NbColls.iGatherv(this, sendbuf, sendcount, sendtype, recvbuf, recvcount, displs, recvtype, root);
    }

    /** MPI_IGATHERV with MPI_IN_PLACE, at the root. */
    public final Request iGatherv(Buffer recvbuf, int[] recvcount, int[] displs, Datatype recvtype, int root)
            throws MPIException {
        return NbColls.iGathervHalf(this, null, 0, null, recvbuf, recvcount, displs, recvtype, root, true);
    }

    /** MPI_IGATHERV at a non-root rank, when the root gathers in place. */
    public final Request iGatherv(Buffer sendbuf, int sendcount, Datatype sendtype, int root) throws MPIException {
        if (this instanceof Intercomm ic) return ic.iInterGatherv(sendbuf, sendcount, sendtype, null, null, null, null, root);
        return NbColls.iGathervHalf(this, sendbuf, sendcount, sendtype, null, null, null, null, root, false);
    }

    /** MPI_ISCATTER. */
    public final Request iScatter(Buffer sendbuf, int sendcount, Datatype sendtype,
                                  Buffer recvbuf, int recvcount, Datatype recvtype, int root) throws MPIException {
        if (this instanceof Intercomm ic) return ic.iInterScatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
        return NbColls.iScatter(this, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
    }

    /** MPI_ISCATTER with MPI_IN_PLACE at the root (elsewhere {@code buf} is the receive buffer). */
    public final Request iScatter(Buffer buf, int count, Datatype type, int root) throws MPIException {
        return NbColls.iScatter(this, buf, count, type, root);
    }

    /** MPI_ISCATTERV. */
    public final Request iScatterv(Buffer sendbuf, int[] sendcount, int[] displs, Datatype sendtype,
                                   Buffer recvbuf, int recvcount, Datatype recvtype, int root) throws MPIException {
        if (this instanceof Intercomm ic) return ic.iInterScatterv(sendbuf, sendcount, displs, sendtype, recvbuf, recvcount, recvtype, root);
        return NbColls.iScatterv(this, sendbuf, sendcount, displs, sendtype, recvbuf, recvcount, recvtype, root);
    }

    /** MPI_ISCATTERV with MPI_IN_PLACE, at the root. */
    public final Request iScatterv(Buffer sendbuf, int[] sendcount, int[] displs, Datatype sendtype, int root)
            throws MPIException {
        return NbColls.iScattervHalf(this, sendbuf, sendcount, displs, sendtype, null, 0, null, root, true);
    }

    /** MPI_ISCATTERV at a non-root rank, when the root scatters in place. */
    public final Request iScatterv(Buffer recvbuf, int recvcount, Datatype recvtype, int root) throws MPIException {
        if (this instanceof Intercomm ic) return ic.iInterScatterv(null, null, null, null, recvbuf, recvcount, recvtype, root);
        return NbColls.iScattervHalf(this, null, null, null, null, recvbuf, recvcount, recvtype, root, false);
    }

    /** MPI_IALLGATHER. */
    public final Request iAllGather(Buffer sendbuf, int sendcount, Datatype sendtype,
                                    Buffer recvbuf, int recvcount, Datatype recvtype) throws MPIException {
        if (sendtype == null) throw raise(MPI.ERR_TYPE, "iAllGather: sendtype is null");
        if (this instanceof Intercomm ic) return ic.iInterAllGatherv(sendbuf, sendcount, sendtype, recvbuf, null, null, recvcount, recvtype);
        return NbColls.iAllGather(this, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    }

    /** MPI_IALLGATHER with MPI_IN_PLACE. */
    public final Request iAllGather(Buffer buf, int count, Datatype type) throws MPIException {
        return NbColls.iAllGather(this, null, 0, null, buf, count, type);
    }

    /** MPI_IALLGATHERV. */
    public final Request iAllGatherv(Buffer sendbuf, int sendcount, Datatype sendtype,
                                     Buffer recvbuf, int[] recvcount, int[] displs, Datatype recvtype)
            throws MPIException {
        if (sendtype == null) throw raise(MPI.ERR_TYPE, "iAllGatherv: sendtype is null");
        if (this instanceof Intercomm ic) return ic.iInterAllGatherv(sendbuf, sendcount, sendtype, recvbuf, recvcount, displs, 0, recvtype);
        return NbColls.iAllGatherv(this, sendbuf, sendcount, sendtype, recvbuf, recvcount, displs, recvtype);
    }

    /** MPI_IALLGATHERV with MPI_IN_PLACE. */
    public final Request iAllGatherv(Buffer buf, int[] count, int[] displs, Datatype type) throws MPIException {
        return NbColls.iAllGatherv(this, null, 0, null, buf, count, displs, type);
    }

    /** MPI_IALLTOALL. */
    public final Request iAllToAll(Buffer sendbuf, int sendcount, Datatype sendtype,
                                   Buffer recvbuf, int recvcount, Datatype recvtype) throws MPIException {
        if (this instanceof Intercomm ic) return ic.iInterAllToAllv(sendbuf, null, null, sendcount, sendtype, recvbuf, null, null, recvcount, recvtype);
        return NbColls.iAllToAll(this, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    }

    /** MPI_IALLTOALLV. */
    public final Request iAllToAllv(Buffer sendbuf, int[] sendcount, int[] sdispls, Datatype sendtype,
                                    Buffer recvbuf, int[] recvcount, int[] rdispls, Datatype recvtype)
            throws MPIException {
        if (this instanceof Intercomm ic) return ic.iInterAllToAllv(sendbuf, sendcount, sdispls, 0, sendtype, recvbuf, recvcount, rdispls, 0, recvtype);
        return NbColls.iAllToAllv(this, sendbuf, sendcount, sdispls, sendtype, recvbuf, recvcount, rdispls, recvtype);
    }

    /** MPI_IREDUCE. */
    public final Request iReduce(Buffer sendbuf, Buffer recvbuf, int count, Datatype type, Op op, int root)
            throws MPIException {
        if (this instanceof Intercomm ic) return ic.iInterReduce(sendbuf, recvbuf, count, type, op, root);
        return NbColls.iReduce(this, sendbuf, recvbuf, count, type, op, root);
    }

    /** MPI_IREDUCE with MPI_IN_PLACE at the root. */
    public final Request iReduce(Buffer buf, int count, Datatype type, Op op, int root) throws MPIException {
        return NbColls.iReduce(this, buf, count, type, op, root);
    }

    /** MPI_IALLREDUCE. */
    public final Request iAllReduce(Buffer sendbuf, Buffer recvbuf, int count, Datatype type, Op op)
            throws MPIException {
        if (this instanceof Intercomm ic) return ic.iInterAllReduce(sendbuf, recvbuf, count, type, op);
        return NbColls.iAllReduce(this, sendbuf, recvbuf, count, type, op);
    }

    /** MPI_IALLREDUCE with MPI_IN_PLACE. */
    public final Request iAllReduce(Buffer buf, int count, Datatype type, Op op) throws MPIException {
        return NbColls.iAllReduce(this, buf, count, type, op);
    }

    /** MPI_IREDUCE_SCATTER. */
    public final Request iReduceScatter(Buffer sendbuf, Buffer recvbuf, int[] recvcounts, Datatype type, Op op)
            throws MPIException {
        if (sendbuf == null) throw raise(MPI.ERR_BUFFER, "iReduceScatter: sendbuf is null");
        if (this instanceof Intercomm ic) return ic.iInterReduceScatter(sendbuf, recvbuf, recvcounts, type, op);
        return NbColls.iReduceScatter(this, sendbuf, recvbuf, recvcounts, type, op);
    }

    /** MPI_IREDUCE_SCATTER with MPI_IN_PLACE. */
    public final Request iReduceScatter(Buffer buf, int[] counts, Datatype type, Op op) throws MPIException {
        return NbColls.iReduceScatter(this, null, buf, counts, type, op);
    }

    /** MPI_IREDUCE_SCATTER_BLOCK. */
    public final Request iReduceScatterBlock(Buffer sendbuf, Buffer recvbuf, int recvcount, Datatype type, Op op)
            throws MPIException {
        if (sendbuf == null) throw raise(MPI.ERR_BUFFER, "iReduceScatterBlock: sendbuf is null");
        if (this instanceof Intercomm ic) {
            checkCount("iReduceScatterBlock", "recvcount", recvcount);
            int[] counts = new int[size];
            java.util.Arrays.fill(counts, recvcount);
            return ic.iInterReduceScatter(sendbuf, recvbuf, counts, type, op);
        }
        return NbColls.iReduceScatterBlock(this, sendbuf, recvbuf, recvcount, type, op);
    }

    /** MPI_IREDUCE_SCATTER_BLOCK with MPI_IN_PLACE. */
    public final Request iReduceScatterBlock(Buffer buf, int count, Datatype type, Op op) throws MPIException {
        return NbColls.iReduceScatterBlock(this, null, buf, count, type, op);
    }

    // ------------------------------------------------------------------ topologies, neighbour collectives

    /** MPI_TOPO_TEST: {@link MPI#CART}, {@link MPI#GRAPH}, {@link MPI#DIST_GRAPH} or {@link MPI#UNDEFINED}. */
    public final int getTopology() throws MPIException {
        check("getTopology");
        return topologyKind();
    }

    int topologyKind() {
        return MPI.UNDEFINED;
    }

    /** The neighbourhood of this process; ERR_TOPOLOGY without a topology (CartComm, GraphComm override). */
    Topologies.Neighborhood neighborhood(String op) throws MPIException {
        throw raise(MPI.ERR_TOPOLOGY, op + ": " + name + " has no topology (make one with createCart, createGraph,"
                + " createDistGraph or createDistGraphAdjacent)");
    }

    /** MPI_NEIGHBOR_ALLGATHER. */
    public final void neighborAllGather(Object sendbuf, int sendcount, Datatype sendtype,
                                        Object recvbuf, int recvcount, Datatype recvtype) throws MPIException {
        NeighborColls.allGather(this, false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    }

    /** MPI_INEIGHBOR_ALLGATHER. */
    public final Request iNeighborAllGather(Buffer sendbuf, int sendcount, Datatype sendtype,
                                            Buffer recvbuf, int recvcount, Datatype recvtype) throws MPIException {
        return NeighborColls.allGather(this, true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    }

    /** MPI_NEIGHBOR_ALLGATHERV. */
    public final void neighborAllGatherv(Object sendbuf, int sendcount, Datatype sendtype,
                                         Object recvbuf, int[] recvcount, int[] displs, Datatype recvtype)
            throws MPIException {
        NeighborColls.allGatherv(this, false, sendbuf, sendcount, sendtype, recvbuf, recvcount, displs, recvtype);
    }

    /** MPI_INEIGHBOR_ALLGATHERV. */
    public final Request iNeighborAllGatherv(Buffer sendbuf, int sendcount, Datatype sendtype,
                                             Buffer recvbuf, int[] recvcount, int[] displs, Datatype recvtype)
            throws MPIException {
        return NeighborColls.allGatherv(this, true, sendbuf, sendcount, sendtype, recvbuf, recvcount, displs, recvtype);
    }

    /** MPI_NEIGHBOR_ALLTOALL. */
    public final void neighborAllToAll(Object sendbuf, int sendcount, Datatype sendtype,
                                       Object recvbuf, int recvcount, Datatype recvtype) throws MPIException {
        NeighborColls.allToAll(this, false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    }

    /** MPI_INEIGHBOR_ALLTOALL. */
    public final Request iNeighborAllToAll(Buffer sendbuf, int sendcount, Datatype sendtype,
                                           Buffer recvbuf, int recvcount, Datatype recvtype) throws MPIException {
        return NeighborColls.allToAll(this, true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    }

    /** MPI_NEIGHBOR_ALLTOALLV. */
    public final void neighborAllToAllv(Object sendbuf, int[] sendcount, int[] sdispls, Datatype sendtype,
                                        Object recvbuf, int[] recvcount, int[] rdispls, Datatype recvtype)
            throws MPIException {
        NeighborColls.allToAllv(this, false, sendbuf, sendcount, sdispls, sendtype, recvbuf, recvcount, rdispls, recvtype);
    }

    /** MPI_INEIGHBOR_ALLTOALLV. */
    public final Request iNeighborAllToAllv(Buffer sendbuf, int[] sendcount, int[] sdispls, Datatype sendtype,
                                            Buffer recvbuf, int[] recvcount, int[] rdispls, Datatype recvtype)
            throws MPIException {
        return NeighborColls.allToAllv(this, true, sendbuf, sendcount, sdispls, sendtype, recvbuf, recvcount, rdispls,
                recvtype);
    }

    // ------------------------------------------------------------------ info hints

    /** Hints set with {@link #setInfo} or {@link #dupWithInfo} (copied by dup); null: none. */
    volatile java.util.Map<String, String> hints;

    /** MPI_COMM_SET_INFO: replaces this communicator's hints (none is interpreted yet). */
    public final void setInfo(Info info) throws MPIException {
        check("setInfo");
        if (info == null) throw raise(MPI.ERR_INFO, "setInfo: info is null (use MPI.INFO_NULL)");
        hints = info.entries();
    }

    /** MPI_COMM_GET_INFO: a new info object with this communicator's hints. */
    public final Info getInfo() throws MPIException {
        check("getInfo");
        java.util.Map<String, String> h = hints;
        return Info.of(h == null ? java.util.Map.of() : h);
    }

    /** MPI_COMM_DUP_WITH_INFO: a duplicate whose hints are those of {@code info}. */
    public Comm dupWithInfo(Info info) throws MPIException {
        check("dupWithInfo");
        if (info == null) throw raise(MPI.ERR_INFO, "dupWithInfo: info is null (use MPI.INFO_NULL)");
        Intracomm c = dupIntra("dupWithInfo");
        c.hints = info.entries();
        return c;
    }

    // ------------------------------------------------------------------ attribute caching

    /**
     * MPI_COMM_CREATE_KEYVAL: a new attribute key for communicators. Attributes are copied to
     * duplicates ({@code dup}, {@code iDup}, {@code dupWithInfo}, {@code clone}) and dropped by
     * {@code free}; values are kept by reference (Open MPI serializes them; see docs/api-coverage.md).
     */
    public static int createKeyval() throws MPIException {
        return Attributes.createKeyval(Attributes.Kind.COMM);
    }

    /** MPI_COMM_FREE_KEYVAL: {@code keyval} becomes invalid ({@code ERR_KEYVAL} if it is not a live communicator keyval). */
    public static void freeKeyval(int keyval) throws MPIException {
        Attributes.freeKeyval(Attributes.Kind.COMM, keyval, "freeKeyval");
    }

    /** MPI_COMM_SET_ATTR: caches {@code value} on this communicator under {@code keyval}. */
    public final void setAttr(int keyval, Object value) throws MPIException {
        check("setAttr");
        try {
            attrs.set(keyval, value, "setAttr");
        } catch (MPIException e) {
            throw handle(e);
        }
    }

    /**
     * MPI_COMM_GET_ATTR: the value cached under {@code keyval}, or {@code null} if none. The
     * predefined keys ({@link MPI#TAG_UB} ... {@link MPI#UNIVERSE_SIZE}) give their values on
     * {@code MPI.COMM_WORLD} and its duplicates.
     */
    public final Object getAttr(int keyval) throws MPIException {
        check("getAttr");
        try {
            return attrs.get(keyval, this, "getAttr");
        } catch (MPIException e) {
            throw handle(e);
        }
    }

    /** MPI_COMM_DELETE_ATTR: removes the value cached under {@code keyval} (if any). */
    public final void deleteAttr(int keyval) throws MPIException {
        check("deleteAttr");
        try {
            attrs.delete(keyval, "deleteAttr");
        } catch (MPIException e) {
            throw handle(e);
        }
    }

    // ------------------------------------------------------------------ fault tolerance (ULFM)
    // Semantics of Open MPI's MPIX_Comm_* (User-Level Failure Mitigation); see docs/fault-tolerance.md.

    /**
     * MPIX_COMM_REVOKE: revokes this communicator at every member. Pending operations on it
     * complete with {@link RevokedException}, and so does every later operation on it except
     * {@link #agree}, {@link #iAgree}, {@link #shrink}, {@link #iShrink}, {@link #ackFailed},
     * {@link #getFailed} and {@link #getAcked}. Local: returns at once; the notice is flooded
     * to the members over the fault-tolerance control channel.
     */
    public final void revoke() throws MPIException {
        check("revoke");
        engine.revoke(ft);
    }

    /** MPIX_COMM_IS_REVOKED: whether this communicator has been revoked (here or by a member). */
    public final boolean isRevoked() throws MPIException {
        check("isRevoked");
        if (!ft.isRevoked()) engine.progress(); // a REVOKE notice may be waiting in a transport
        return ft.isRevoked();
    }

    /**
     * MPIX_COMM_GET_FAILED: the members of this communicator known here to have failed, in the
     * order the failures became known (a local operation; other members may know more or fewer).
     */
    public final Group getFailed() throws MPIException {
        check("getFailed");
        engine.progress(); // a lost connection may be waiting to be noticed
        return new Group(engine.failedMembers(ft), world[rank]);
    }

    /**
     * MPIX_COMM_ACK_FAILED: acknowledges the first {@code numToAck} failures of {@link
     * #getFailed} (all known ones if there are fewer), so that receives and probes from {@code
     * MPI.ANY_SOURCE} no longer raise for them. Returns the number of acknowledged failures.
     */
    public final int ackFailed(int numToAck) throws MPIException {
        check("ackFailed");
        if (numToAck < 0) throw raise(MPI.ERR_ARG, "ackFailed: numToAck is negative (" + numToAck + ")");
        int known = engine.failedMembers(ft).length; // under the engine's lock: complete bookkeeping
        synchronized (this) {
            int n = Math.min(numToAck, known);
            if (n > acked) acked = n;
            return acked;
        }
    }

    /** MPIX_COMM_FAILURE_ACK: acknowledges every failure known now; returns how many are acknowledged. */
    public final int ackFailed() throws MPIException {
        return ackFailed(Integer.MAX_VALUE);
    }

    /** MPIX_COMM_FAILURE_GET_ACKED: the failed members acknowledged with {@link #ackFailed}. */
    public final Group getAcked() throws MPIException {
        check("getAcked");
        int[] failed = engine.failedMembers(ft);
        return new Group(java.util.Arrays.copyOf(failed, Math.min(acked, failed.length)), world[rank]);
    }

    /** Agreement instances started on this communicator (agree, iAgree, shrink, iShrink). */
    private int agreements;

    private synchronized int nextAgreement() {
        return ++agreements;
    }

    /** ATOMIC {@code createGroup}: agreement instances taken so far, by the FT id of a group's agreements. */
    private java.util.HashMap<Integer, Integer> groupAgreements;

    /** The next agreement instance over the group whose agreements have FT id {@code ftId}, in call order. */
    final synchronized int nextGroupAgreement(int ftId) {
        if (groupAgreements == null) groupAgreements = new java.util.HashMap<>();
        return groupAgreements.merge(ftId, 1, Integer::sum);
    }

    /**
     * MPIX_COMM_AGREE: a fault-tolerant agreement among the surviving members; returns the
     * bitwise AND of {@code flag} over the members that contributed (every live member, and
     * members that failed after contributing). Works on a revoked communicator and with failed
     * members; tolerates failures during the call (the algorithm is in docs/fault-tolerance.md).
     * Collective over the live members.
     *
     * <p>Raises {@link ProcFailedException} ({@code ERR_PROC_FAILED} under ULFM error classes)
     * when the agreed failed set holds a process whose failure some live member had not
     * acknowledged ({@link #ackFailed}) before the call; uniformly: either every surviving member
     * raises or none does. The agreed value is then {@link ProcFailedException#getAgreedFlag()}.
     */
    public final int agree(int flag) throws MPIException {
        check("agree");
        intraOnly("agree");
        int[] ackedBefore = ackedWorld();
        int k = nextAgreement() << 6;
        Engine.Decision d = agreeOn("agree", k, flag);
        return agreed("agree", k, d, ackedBefore);
    }

    /**
     * Waits until every process of {@code worlds} (an agreed failed set) is known failed here,
     * so that {@link #getFailed} after a raising agree holds every non-contributor (ULFM). Every
     * failure notice reaches every live process, so this ends.
     */
    private void awaitKnown(int[] worlds) {
        // Read under the engine's lock (failedMembers), not engine.isFailed: the engine marks a
        // process failed before it records the failure in each communicator, and an ackFailed()
        // between the two would acknowledge nothing. A loop, not a stream with a lambda: this runs
        // on the first failure's path, where a stream loaded classes and spun a hidden class,
        // and queued JIT compilations of the class-file API that competed with the survivors'
        // next operations (docs/benchmarks.md, "Issue 7, session 11").
        int idle = 0;
        for (int w : worlds) {
            while (BlankColls.indexOf(engine.failedMembers(ft), w) < 0) idle = engine.progressOrPause(idle);
        }
    }

    private static final int[] NONE = {};

    /**
     * World ranks of the failures acknowledged here so far; none before the first
     * {@link #ackFailed} (no trip through the engine's lock on a failure-free agree).
     */
    private int[] ackedWorld() {
        if (acked == 0) return NONE;
        int[] failed = engine.failedMembers(ft);
        return java.util.Arrays.copyOf(failed, Math.min(acked, failed.length));
    }

    /**
     * ULFM's acknowledgement rule after agreement instance {@code k} decided {@code d}: if its
     * failed set is not empty, a second instance ({@code k + 1}) agrees on whether every member
     * had acknowledged all of it (every member runs it, since the failed set is agreed), and the
     * call raises at every member when one had not.
     */
    private int agreed(String op, int k, Engine.Decision d, int[] ackedBefore) throws MPIException {
        try {
            return agreedOrThrow(op, k, d, ackedBefore);
        } catch (P2pException e) {
            throw raise(e, op);
        } catch (ProcFailedException e) {
            throw handle(e);
        }
    }

    /**
     * An agreed failed set without the blanks: under comm-mode BLANK a failure an FT-MPI recovery
     * covered is no failure of this communicator (not in getFailed, nothing to acknowledge),
     * although it did not contribute. A loop, not a stream: this runs after every agreement, and
     * a stream pipeline cost 35-57 us per call there (docs/benchmarks.md, "Issue 7, session 10").
     */
    private int[] withoutBlanks(int[] failedWorld) {
        int n = 0;
        for (int w : failedWorld) if (!engine.isRecovered(w)) n++;
        if (n == failedWorld.length) return failedWorld;
        int[] out = new int[n];
        n = 0;
        for (int w : failedWorld) if (!engine.isRecovered(w)) out[n++] = w;
        return out;
    }

    /** {@link #agreed} without the error handler (for iAgree's thread). */
    private int agreedOrThrow(String op, int k, Engine.Decision d, int[] ackedBefore)
            throws P2pException, ProcFailedException {
        int[] failedWorld = withoutBlanks(d.failedWorld());
        if (failedWorld.length == 0) return d.value();
        int unacked = -1;
        for (int w : failedWorld) {
            boolean ok = false;
            for (int a : ackedBefore) ok |= a == w;
            if (!ok && unacked < 0) unacked = w;
        }
        Engine.Decision all = engine.agree(ft, k + 1, unacked < 0 ? 1 : 0);
        if (all.value() != 0) return d.value();
        awaitKnown(failedWorld);
        String msg = op + ": the agreed failed set of " + name + " (world ranks "
                + java.util.Arrays.toString(failedWorld) + ") holds a failure not acknowledged by every member"
                + (unacked >= 0 ? " (here: world rank " + unacked + ")" : "")
                + "; the agreed flag is " + d.value() + " (getAgreedFlag())";
        throw new ProcFailedException(engine.procFailedClass(), msg, unacked >= 0 ? unacked : failedWorld[0],
                false, d.value());
    }

    /**
     * MPIX_COMM_IAGREE: non-blocking {@link #agree}. Reads {@code flag.get(0)} now and stores the
     * agreed value there when the returned request completes.
     */
    public final Request iAgree(IntBuffer flag) throws MPIException {
        check("iAgree");
        intraOnly("iAgree");
        if (flag == null) throw raise(MPI.ERR_BUFFER, "iAgree: flag is null");
        if (flag.capacity() < 1) throw raise(MPI.ERR_BUFFER, "iAgree: flag has no room for one int");
        int value = flag.get(0);
        int[] ackedBefore = ackedWorld();
        int k = nextAgreement() << 6;
        org.ftmpi.p2p.Request req = engine.externalRequest();
        Thread.ofVirtual().name("ftmpi-iagree-" + engine.rank()).start(() -> {
            Engine.Decision d = null;
            try {
                d = engine.agree(ft, k, value);
                flag.put(0, agreedOrThrow("iAgree", k, d, ackedBefore));
                engine.completeExternal(req, ErrorClass.SUCCESS, null, -1);
            } catch (P2pException e) {
                engine.completeExternal(req, e.errorClass(), "iAgree: " + e.getMessage(), -1);
            } catch (ProcFailedException e) {
                flag.put(0, d.value());
                engine.completeExternal(req, e.getErrorClass(), e.getMessage(),
                        e.getFailedRank());
            }
        });
        return new Request(req, this, null);
    }

    private Engine.Decision agreeOn(String op, int k, int flag) throws MPIException {
        try {
            return engine.agree(ft, k, flag);
        } catch (P2pException e) {
            throw raise(e, op);
        }
    }

    /**
     * MPIX_COMM_SHRINK: a new communicator of the members not in the failed set agreed by the
     * survivors, in the order of their ranks here, with a newly agreed context id. Never raises
     * for failed members or a revoked communicator; tolerates failures during the call.
     * Collective over the live members.
     */
    public final Intracomm shrink() throws MPIException {
        check("shrink");
        intraOnly("shrink");
        Intracomm c = new Intracomm();
        shrinkInto(c, nextAgreement(), "shrink");
        return c;
    }

    /**
     * MPIX_COMM_ISHRINK: non-blocking {@link #shrink}. Use the returned communicator once its
     * {@link #getRequest()} has completed.
     */
    public final Intracomm iShrink() throws MPIException {
        check("iShrink");
        intraOnly("iShrink");
        int seq = nextAgreement();
        Intracomm c = new Intracomm();
        org.ftmpi.p2p.Request req = engine.externalRequest();
        c.request = new Request(req, this, null);
        Thread.ofVirtual().name("ftmpi-ishrink-" + engine.rank()).start(() -> {
            try {
                shrinkInto(c, seq, "iShrink");
                engine.completeExternal(req, ErrorClass.SUCCESS, null, -1);
            } catch (MPIException e) {
                engine.completeExternal(req, e.getErrorClass(), e.getMessage(), -1);
            }
        });
        return c;
    }

    /**
     * Shrink: each attempt derives a candidate context id from this communicator's id and the
     * agreement sequence, reserves it if free here, and agrees on (all reserved) AND the failed
     * set; the agreed failed set defines the survivors, so every survivor builds the same group.
     */
    private void shrinkInto(Intracomm c, int seq, String op) throws MPIException {
        for (int attempt = 0; ; attempt++) {
            int candidate = deriveContext(context, 0x400000 + seq, attempt);
            boolean reserved = candidate > 2 && engine.reserveContext(candidate);
            Engine.Decision d;
            try {
                d = agreeOn(op, (seq << 6) + (attempt & 63), reserved ? 1 : 0);
            } catch (MPIException e) {
                if (reserved) engine.releaseContext(candidate);
                throw e;
            }
            if (d.value() != 0) {
                int[] members = survivors(d.failedWorld());
                int newRank = -1;
                for (int i = 0; i < members.length; i++) if (members[i] == world[rank]) newRank = i;
                initDerived(c, candidate, newRank, members, name + ".shrink");
                return;
            }
            if (reserved) engine.releaseContext(candidate);
        }
    }

    /** The members (world ranks, in rank order) outside the agreed failed set {@code failedWorld}. */
    private int[] survivors(int[] failedWorld) {
        if (failedWorld.length == 0) return world.clone();
        int[] out = new int[world.length];
        int n = 0;
        for (int w : world) {
            boolean dead = false;
            for (int f : failedWorld) dead |= f == w;
            if (!dead) out[n++] = w;
        }
        return java.util.Arrays.copyOf(out, n);
    }

    /** Whether a member failed whose failure this communicator has not acknowledged. */
    final boolean unacknowledgedFailure() {
        return anySourceRule && ft.failedCount() > acked;
    }

    /**
     * The error of a receive or probe from ANY_SOURCE interrupted by an unacknowledged failure:
     * for a non-blocking receive ({@code pending}) the request stays active.
     */
    final MPIException anySourceFailure(String op, boolean pending) {
        int[] failed = engine.failedMembers(ft);
        int w = failed.length > acked ? failed[acked] : -1;
        int pf = engine.procFailedClass();
        int clazz = pending ? (pf == MPI.ERR_PROC_FAILED ? MPI.ERR_PROC_FAILED_PENDING : pf) : pf;
        String msg = op + ": receive from MPI.ANY_SOURCE on " + name + " interrupted: world rank " + w
                + " failed and the failure is not acknowledged (" + (pending ? "the request stays pending; " : "")
                + "call ackFailed())";
        return handle(new ProcFailedException(clazz, msg, w, pending));
    }

    /**
     * Waits for a receive from ANY_SOURCE, raising when a member's failure is unacknowledged: a
     * blocking receive is cancelled then (unless it matched meanwhile), a non-blocking one stays
     * pending.
     */
    final void awaitAnySource(org.ftmpi.p2p.Request r, String op, boolean blocking) throws MPIException {
        int idle = 0;
        while (!r.isComplete()) {
            if (unacknowledgedFailure()) {
                if (!blocking) throw anySourceFailure(op, true);
                if (engine.cancel(r)) throw anySourceFailure(op, false);
                engine.await(r);
                return;
            }
            idle = engine.progressOrPause(idle);
        }
    }

    // ------------------------------------------------------------------ internals

    /** {@link Buffers#region}, with argument errors going through the error handler. */
    final Buffers.Region region(Object buf, int count, Datatype type, String op, boolean receive) throws MPIException {
        return region(buf, count, type, op, receive ? Buffers.RECV : Buffers.SEND);
    }

    /** {@link Buffers#region} in a {@link Buffers#SEND}/{@link Buffers#RECV}/{@link Buffers#INOUT} role. */
    final Buffers.Region region(Object buf, int count, Datatype type, String op, int mode) throws MPIException {
        try {
            return Buffers.region(buf, count, type, op, mode);
        } catch (MPIException e) {
            throw handle(e);
        }
    }

    /** {@link Buffers#direct}, with argument errors going through the error handler. */
    final Buffers.Region direct(Buffer buf, int count, Datatype type, String op) throws MPIException {
        return direct(buf, count, type, op, Buffers.SEND);
    }

    final Buffers.Region direct(Buffer buf, int count, Datatype type, String op, int mode) throws MPIException {
        try {
            return Buffers.direct(buf, count, type, op, mode);
        } catch (MPIException e) {
            throw handle(e);
        }
    }

    org.ftmpi.p2p.Request startSend(Buffers.Region g, int dest, int tag, int mode) {
        int w = dest >= 0 ? peers[dest] : -1;
        if (g.streamed) return engine.sendPacked(context, epoch, rank, dest, w, tag, g.payload(false), g.bytes, mode);
        return engine.send(context, epoch, rank, dest, w, tag, g.seg, g.off, g.bytes, mode);
    }

    org.ftmpi.p2p.Request startRecv(Buffers.Region g, int source, int tag) {
        int w = source >= 0 ? peers[source] : -1;
        if (g.streamed) return engine.receivePacked(context, epoch, source, w, tag, g.payload(true), g.bytes);
        return engine.receive(context, epoch, source, w, tag, g.seg, g.off, g.bytes);
    }

    /** Reserves space in the attached buffer, copies the message there, and sends the copy. */
    void bufferedSend(String op, Buffers.Region g, int dest, int tag) throws MPIException {
        long need = g.bytes + MPI.BSEND_OVERHEAD;
        try {
            MPI.reserveBsend(need, op);
        } catch (MPIException e) {
            throw handle(e);
        }
        byte[] copy = new byte[(int) g.bytes];
        if (g.bytes > 0) MemorySegment.copy(g.seg, g.off, MemorySegment.ofArray(copy), 0, g.bytes);
        Buffers.Region c = new Buffers.Region(MemorySegment.ofArray(copy), 0, g.bytes, null, 0);
        org.ftmpi.p2p.Request r = startSend(c, dest, tag, org.ftmpi.p2p.Request.STANDARD);
        r.whenComplete(() -> MPI.releaseBsend(need));
        Request.posted(r); // the caller returns at once: the progress agent completes it
    }

    Status received(org.ftmpi.p2p.Request r, Buffers.Region g, String op) throws MPIException {
        int err = r.errorClass();
        if (err == ErrorClass.SUCCESS) {
            try {
                g.finishReceive(r.byteCount());
            } catch (MPIException e) {
                throw handle(e);
            }
            return new Status(r.source(), r.tag(), MPI.SUCCESS, r.isCancelled(), r.byteCount());
        }
        throw raise(new P2pException(err, r.errorMessage(), r.failedRank()), op);
    }

    void report(org.ftmpi.p2p.Request r, String op) throws MPIException {
        int err = r.errorClass();
        if (err != ErrorClass.SUCCESS) throw raise(new P2pException(err, r.errorMessage(), r.failedRank()), op);
    }

    final void check(String op) throws MPIException {
        if (engine == null) {
            if (MPI.isFinalizedNow()) throw MPIException.of(MPI.ERR_OTHER, op + ": MPI is finalized");
            if (predefined || name == null) {
                throw MPIException.of(MPI.ERR_OTHER, op + ": MPI is not initialized (call MPI.Init first)");
            }
            throw MPIException.of(MPI.ERR_COMM, op + ": the communicator " + name + " has been freed");
        }
        if (invalidated()) {
            throw handle(MPIException.of(MPI.ERR_COMM, op + ": the communicator " + name + " was invalidated by the"
                    + " recovery from a process failure (only MPI.COMM_WORLD and MPI.COMM_SELF survive it)"));
        }
        FaultPoint fp = FaultPoint.active;
        if (fp != null) fp.call(engine, op);
    }

    /** The argument checks of {@code probe} (source and tag), without counting a call. */
    final void checkProbeArgs(String op, int source, int tag) throws MPIException {
        checkSource(op, source);
        checkRecvTag(op, tag);
    }

    private void checkDest(String op, int dest) throws MPIException {
        if (dest != MPI.PROC_NULL && (dest < 0 || dest >= peers.length)) {
            throw raise(MPI.ERR_RANK, op + ": dest " + dest + " is not a rank of " + name + peerGroup());
        }
    }

    private void checkSource(String op, int source) throws MPIException {
        if (source != MPI.PROC_NULL && source != MPI.ANY_SOURCE && (source < 0 || source >= peers.length)) {
            throw raise(MPI.ERR_RANK, op + ": source " + source + " is not a rank of " + name + peerGroup());
        }
    }

    /** " (size n)", naming the remote group on an intercommunicator. */
    private String peerGroup() {
        return peers == world ? " (size " + size + ")" : "'s remote group (size " + peers.length + ")";
    }

    private void checkSendTag(String op, int tag) throws MPIException {
        if (tag < 0 || tag > MPI.TAG_UB_VALUE) {
            throw raise(MPI.ERR_TAG, op + ": tag " + tag + " is outside 0.." + MPI.TAG_UB_VALUE);
        }
    }

    private void checkRecvTag(String op, int tag) throws MPIException {
        if (tag != MPI.ANY_TAG && (tag < 0 || tag > MPI.TAG_UB_VALUE)) {
            throw raise(MPI.ERR_TAG, op + ": tag " + tag + " is outside 0.." + MPI.TAG_UB_VALUE + " and not MPI.ANY_TAG");
        }
    }

    /** Applies the error handler: returns the exception to throw, or aborts the job (ERRORS_ARE_FATAL). */
    MPIException raise(int errorClass, String message) {
        return handle(errorClass == MPI.ERR_REVOKED ? new RevokedException(message) : MPIException.of(errorClass, message));
    }

    MPIException raise(P2pException e, String op) {
        String msg = op + ": " + e.getMessage();
        MPIException ex = e.failedRank() >= 0
                ? new ProcFailedException(e.errorClass(), msg, e.failedRank())
                : e.errorClass() == MPI.ERR_REVOKED ? new RevokedException(msg)
                : MPIException.of(e.errorClass(), msg);
        return deliver(ex);
    }

    /** Hands {@code ex} to the error handler; FT-MPI AUTO recovers first, then COMM_WORLD's handler runs. */
    final MPIException deliver(MPIException ex) {
        Recovery rc = recovery;
        if (rc != null && rc.auto && engine != null && engine.needsRecovery()) return rc.autoRecover(ex);
        return handle(ex);
    }

    final MPIException handle(MPIException ex) {
        Errhandler h = errhandler;
        if (h != null && h.isFatal() && engine != null) {
            String msg = "MPI error on " + name + ": " + ErrorClass.name(ex.getErrorClass()) + ": " + ex.getMessage()
                    + " (the error handler is MPI.ERRORS_ARE_FATAL; set MPI.ERRORS_RETURN to handle errors)";
            abortJob(ex.getErrorClass() == 0 ? 1 : ex.getErrorClass(), msg);
        }
        return ex;
    }

    /** Aborts the whole job; in a rank process this does not return. */
    void abortJob(int code, String reason) {
        RankRuntime rt = engine.runtime();
        System.err.println("ftmpi: rank " + engine.rank() + ": " + reason);
        System.err.flush();
        rt.abort(code, reason);
        if (rt.ownsProcess()) {
            try {
                Thread.sleep(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Runtime.getRuntime().halt(code == 0 ? 1 : code);
        }
    }
}
