package mpi;

import java.lang.foreign.MemorySegment;
import java.nio.Buffer;
import org.ftmpi.coll.Neighbors;

/**
 * Neighbour collectives (MPI_NEIGHBOR_ALLGATHER(V), MPI_NEIGHBOR_ALLTOALL(V)) and their
 * non-blocking forms, over the communicator's {@link Topologies.Neighborhood}: blocking forms
 * run {@link Neighbors#exchange} on the caller's thread, non-blocking ones on the
 * communicator's {@link Schedule} (direct buffers only; atomic under {@code --coll-mode atomic}
 * as the other collectives). A communicator without a topology raises {@code ERR_TOPOLOGY}.
 */
final class NeighborColls {
    private NeighborColls() {}

    static Request allGather(Comm c, boolean nb, Object sendbuf, int sendcount, Datatype sendtype,
                             Object recvbuf, int recvcount, Datatype recvtype) throws MPIException {
        String op = nb ? "iNeighborAllGather" : "neighborAllGather";
        Topologies.Neighborhood h = start(c, nb, op);
        Comm.Buf s = buf(c, nb, sendbuf, sendcount, sendtype, op, "sendcount", false);
        c.checkCount(op, "recvcount", recvcount);
        int in = h.sources().length;
        Comm.Buf r = buf(c, nb, recvbuf, Math.multiplyExact(recvcount, in), recvtype, op, "recvcount", true);
        MemorySegment[] send = new MemorySegment[h.dests().length];
        java.util.Arrays.fill(send, s.seg);
        return run(c, nb, op, h, even(r, in, recvcount, recvtype), send, r);
    }

    static Request allGatherv(Comm c, boolean nb, Object sendbuf, int sendcount, Datatype sendtype,
                              Object recvbuf, int[] recvcount, int[] displs, Datatype recvtype) throws MPIException {
        String op = nb ? "iNeighborAllGatherv" : "neighborAllGatherv";
        Topologies.Neighborhood h = start(c, nb, op);
        Comm.Buf s = buf(c, nb, sendbuf, sendcount, sendtype, op, "sendcount", false);
        int in = h.sources().length;
        Comm.Buf r = buf(c, nb, recvbuf, extent(c, op, recvcount, displs, in, "recvcount", "displs"), recvtype, op, null, true);
        MemorySegment[] send = new MemorySegment[h.dests().length];
        java.util.Arrays.fill(send, s.seg);
        return run(c, nb, op, h, uneven(r, recvcount, displs, in, recvtype), send, r);
    }

    static Request allToAll(Comm c, boolean nb, Object sendbuf, int sendcount, Datatype sendtype,
                            Object recvbuf, int recvcount, Datatype recvtype) throws MPIException {
        String op = nb ? "iNeighborAllToAll" : "neighborAllToAll";
        Topologies.Neighborhood h = start(c, nb, op);
        int in = h.sources().length, out = h.dests().length;
        c.checkCount(op, "sendcount", sendcount);
        c.checkCount(op, "recvcount", recvcount);
        Comm.Buf s = buf(c, nb, sendbuf, Math.multiplyExact(sendcount, out), sendtype, op, "sendcount", false);
        Comm.Buf r = buf(c, nb, recvbuf, Math.multiplyExact(recvcount, in), recvtype, op, "recvcount", true);
        return run(c, nb, op, h, even(r, in, recvcount, recvtype), even(s, out, sendcount, sendtype), r);
    }

    static Request allToAllv(Comm c, boolean nb, Object sendbuf, int[] sendcount, int[] sdispls, Datatype sendtype,
                             Object recvbuf, int[] recvcount, int[] rdispls, Datatype recvtype) throws MPIException {
        String op = nb ? "iNeighborAllToAllv" : "neighborAllToAllv";
        Topologies.Neighborhood h = start(c, nb, op);
        int in = h.sources().length, out = h.dests().length;
        Comm.Buf s = buf(c, nb, sendbuf, extent(c, op, sendcount, sdispls, out, "sendcount", "sdispls"), sendtype, op, null, false);
        Comm.Buf r = buf(c, nb, recvbuf, extent(c, op, recvcount, rdispls, in, "recvcount", "rdispls"), recvtype, op, null, true);
        return run(c, nb, op, h, uneven(r, recvcount, rdispls, in, recvtype), uneven(s, sendcount, sdispls, out, sendtype), r);
    }

    private static Topologies.Neighborhood start(Comm c, boolean nb, String op) throws MPIException {
        if (nb) c.takeNbScratch(); // ATOMIC: drop the scratch buffers of a call that failed its checks
        c.check(op);
        return c.neighborhood(op);
    }

    private static Request run(Comm c, boolean nb, String op, Topologies.Neighborhood h, MemorySegment[] recv,
                               MemorySegment[] send, Comm.Buf r) throws MPIException {
        int[] sources = c.dense(h.sources()), dests = c.dense(h.dests()); // BLANK: a blank neighbour is PROC_NULL
        if (nb) {
            return c.schedule().submitColl(c, op, ch -> Neighbors.exchange(ch, sources, h.recvTags(), recv,
                    dests, h.sendTags(), send));
        }
        c.runColl(op, () -> Neighbors.exchange(c.cc(), sources, h.recvTags(), recv, dests, h.sendTags(), send));
        r.done();
        return null;
    }

    private static Comm.Buf buf(Comm c, boolean nb, Object b, int count, Datatype type, String op, String arg,
                                boolean out) throws MPIException {
        if (!nb) return c.buf(b, count, type, op, arg);
        if (b != null && !(b instanceof Buffer nio && nio.isDirect())) {
            throw c.raise(MPI.ERR_BUFFER, op + ": buf must be a direct buffer (see MPI.newByteBuffer and friends);"
                    + " non-blocking operations do not take heap buffers or arrays");
        }
        return NbColls.dbuf(c, (Buffer) b, count, type, op, arg, out);
    }

    /** Elements a buffer needs for blocks {@code counts[i]} at {@code displs[i]}, {@code i < n}. */
    private static int extent(Comm c, String op, int[] counts, int[] displs, int n, String countsArg, String displsArg)
            throws MPIException {
        if (counts == null || counts.length < n) {
            throw c.raise(MPI.ERR_ARG, op + ": " + countsArg + " must have " + n + " entries (one per neighbour)");
        }
        if (displs == null || displs.length < n) {
            throw c.raise(MPI.ERR_ARG, op + ": " + displsArg + " must have " + n + " entries (one per neighbour)");
        }
        long need = 0;
        for (int i = 0; i < n; i++) {
            if (counts[i] < 0) throw c.raise(MPI.ERR_COUNT, op + ": " + countsArg + "[" + i + "] is negative (" + counts[i] + ")");
            if (displs[i] < 0) throw c.raise(MPI.ERR_ARG, op + ": " + displsArg + "[" + i + "] is negative (" + displs[i] + ")");
            if (counts[i] > 0) need = Math.max(need, (long) displs[i] + counts[i]);
        }
        if (need > Integer.MAX_VALUE) throw c.raise(MPI.ERR_COUNT, op + ": " + displsArg + " + " + countsArg + " overflow");
        return (int) need;
    }

    private static MemorySegment[] even(Comm.Buf b, int n, int count, Datatype type) {
        MemorySegment[] out = new MemorySegment[n];
        long len = (long) count * type.sizeBytes;
        for (int i = 0; i < n; i++) out[i] = b.seg.asSlice(i * len, len);
        return out;
    }

    private static MemorySegment[] uneven(Comm.Buf b, int[] counts, int[] displs, int n, Datatype type) {
        MemorySegment[] out = new MemorySegment[n];
        for (int i = 0; i < n; i++) {
            long len = (long) counts[i] * type.sizeBytes;
            out[i] = len == 0 ? MemorySegment.ofArray(new byte[0]) : b.seg.asSlice((long) displs[i] * type.sizeBytes, len);
        }
        return out;
    }
}
