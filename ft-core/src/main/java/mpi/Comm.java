package mpi;

import java.lang.foreign.MemorySegment;
import java.nio.Buffer;
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
    volatile Errhandler errhandler;
    String name;
    boolean predefined;

    Comm() {}

    /** Binds this communicator to an engine. */
    void bind(Engine engine, int context, int rank, int[] world, String name, boolean predefined) {
        this.engine = engine;
        this.context = context;
        this.rank = rank;
        this.size = world.length;
        this.world = world;
        this.name = name;
        this.predefined = predefined;
        this.errhandler = MPI.ERRORS_ARE_FATAL;
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

    /** MPI_ABORT: ends every process of the job with {@code errorcode}. */
    public final void abort(int errorcode) throws MPIException {
        check("abort");
        abortJob(errorcode, "MPI_Abort was called on " + name + " with errorcode " + errorcode);
    }

    /** Predefined communicators cannot be freed. */
    @Override
    public void free() throws MPIException {
        check("free");
        if (predefined) throw raise(MPI.ERR_COMM, "free: cannot free the predefined communicator " + name);
        engine = null;
    }

    @Override
    public Comm clone() {
        try {
            return (Comm) super.clone();
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
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
        bufferedSend("bSend", Buffers.region(buf, count, type, "bSend", false), dest, tag);
    }

    private void blockingSend(String op, Object buf, int count, Datatype type, int dest, int tag, int mode)
            throws MPIException {
        check(op);
        checkDest(op, dest);
        checkSendTag(op, tag);
        Buffers.Region g = Buffers.region(buf, count, type, op, false);
        org.ftmpi.p2p.Request r = startSend(g, dest, tag, mode);
        engine.await(r);
        report(r, op);
    }

    /** Blocking receive (MPI_RECV). */
    public final Status recv(Object buf, int count, Datatype type, int source, int tag) throws MPIException {
        check("recv");
        checkSource("recv", source);
        checkRecvTag("recv", tag);
        Buffers.Region g = Buffers.region(buf, count, type, "recv", true);
        org.ftmpi.p2p.Request r = startRecv(g, source, tag);
        engine.await(r);
        return received(r, g, "recv");
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
        Buffers.Region s = Buffers.region(sendbuf, sendcount, sendtype, "sendRecv", false);
        Buffers.Region g = Buffers.region(recvbuf, recvcount, recvtype, "sendRecv", true);
        org.ftmpi.p2p.Request rr = startRecv(g, source, recvtag);
        org.ftmpi.p2p.Request sr = startSend(s, dest, sendtag, org.ftmpi.p2p.Request.STANDARD);
        engine.await(sr);
        engine.await(rr);
        report(sr, "sendRecv");
        return received(rr, g, "sendRecv");
    }

    /** MPI_SENDRECV_REPLACE. */
    public final Status sendRecvReplace(Object buf, int count, Datatype type, int dest, int sendtag,
                                        int source, int recvtag) throws MPIException {
        check("sendRecvReplace");
        checkDest("sendRecvReplace", dest);
        checkSendTag("sendRecvReplace", sendtag);
        checkSource("sendRecvReplace", source);
        checkRecvTag("sendRecvReplace", recvtag);
        Buffers.Region g = Buffers.region(buf, count, type, "sendRecvReplace", true);
        byte[] copy = new byte[(int) g.bytes];
        if (g.bytes > 0) MemorySegment.copy(g.seg, g.off, MemorySegment.ofArray(copy), 0, g.bytes);
        Buffers.Region s = new Buffers.Region(MemorySegment.ofArray(copy), 0, g.bytes, null, 0);
        if (buf instanceof boolean[] z) {
            for (int i = 0; i < copy.length; i++) copy[i] = (byte) (z[i] ? 1 : 0);
        }
        org.ftmpi.p2p.Request rr = startRecv(g, source, recvtag);
        org.ftmpi.p2p.Request sr = startSend(s, dest, sendtag, org.ftmpi.p2p.Request.STANDARD);
        engine.await(sr);
        engine.await(rr);
        report(sr, "sendRecvReplace");
        return received(rr, g, "sendRecvReplace");
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
        Buffers.Region g = Buffers.direct(buf, count, type, "ibSend");
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
        Buffers.Region g = Buffers.direct(buf, count, type, "iRecv");
        return new Request(startRecv(g, source, tag), this, null);
    }

    private Request nonBlockingSend(String op, Buffer buf, int count, Datatype type, int dest, int tag, int mode)
            throws MPIException {
        check(op);
        checkDest(op, dest);
        checkSendTag(op, tag);
        Buffers.Region g = Buffers.direct(buf, count, type, op);
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
        Buffers.Region g = Buffers.direct(buf, count, type, "bSendInit");
        return new Prequest(this, null, () -> {
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
        Buffers.Region g = Buffers.direct(buf, count, type, "recvInit");
        return new Prequest(this, null, () -> {
            check("start");
            return startRecv(g, source, tag);
        });
    }

    private Prequest persistentSend(String op, Buffer buf, int count, Datatype type, int dest, int tag, int mode)
            throws MPIException {
        check(op);
        checkDest(op, dest);
        checkSendTag(op, tag);
        Buffers.Region g = Buffers.direct(buf, count, type, op);
        return new Prequest(this, null, () -> {
            check("start");
            return startSend(g, dest, tag, mode);
        });
    }

    // ------------------------------------------------------------------ probes

    /** MPI_PROBE: blocks until a matching message can be received and returns its status. */
    public final Status probe(int source, int tag) throws MPIException {
        check("probe");
        checkSource("probe", source);
        checkRecvTag("probe", tag);
        if (source == MPI.PROC_NULL) return new Status(MPI.PROC_NULL, MPI.ANY_TAG, MPI.SUCCESS, false, 0);
        int idle = 0;
        while (true) {
            Engine.Probed p = probeOnce("probe", source, tag, false);
            if (p != null) return new Status(p.source(), p.tag(), MPI.SUCCESS, false, p.length());
            idle = Engine.idle(idle);
        }
    }

    /** MPI_IPROBE: the status of a matching message, or {@code null} if there is none yet. */
    public final Status iProbe(int source, int tag) throws MPIException {
        check("iProbe");
        checkSource("iProbe", source);
        checkRecvTag("iProbe", tag);
        if (source == MPI.PROC_NULL) return new Status(MPI.PROC_NULL, MPI.ANY_TAG, MPI.SUCCESS, false, 0);
        Engine.Probed p = probeOnce("iProbe", source, tag, false);
        return p == null ? null : new Status(p.source(), p.tag(), MPI.SUCCESS, false, p.length());
    }

    Engine.Probed probeOnce(String op, int source, int tag, boolean remove) throws MPIException {
        try {
            return engine.probe(context, source, source >= 0 ? world[source] : -1, tag, remove);
        } catch (P2pException e) {
            throw raise(e, op);
        }
    }

    // ------------------------------------------------------------------ pack (predefined types)

    /** MPI_PACK: packs {@code incount} elements into {@code outbuf} at {@code position}; returns the new position. */
    public final int pack(Object inbuf, int incount, Datatype type, byte[] outbuf, int position) throws MPIException {
        check("pack");
        Buffers.Region g = Buffers.region(inbuf, incount, type, "pack", false);
        if (outbuf == null) throw raise(MPI.ERR_BUFFER, "pack: outbuf is null");
        if (position < 0 || position + g.bytes > outbuf.length) {
            throw raise(MPI.ERR_TRUNCATE, "pack: outbuf (byte[" + outbuf.length + "]) has no room for "
                    + g.bytes + " bytes at position " + position);
        }
        MemorySegment.copy(g.seg, g.off, MemorySegment.ofArray(outbuf), position, g.bytes);
        return position + (int) g.bytes;
    }

    /** MPI_UNPACK: unpacks {@code outcount} elements from {@code inbuf} at {@code position}; returns the new position. */
    public final int unpack(byte[] inbuf, int position, Object outbuf, int outcount, Datatype type)
            throws MPIException {
        check("unpack");
        Buffers.Region g = Buffers.region(outbuf, outcount, type, "unpack", true);
        if (inbuf == null) throw raise(MPI.ERR_BUFFER, "unpack: inbuf is null");
        if (position < 0 || position + g.bytes > inbuf.length) {
            throw raise(MPI.ERR_TRUNCATE, "unpack: inbuf (byte[" + inbuf.length + "]) holds fewer than "
                    + g.bytes + " bytes after position " + position);
        }
        MemorySegment.copy(MemorySegment.ofArray(inbuf), position, g.seg, g.off, g.bytes);
        g.finishReceive();
        return position + (int) g.bytes;
    }

    /** MPI_PACK_SIZE: bytes needed to pack {@code incount} elements of {@code type}. */
    public final int packSize(int incount, Datatype type) throws MPIException {
        check("packSize");
        if (incount < 0) throw raise(MPI.ERR_COUNT, "packSize: incount is negative (" + incount + ")");
        if (type == null || type.isNull()) throw raise(MPI.ERR_TYPE, "packSize: datatype is null");
        return incount * type.sizeBytes;
    }

    // ------------------------------------------------------------------ internals

    org.ftmpi.p2p.Request startSend(Buffers.Region g, int dest, int tag, int mode) {
        return engine.send(context, epoch, rank, dest, dest >= 0 ? world[dest] : -1, tag,
                g.seg, g.off, g.bytes, mode);
    }

    org.ftmpi.p2p.Request startRecv(Buffers.Region g, int source, int tag) {
        return engine.receive(context, source, source >= 0 ? world[source] : -1, tag, g.seg, g.off, g.bytes);
    }

    /** Reserves space in the attached buffer, copies the message there, and sends the copy. */
    void bufferedSend(String op, Buffers.Region g, int dest, int tag) throws MPIException {
        long need = g.bytes + MPI.BSEND_OVERHEAD;
        MPI.reserveBsend(need, op);
        byte[] copy = new byte[(int) g.bytes];
        if (g.bytes > 0) MemorySegment.copy(g.seg, g.off, MemorySegment.ofArray(copy), 0, g.bytes);
        Buffers.Region c = new Buffers.Region(MemorySegment.ofArray(copy), 0, g.bytes, null, 0);
        org.ftmpi.p2p.Request r = startSend(c, dest, tag, org.ftmpi.p2p.Request.STANDARD);
        r.whenComplete(() -> MPI.releaseBsend(need));
    }

    Status received(org.ftmpi.p2p.Request r, Buffers.Region g, String op) throws MPIException {
        int err = r.errorClass();
        if (err == ErrorClass.SUCCESS) {
            g.finishReceive();
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
    }

    private void checkDest(String op, int dest) throws MPIException {
        if (dest != MPI.PROC_NULL && (dest < 0 || dest >= size)) {
            throw raise(MPI.ERR_RANK, op + ": dest " + dest + " is not a rank of " + name + " (size " + size + ")");
        }
    }

    private void checkSource(String op, int source) throws MPIException {
        if (source != MPI.PROC_NULL && source != MPI.ANY_SOURCE && (source < 0 || source >= size)) {
            throw raise(MPI.ERR_RANK, op + ": source " + source + " is not a rank of " + name + " (size " + size + ")");
        }
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
        return handle(MPIException.of(errorClass, message));
    }

    MPIException raise(P2pException e, String op) {
        String msg = op + ": " + e.getMessage();
        MPIException ex = e.failedRank() >= 0
                ? new ProcFailedException(e.errorClass(), msg, e.failedRank())
                : MPIException.of(e.errorClass(), msg);
        return handle(ex);
    }

    private MPIException handle(MPIException ex) {
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
