package mpi;

import java.nio.Buffer;
import org.ftmpi.p2p.Engine;

/**
 * {@code MPI_Message}: a message taken out of matching by {@link #mProbe} or {@link #imProbe},
 * received only by {@link #mRecv} or {@link #imRecv} (so no other thread can steal it).
 */
public final class Message {
    private Engine.Probed probed;
    private Comm comm;
    private boolean noProc;

    /** Creates {@code MPI_MESSAGE_NULL}. */
    public Message() {}

    public boolean isNull() {
        return probed == null && !noProc;
    }

    public boolean isNoProc() {
        return noProc;
    }

    /** MPI_MPROBE: blocks until a matching message arrives and takes it. */
    public Status mProbe(int source, int tag, Comm comm) throws MPIException {
        if (comm == null) throw MPIException.of(MPI.ERR_COMM, "mProbe: comm is null");
        comm.check("mProbe");
        if (comm.nullPeer(source)) {
            noProc = true;
            this.comm = comm;
            return new Status(MPI.PROC_NULL, MPI.ANY_TAG, MPI.SUCCESS, false, 0);
        }
        comm.checkProbeArgs("mProbe", source, tag);
        int idle = 0;
        while (true) {
            // each poll applies the ANY_SOURCE rule (raises on an unacknowledged failure)
            Status s = take(comm, comm.probeOnce("mProbe", source, tag, true));
            if (s != null) return s;
            idle = comm.engine.pause(idle);
        }
    }

    /** MPI_IMPROBE: takes a matching message if there is one; {@code null} otherwise. */
    public Status imProbe(int source, int tag, Comm comm) throws MPIException {
        if (comm == null) throw MPIException.of(MPI.ERR_COMM, "imProbe: comm is null");
        comm.check("imProbe");
        if (comm.nullPeer(source)) {
            noProc = true;
            this.comm = comm;
            return new Status(MPI.PROC_NULL, MPI.ANY_TAG, MPI.SUCCESS, false, 0);
        }
        comm.checkProbeArgs("imProbe", source, tag);
        return take(comm, comm.probeOnce("imProbe", source, tag, true));
    }

    private Status take(Comm comm, Engine.Probed p) {
        if (p == null) return null;
        this.probed = p;
        this.comm = comm;
        this.noProc = false;
        return new Status(p.source(), p.tag(), MPI.SUCCESS, false, p.length());
    }

    /** MPI_MRECV: receives the message; it becomes {@code MPI_MESSAGE_NULL}. */
    public Status mRecv(Object buf, int count, Datatype type) throws MPIException {
        if (noProc) {
            noProc = false;
            return new Status(MPI.PROC_NULL, MPI.ANY_TAG, MPI.SUCCESS, false, 0);
        }
        Engine.Probed p = take("mRecv");
        Buffers.Region g = comm.region(buf, count, type, "mRecv", true);
        org.ftmpi.p2p.Request r = comm.engine.receiveMatched(p, g.seg, g.off, g.bytes);
        comm.engine.await(r);
        return comm.received(r, g, "mRecv");
    }

    /** MPI_IMRECV (direct buffers only). */
    public Request imRecv(Buffer buf, int count, Datatype type) throws MPIException {
        if (noProc) {
            noProc = false;
            return new Request(comm.engine.completedRequest(org.ftmpi.p2p.Request.Kind.RECV, MPI.PROC_NULL,
                    MPI.ANY_TAG, 0), comm, null);
        }
        Engine.Probed p = take("imRecv");
        Buffers.Region g = comm.direct(buf, count, type, "imRecv", Buffers.RECV);
        return new Request(comm.engine.receiveMatched(p, g.seg, g.off, g.bytes), comm, g);
    }

    private Engine.Probed take(String op) throws MPIException {
        if (probed == null) {
            throw MPIException.of(MPI.ERR_REQUEST, op + ": the message is MPI_MESSAGE_NULL (no matched probe)");
        }
        comm.check(op);
        Engine.Probed p = probed;
        probed = null;
        return p;
    }
}
