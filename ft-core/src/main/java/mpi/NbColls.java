package mpi;

import java.lang.foreign.MemorySegment;
import java.nio.Buffer;
import org.ftmpi.coll.Collectives;
import org.ftmpi.coll.Dissemination;
import org.ftmpi.coll.Reducer;

/**
 * The bodies of the non-blocking collectives ({@code Comm.iBcast} ... {@code Intracomm.iExScan}):
 * arguments are checked and buffers resolved at the call, on the caller's thread, exactly as for
 * the blocking forms (errors through the communicator's error handler); the algorithm, the same
 * {@link Collectives} method the blocking form uses, then runs on the communicator's
 * {@link Schedule}. Buffers must be direct (Open MPI's rule for non-blocking calls).
 */
final class NbColls {
    private NbColls() {}

    private static Collectives coll() {
        return Collectives.load();
    }

    /**
     * A direct buffer of {@code count} elements as a collective buffer; {@code out}: the collective
     * may write it (under ATOMIC its scratch copy is copied out at the end, {@link Comm#nbOut}).
     */
    static Comm.Buf dbuf(Comm c, Buffer b, int count, Datatype type, String op, String arg, boolean out)
            throws MPIException {
        c.checkCount(op, arg == null ? "count" : arg, count);
        Comm.Buf buf = new Comm.Buf(c.direct(b, count, type, op), c.atomic);
        return out ? c.nbOut(buf) : buf;
    }

    /** A direct buffer holding blocks {@code counts[i]} at {@code displs[i]}; {@code out} as for {@link #dbuf}. */
    static Comm.Buf dvbuf(Comm c, Buffer b, int[] counts, int[] displs, Datatype type, String op, String countsArg,
                          String displsArg, boolean out) throws MPIException {
        if (b != null && !b.isDirect()) {
            throw c.raise(MPI.ERR_BUFFER, op + ": buf must be a direct buffer (see MPI.newByteBuffer and friends);"
                    + " non-blocking operations do not take heap buffers or arrays");
        }
        Comm.Buf buf = c.vbuf(b, counts, displs, type, op, countsArg, displsArg);
        return out ? c.nbOut(buf) : buf;
    }

    /** A request that is already complete (a collective with a BLANK root). */
    private static Request done(Comm c) {
        return new Request(c.engine.completedRequest(org.ftmpi.p2p.Request.Kind.COLL, MPI.PROC_NULL, MPI.ANY_TAG, 0), c, null);
    }

    static Request iBarrier(Comm c) throws MPIException {
        c.checkNb("iBarrier");
        return c.schedule().submitColl(c, "iBarrier", Dissemination::barrier);
    }

    static Request iBcast(Comm c, Buffer buf, int count, Datatype type, int root) throws MPIException {
        c.checkNb("iBcast");
        c.checkRoot("iBcast", root);
        if (c.rt(root) < 0) return done(c); // BLANK root: returns at once, buffers untouched
        Comm.Buf b = dbuf(c, buf, count, type, "iBcast", null, true);
        return c.schedule().submitColl(c, "iBcast", ch -> coll().bcast(ch, b.seg, c.rt(root)));
    }

    static Request iReduce(Comm c, Buffer sendbuf, Buffer recvbuf, int count, Datatype type, Op op, int root)
            throws MPIException {
        c.checkNb("iReduce");
        c.checkRoot("iReduce", root);
        if (c.rt(root) < 0) return done(c); // BLANK root: returns at once, buffers untouched
        Reducer red = c.reducerFor(op, type, "iReduce");
        Comm.Buf s = dbuf(c, sendbuf, count, type, "iReduce", null, false);
        Comm.Buf r = c.rank == root ? dbuf(c, recvbuf, count, type, "iReduce", null, true) : null;
        return c.schedule().submitColl(c, "iReduce",
                ch -> coll().reduce(ch, s.seg, r == null ? null : r.seg, count, red, c.rt(root)));
    }

    static Request iReduce(Comm c, Buffer buf, int count, Datatype type, Op op, int root) throws MPIException {
        c.checkNb("iReduce");
        c.checkRoot("iReduce", root);
        if (c.rt(root) < 0) return done(c); // BLANK root: returns at once, buffers untouched
        Reducer red = c.reducerFor(op, type, "iReduce");
        Comm.Buf b = dbuf(c, buf, count, type, "iReduce", null, true);
        boolean atRoot = c.rank == root;
        return c.schedule().submitColl(c, "iReduce",
                ch -> coll().reduce(ch, atRoot ? b.copy() : b.seg, b.seg, count, red, c.rt(root)));
    }

    static Request iAllReduce(Comm c, Buffer sendbuf, Buffer recvbuf, int count, Datatype type, Op op)
            throws MPIException {
        c.checkNb("iAllReduce");
        Reducer red = c.reducerFor(op, type, "iAllReduce");
        Comm.Buf s = dbuf(c, sendbuf, count, type, "iAllReduce", null, false);
        Comm.Buf r = dbuf(c, recvbuf, count, type, "iAllReduce", null, true);
        return c.schedule().submitColl(c, "iAllReduce", ch -> coll().allReduce(ch, s.seg, r.seg, count, red));
    }

    static Request iAllReduce(Comm c, Buffer buf, int count, Datatype type, Op op) throws MPIException {
        c.checkNb("iAllReduce");
        Reducer red = c.reducerFor(op, type, "iAllReduce");
        Comm.Buf b = dbuf(c, buf, count, type, "iAllReduce", null, true);
        return c.schedule().submitColl(c, "iAllReduce", ch -> coll().allReduce(ch, b.copy(), b.seg, count, red));
    }

    static Request iGather(Comm c, Buffer sendbuf, int sendcount, Datatype sendtype,
                           Buffer recvbuf, int recvcount, Datatype recvtype, int root) throws MPIException {
        c.checkNb("iGather");
        c.checkRoot("iGather", root);
        if (c.rt(root) < 0) return done(c); // BLANK root: returns at once, buffers untouched
        Comm.Buf s = dbuf(c, sendbuf, sendcount, sendtype, "iGather", "sendcount", false);
        MemorySegment[] bl = null;
        if (c.rank == root) {
            c.checkCount("iGather", "recvcount", recvcount);
            Comm.Buf r = dbuf(c, recvbuf, Math.multiplyExact(recvcount, c.size), recvtype, "iGather", "recvcount", true);
            bl = c.blocks(r, recvcount, recvtype);
        }
        MemorySegment[] blocks = bl;
        return c.schedule().submitColl(c, "iGather", ch -> coll().gatherv(ch, s.seg, c.sel(blocks), c.rt(root)));
    }

    static Request iGather(Comm c, Buffer buf, int count, Datatype type, int root) throws MPIException {
        c.checkNb("iGather");
        c.checkRoot("iGather", root);
        if (c.rt(root) < 0) return done(c); // BLANK root: returns at once, buffers untouched
        if (c.rank == root) {
            c.checkCount("iGather", "count", count);
            Comm.Buf r = dbuf(c, buf, Math.multiplyExact(count, c.size), type, "iGather", "count", true);
            MemorySegment[] bl = c.blocks(r, count, type);
            return c.schedule().submitColl(c, "iGather", ch -> coll().gatherv(ch, null, c.sel(bl), c.rt(root)));
        }
        Comm.Buf s = dbuf(c, buf, count, type, "iGather", null, false);
        return c.schedule().submitColl(c, "iGather", ch -> coll().gatherv(ch, s.seg, null, c.rt(root)));
    }

    static Request iGatherv(Comm c, Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf,
                            int[] recvcount, int[] displs, Datatype recvtype, int root) throws MPIException {
        c.checkNb("iGatherv");
        c.checkRoot("iGatherv", root);
        if (c.rt(root) < 0) return done(c); // BLANK root: returns at once, buffers untouched
        Comm.Buf s = dbuf(c, sendbuf, sendcount, sendtype, "iGatherv", "sendcount", false);
        MemorySegment[] bl = null;
        if (c.rank == root) {
            Comm.Buf r = dvbuf(c, recvbuf, recvcount, displs, recvtype, "iGatherv", "recvcount", "displs", true);
            bl = c.vblocks(r, recvcount, displs, recvtype);
        }
        MemorySegment[] blocks = bl;
        return c.schedule().submitColl(c, "iGatherv", ch -> coll().gatherv(ch, s.seg, c.sel(blocks), c.rt(root)));
    }

    /** In place at the root ({@code send == null}) or the non-root form ({@code recvbuf == null}). */
    static Request iGathervHalf(Comm c, Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf,
                                int[] recvcount, int[] displs, Datatype recvtype, int root, boolean rootForm)
            throws MPIException {
        c.checkNb("iGatherv");
        c.checkRoot("iGatherv", root);
        if (c.rt(root) < 0) return done(c); // BLANK root: returns at once, buffers untouched
        if (rootForm != (c.rank == root)) {
            throw c.raise(MPI.ERR_ROOT, "iGatherv: " + (rootForm
                    ? "the in-place form (recvbuf, recvcount, displs, recvtype, root) is for the root " + root + " only"
                    : "the root " + root + " must call the in-place form or the full form"));
        }
        if (rootForm) {
            Comm.Buf r = dvbuf(c, recvbuf, recvcount, displs, recvtype, "iGatherv", "recvcount", "displs", true);
            MemorySegment[] bl = c.vblocks(r, recvcount, displs, recvtype);
            return c.schedule().submitColl(c, "iGatherv", ch -> coll().gatherv(ch, null, c.sel(bl), c.rt(root)));
        }
        Comm.Buf s = dbuf(c, sendbuf, sendcount, sendtype, "iGatherv", "sendcount", false);
        return c.schedule().submitColl(c, "iGatherv", ch -> coll().gatherv(ch, s.seg, null, c.rt(root)));
    }

    static Request iScatter(Comm c, Buffer sendbuf, int sendcount, Datatype sendtype,
                            Buffer recvbuf, int recvcount, Datatype recvtype, int root) throws MPIException {
        c.checkNb("iScatter");
        c.checkRoot("iScatter", root);
        if (c.rt(root) < 0) return done(c); // BLANK root: returns at once, buffers untouched
        Comm.Buf r = dbuf(c, recvbuf, recvcount, recvtype, "iScatter", "recvcount", true);
        MemorySegment[] bl = null;
        if (c.rank == root) {
            c.checkCount("iScatter", "sendcount", sendcount);
            Comm.Buf s = dbuf(c, sendbuf, Math.multiplyExact(sendcount, c.size), sendtype, "iScatter", "sendcount", false);
            bl = c.blocks(s, sendcount, sendtype);
        }
        MemorySegment[] blocks = bl;
        return c.schedule().submitColl(c, "iScatter", ch -> coll().scatterv(ch, c.sel(blocks), r.seg, c.rt(root)));
    }

    static Request iScatter(Comm c, Buffer buf, int count, Datatype type, int root) throws MPIException {
        c.checkNb("iScatter");
        c.checkRoot("iScatter", root);
        if (c.rt(root) < 0) return done(c); // BLANK root: returns at once, buffers untouched
        if (c.rank == root) {
            c.checkCount("iScatter", "count", count);
            Comm.Buf s = dbuf(c, buf, Math.multiplyExact(count, c.size), type, "iScatter", "count", false);
            MemorySegment[] bl = c.blocks(s, count, type);
            return c.schedule().submitColl(c, "iScatter", ch -> coll().scatterv(ch, c.sel(bl), null, c.rt(root)));
        }
        Comm.Buf r = dbuf(c, buf, count, type, "iScatter", null, true);
        return c.schedule().submitColl(c, "iScatter", ch -> coll().scatterv(ch, null, r.seg, c.rt(root)));
    }

    static Request iScatterv(Comm c, Buffer sendbuf, int[] sendcount, int[] displs, Datatype sendtype,
                             Buffer recvbuf, int recvcount, Datatype recvtype, int root) throws MPIException {
        c.checkNb("iScatterv");
        c.checkRoot("iScatterv", root);
        if (c.rt(root) < 0) return done(c); // BLANK root: returns at once, buffers untouched
        Comm.Buf r = dbuf(c, recvbuf, recvcount, recvtype, "iScatterv", "recvcount", true);
        MemorySegment[] bl = null;
        if (c.rank == root) {
            Comm.Buf s = dvbuf(c, sendbuf, sendcount, displs, sendtype, "iScatterv", "sendcount", "displs", false);
            bl = c.vblocks(s, sendcount, displs, sendtype);
        }
        MemorySegment[] blocks = bl;
        return c.schedule().submitColl(c, "iScatterv", ch -> coll().scatterv(ch, c.sel(blocks), r.seg, c.rt(root)));
    }

    static Request iScattervHalf(Comm c, Buffer sendbuf, int[] sendcount, int[] displs, Datatype sendtype,
                                 Buffer recvbuf, int recvcount, Datatype recvtype, int root, boolean rootForm)
            throws MPIException {
        c.checkNb("iScatterv");
        c.checkRoot("iScatterv", root);
        if (c.rt(root) < 0) return done(c); // BLANK root: returns at once, buffers untouched
        if (rootForm != (c.rank == root)) {
            throw c.raise(MPI.ERR_ROOT, "iScatterv: " + (rootForm
                    ? "the in-place form (sendbuf, sendcount, displs, sendtype, root) is for the root " + root + " only"
                    : "the root " + root + " must call the in-place form or the full form"));
        }
        if (rootForm) {
            Comm.Buf s = dvbuf(c, sendbuf, sendcount, displs, sendtype, "iScatterv", "sendcount", "displs", false);
            MemorySegment[] bl = c.vblocks(s, sendcount, displs, sendtype);
            return c.schedule().submitColl(c, "iScatterv", ch -> coll().scatterv(ch, c.sel(bl), null, c.rt(root)));
        }
        Comm.Buf r = dbuf(c, recvbuf, recvcount, recvtype, "iScatterv", "recvcount", true);
        return c.schedule().submitColl(c, "iScatterv", ch -> coll().scatterv(ch, null, r.seg, c.rt(root)));
    }

    static Request iAllGather(Comm c, Buffer sendbuf, int sendcount, Datatype sendtype,
                              Buffer recvbuf, int recvcount, Datatype recvtype) throws MPIException {
        c.checkNb("iAllGather");
        Comm.Buf s = sendbuf == null && sendtype == null ? null
                : dbuf(c, sendbuf, sendcount, sendtype, "iAllGather", "sendcount", false);
        c.checkCount("iAllGather", "recvcount", recvcount);
        Comm.Buf r = dbuf(c, recvbuf, Math.multiplyExact(recvcount, c.size), recvtype, "iAllGather", "recvcount", true);
        MemorySegment[] bl = c.blocks(r, recvcount, recvtype);
        return c.schedule().submitColl(c, "iAllGather", ch -> coll().allGatherv(ch, s == null ? null : s.seg, c.sel(bl)));
    }

    static Request iAllGatherv(Comm c, Buffer sendbuf, int sendcount, Datatype sendtype,
                               Buffer recvbuf, int[] recvcount, int[] displs, Datatype recvtype) throws MPIException {
        c.checkNb("iAllGatherv");
        Comm.Buf s = sendbuf == null && sendtype == null ? null
                : dbuf(c, sendbuf, sendcount, sendtype, "iAllGatherv", "sendcount", false);
        Comm.Buf r = dvbuf(c, recvbuf, recvcount, displs, recvtype, "iAllGatherv", "recvcount", "displs", true);
        MemorySegment[] bl = c.vblocks(r, recvcount, displs, recvtype);
        return c.schedule().submitColl(c, "iAllGatherv", ch -> coll().allGatherv(ch, s == null ? null : s.seg, c.sel(bl)));
    }

    static Request iAllToAll(Comm c, Buffer sendbuf, int sendcount, Datatype sendtype,
                             Buffer recvbuf, int recvcount, Datatype recvtype) throws MPIException {
        c.checkNb("iAllToAll");
        c.checkCount("iAllToAll", "sendcount", sendcount);
        c.checkCount("iAllToAll", "recvcount", recvcount);
        Comm.Buf s = dbuf(c, sendbuf, Math.multiplyExact(sendcount, c.size), sendtype, "iAllToAll", "sendcount", false);
        Comm.Buf r = dbuf(c, recvbuf, Math.multiplyExact(recvcount, c.size), recvtype, "iAllToAll", "recvcount", true);
        MemorySegment[] sb = c.blocks(s, sendcount, sendtype), rb = c.blocks(r, recvcount, recvtype);
        return c.schedule().submitColl(c, "iAllToAll", ch -> coll().allToAllv(ch, c.sel(sb), c.sel(rb)));
    }

    static Request iAllToAllv(Comm c, Buffer sendbuf, int[] sendcount, int[] sdispls, Datatype sendtype,
                              Buffer recvbuf, int[] recvcount, int[] rdispls, Datatype recvtype) throws MPIException {
        c.checkNb("iAllToAllv");
        Comm.Buf s = dvbuf(c, sendbuf, sendcount, sdispls, sendtype, "iAllToAllv", "sendcount", "sdispls", false);
        Comm.Buf r = dvbuf(c, recvbuf, recvcount, rdispls, recvtype, "iAllToAllv", "recvcount", "rdispls", true);
        MemorySegment[] sb = c.vblocks(s, sendcount, sdispls, sendtype);
        MemorySegment[] rb = c.vblocks(r, recvcount, rdispls, recvtype);
        return c.schedule().submitColl(c, "iAllToAllv", ch -> coll().allToAllv(ch, c.sel(sb), c.sel(rb)));
    }

    static Request iReduceScatter(Comm c, Buffer sendbuf, Buffer recvbuf, int[] recvcounts, Datatype type, Op op)
            throws MPIException {
        c.checkNb("iReduceScatter");
        Reducer red = c.reducerFor(op, type, "iReduceScatter");
        int total = c.total("iReduceScatter", recvcounts);
        int[] counts = recvcounts.clone();
        if (sendbuf == null) {
            Comm.Buf b = dbuf(c, recvbuf, total, type, "iReduceScatter", "counts", true);
            MemorySegment out = b.seg.asSlice(0, (long) counts[c.rank] * type.sizeBytes);
            return c.schedule().submitColl(c, "iReduceScatter",
                    ch -> coll().reduceScatter(ch, c.sel(b.copy(), counts, type), out, c.sel(counts), red));
        }
        Comm.Buf s = dbuf(c, sendbuf, total, type, "iReduceScatter", "recvcounts", false);
        Comm.Buf r = dbuf(c, recvbuf, counts[c.rank], type, "iReduceScatter", "recvcounts[" + c.rank + "]", true);
        return c.schedule().submitColl(c, "iReduceScatter", ch -> coll().reduceScatter(ch, c.sel(s.seg, counts, type), r.seg, c.sel(counts), red));
    }

    static Request iReduceScatterBlock(Comm c, Buffer sendbuf, Buffer recvbuf, int recvcount, Datatype type, Op op)
            throws MPIException {
        c.checkNb("iReduceScatterBlock");
        c.checkCount("iReduceScatterBlock", "recvcount", recvcount);
        int[] counts = new int[c.size];
        java.util.Arrays.fill(counts, recvcount);
        return iReduceScatter(c, sendbuf, recvbuf, counts, type, op);
    }

    static Request iScan(Comm c, Buffer sendbuf, Buffer recvbuf, int count, Datatype type, Op op, boolean exclusive)
            throws MPIException {
        String name = exclusive ? "iExScan" : "iScan";
        c.check(name);
        Reducer red = c.reducerFor(op, type, name);
        Comm.Buf r = dbuf(c, recvbuf, count, type, name, null, true);
        Comm.Buf s = sendbuf == null ? null : dbuf(c, sendbuf, count, type, name, null, false);
        return c.schedule().submitColl(c, name, ch -> {
            MemorySegment send = s == null ? r.copy() : s.seg;
            if (exclusive) coll().exScan(ch, send, r.seg, count, red);
            else coll().scan(ch, send, r.seg, count, red);
        });
    }

    /** MPI_COMM_IDUP: the new communicator is bound when the request completes. */
    static Intracomm iDup(Comm c) throws MPIException {
        c.checkNb("iDup");
        int seq = c.nextCreation();
        Intracomm dup = c.newSameKind();
        dup.attrs = c.attrs.copy(); // at the call, as MPI_COMM_IDUP copies attributes
        dup.request = c.schedule().submitColl(c, "iDup", ch -> {
            int id = c.agreeContext("iDup", Comm.K_DUP, true, seq, ch, false);
            c.initDerived(dup, id, c.rank, c.world, c.name + ".idup");
        });
        return dup;
    }
}
