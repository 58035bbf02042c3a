package mpi;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.ftmpi.coll.Reducer;
import org.ftmpi.p2p.Engine;

/**
 * An intra-communicator: point-to-point and the blocking collectives (inherited from {@link
 * Comm}, as in Open MPI's bindings), {@link #scan}/{@link #exScan} and
 * communicator construction ({@link #dup}, {@link #split}, {@link #create}). Topologies and
 * non-blocking collectives are not provided yet.
 */
public class Intracomm extends Comm {
    Intracomm() {}

    /** MPI_COMM_DUP (as Open MPI's bindings); collective. */
    @Override
    public Intracomm clone() {
        return (Intracomm) super.clone();
    }

    // ------------------------------------------------------------------ construction

    /** MPI_COMM_DUP. */
    @Override
    public Intracomm dup() throws MPIException {
        return dupIntra("dup");
    }

    /**
     * MPI_COMM_SPLIT: one communicator per {@code colour}, ranks ordered by {@code key} then by
     * rank in this communicator. Returns {@code null} (MPI_COMM_NULL) for {@link MPI#UNDEFINED}.
     */
    public final Intracomm split(int colour, int key) throws MPIException {
        check("split");
        if (colour < 0 && colour != MPI.UNDEFINED) {
            throw raise(MPI.ERR_ARG, "split: colour " + colour + " is negative and not MPI.UNDEFINED");
        }
        int id = agreeContext("split", K_SPLIT, colour != MPI.UNDEFINED);
        int[] all = new int[2 * size];
        all[2 * rank] = colour;
        all[2 * rank + 1] = key;
        MemorySegment seg = MemorySegment.ofArray(all);
        MemorySegment[] blocks = new MemorySegment[size];
        for (int i = 0; i < size; i++) blocks[i] = seg.asSlice(8L * i, 8);
        try {
            runColl("split", () -> collectives().allGatherv(channel(), null, blocks));
        } catch (MPIException e) {
            if (colour != MPI.UNDEFINED) engine.releaseContext(id);
            throw e;
        }
        if (colour == MPI.UNDEFINED) return null;
        List<int[]> mine = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            if (all[2 * i] == colour) mine.add(new int[] {all[2 * i + 1], i});
        }
        mine.sort(Comparator.<int[]>comparingInt(a -> a[0]).thenComparingInt(a -> a[1]));
        int[] members = new int[mine.size()];
        int newRank = -1;
        for (int i = 0; i < members.length; i++) {
            int parentRank = mine.get(i)[1];
            members[i] = world[parentRank];
            if (parentRank == rank) newRank = i;
        }
        return derived(id, newRank, members, name + ".split(" + colour + ")");
    }

    /**
     * MPI_COMM_CREATE: a communicator of the processes of {@code group}, a subset of this
     * communicator's group; every member of this communicator calls it with the same group.
     * Returns {@code null} (MPI_COMM_NULL) to processes not in the group.
     */
    public final Intracomm create(Group group) throws MPIException {
        check("create");
        if (group == null || group.isNull()) throw raise(MPI.ERR_GROUP, "create: group is null or freed");
        int[] members = group.worldRanks("create").clone();
        Set<Integer> mine = new HashSet<>();
        for (int w : world) mine.add(w);
        for (int w : members) {
            if (!mine.contains(w)) {
                throw raise(MPI.ERR_GROUP, "create: group contains world rank " + w + ", which is not in " + name);
            }
        }
        int me = world[rank];
        int newRank = -1;
        for (int i = 0; i < members.length; i++) if (members[i] == me) newRank = i;
        int id = agreeContext("create", K_CREATE, newRank >= 0);
        if (newRank < 0) return null;
        return derived(id, newRank, members, name + ".create");
    }

    // ------------------------------------------------------------------ prefix reductions

    /** MPI_SCAN: inclusive prefix reduction in rank order. */
    public final void scan(Object sendbuf, Object recvbuf, int count, Datatype type, Op op) throws MPIException {
        check("scan");
        Reducer red = reducerFor(op, type, "scan");
        Buf s = buf(sendbuf, count, type, "scan", null);
        Buf r = buf(recvbuf, count, type, "scan", null);
        runColl("scan", () -> collectives().scan(channel(), s.seg, r.seg, count, red));
        r.done();
    }

    /** MPI_SCAN with MPI_IN_PLACE. */
    public final void scan(Object buf, int count, Datatype type, Op op) throws MPIException {
        check("scan");
        Reducer red = reducerFor(op, type, "scan");
        Buf b = buf(buf, count, type, "scan", null);
        MemorySegment send = b.copy();
        runColl("scan", () -> collectives().scan(channel(), send, b.seg, count, red));
        b.done();
    }

    /** MPI_EXSCAN: exclusive prefix reduction; {@code recvbuf} of rank 0 is left unchanged. */
    public final void exScan(Object sendbuf, Object recvbuf, int count, Datatype type, Op op) throws MPIException {
        check("exScan");
        Reducer red = reducerFor(op, type, "exScan");
        Buf s = buf(sendbuf, count, type, "exScan", null);
        Buf r = buf(recvbuf, count, type, "exScan", null);
        runColl("exScan", () -> collectives().exScan(channel(), s.seg, r.seg, count, red));
        r.done();
    }

    /** MPI_EXSCAN with MPI_IN_PLACE. */
    public final void exScan(Object buf, int count, Datatype type, Op op) throws MPIException {
        check("exScan");
        Reducer red = reducerFor(op, type, "exScan");
        Buf b = buf(buf, count, type, "exScan", null);
        MemorySegment send = b.copy();
        runColl("exScan", () -> collectives().exScan(channel(), send, b.seg, count, red));
        b.done();
    }

    /** MPI_COMM_IDUP: returns at once; use the result after {@link #getRequest()} completes. */
    @Override
    public Intracomm iDup() throws MPIException {
        return NbColls.iDup(this);
    }

    /** MPI_ISCAN (direct buffers). */
    public final Request iScan(java.nio.Buffer sendbuf, java.nio.Buffer recvbuf, int count, Datatype type, Op op)
            throws MPIException {
        if (sendbuf == null) throw raise(MPI.ERR_BUFFER, "iScan: sendbuf is null");
        return NbColls.iScan(this, sendbuf, recvbuf, count, type, op, false);
    }

    /** MPI_ISCAN with MPI_IN_PLACE. */
    public final Request iScan(java.nio.Buffer buf, int count, Datatype type, Op op) throws MPIException {
        return NbColls.iScan(this, null, buf, count, type, op, false);
    }

    /** MPI_IEXSCAN (direct buffers); {@code recvbuf} of rank 0 is left unchanged. */
    public final Request iExScan(java.nio.Buffer sendbuf, java.nio.Buffer recvbuf, int count, Datatype type, Op op)
            throws MPIException {
        if (sendbuf == null) throw raise(MPI.ERR_BUFFER, "iExScan: sendbuf is null");
        return NbColls.iScan(this, sendbuf, recvbuf, count, type, op, true);
    }

    /** MPI_IEXSCAN with MPI_IN_PLACE. */
    public final Request iExScan(java.nio.Buffer buf, int count, Datatype type, Op op) throws MPIException {
        return NbColls.iScan(this, null, buf, count, type, op, true);
    }

    Engine engine() {
        return engine;
    }
}
