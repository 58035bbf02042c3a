package mpi;

import java.lang.foreign.MemorySegment;
import org.ftmpi.coll.Reducer;
import org.ftmpi.p2p.Engine;

/**
 * An intercommunicator: a local and a remote group. Point-to-point ranks name processes of the
 * remote group; the blocking collectives have the MPI standard's intercommunicator meaning
 * (rooted ones take {@link MPI#ROOT} at the root, {@link MPI#PROC_NULL} at the other members
 * of the root's group, and the root's rank in the other group). Made by
 * {@link Comm#createIntercomm}; {@link #merge} gives an intracommunicator.
 *
 * <p>Contexts: point-to-point on context {@code c}, traffic between the groups of the
 * collectives on {@code c + 1}, and the collectives' steps inside one group on a hidden
 * intracommunicator of the local group ({@link #local}, context agreed like a {@code dup}), so
 * that a local rank and the remote rank with the same number are never confused.
 *
 * <p><b>Note:</b> thread-safe under {@code MPI.THREAD_MULTIPLE} as {@link Comm}.
 */
public final class Intercomm extends Comm {
    /** The local group as an intracommunicator with its own contexts (collective steps inside the group). */
    Intracomm local;
    /** Whether this side's leader (rank 0) has the lower world rank: this group comes first in canonical order. */
    private boolean lowGroup;

    // tags of the traffic between the groups (collective context; ordered pairs are FIFO)
    private static final int T_SYNC = 1, T_DATA = 2, T_LEN = 3, T_SWAP = 4;

    Intercomm() {}

    /** Binds this intercommunicator: local group = {@code local}'s, remote group = {@code remote} (world ranks). */
    private void bindInter(Intracomm local, int context, int[] remote, String newName, Errhandler eh) {
        bind(local.engine, context, local.rank, local.world, newName, false);
        this.local = local;
        this.peers = remote.clone();
        this.lowGroup = world[0] < peers[0];
        int[] all = new int[world.length + peers.length];
        int[] first = lowGroup ? world : peers, second = lowGroup ? peers : world;
        System.arraycopy(first, 0, all, 0, first.length);
        System.arraycopy(second, 0, all, first.length, second.length);
        this.ft = engine.registerComm(context, all); // failures of either group concern this communicator
        this.errhandler = eh;
    }

    // ------------------------------------------------------------------ queries

    @Override
    public boolean isInter() throws MPIException {
        check("isInter");
        return true;
    }

    /** MPI_COMM_REMOTE_SIZE. */
    public int getRemoteSize() throws MPIException {
        check("getRemoteSize");
        return peers.length;
    }

    /** MPI_COMM_REMOTE_GROUP (the calling process is not a member: its rank there is {@code MPI.UNDEFINED}). */
    public Group getRemoteGroup() throws MPIException {
        check("getRemoteGroup");
        return new Group(peers, world[rank]);
    }

    // ------------------------------------------------------------------ construction

    /** MPI_INTERCOMM_CREATE (see {@link Comm#createIntercomm}). */
    static Intercomm create(Comm peer, Intracomm lc, int leader, int remoteLeader, int tag) throws MPIException {
        String op = "createIntercomm";
        // The leader's arguments are checked at the leader; an error reaches the whole local group
        // through the leader's first exchange (so no member waits for a leader that gave up).
        MPIException bad = lc.rank == leader ? checkLeaderArgs(peer, remoteLeader, tag, op) : null;
        int localId = lc.agreeContext(op, K_INTERCOMM, true);
        Intracomm hidden = lc.initDerived(new Intracomm(), localId, lc.rank, lc.world, lc.name + ".local");
        try {
            Swap viaPeer = mine -> {
                if (bad != null) throw bad;
                return peerSwap(peer, remoteLeader, tag, mine);
            };
            long[] mine = new long[1 + lc.size];
            mine[0] = localId;
            for (int i = 0; i < lc.size; i++) mine[1 + i] = lc.world[i];
            long[] theirs = leaderSwap(hidden, leader, mine, viaPeer, op);
            int remoteId = (int) theirs[0];
            int[] remote = new int[theirs.length - 1];
            for (int i = 0; i < remote.length; i++) remote[i] = (int) theirs[1 + i];
            for (int w : remote) {
                for (int v : lc.world) {
                    if (v == w) {
                        throw lc.raise(MPI.ERR_COMM, op + ": the local and remote groups overlap (world rank " + w + ")");
                    }
                }
            }
            // Both groups derive the same candidates from the two groups' (deterministic) local ids.
            boolean low = lc.world[0] < remote[0];
            int keyLow = low ? localId : remoteId, keyHigh = low ? remoteId : localId;
            Engine e = lc.engine;
            for (int attempt = 0; ; attempt++) {
                int candidate = deriveContext(keyLow, keyHigh, attempt);
                boolean reserved = candidate > 2 && e.reserveContext(candidate);
                long[] busy = {reserved ? 0 : 1};
                try {
                    allMax(hidden, busy, op);
                    long[] other = leaderSwap(hidden, leader, busy, viaPeer, op);
                    busy[0] = Math.max(busy[0], other[0]);
                } catch (MPIException ex) {
                    if (reserved) e.releaseContext(candidate);
                    throw ex;
                }
                if (busy[0] == 0) {
                    Intercomm ic = new Intercomm();
                    ic.bindInter(hidden, candidate, remote, lc.name + ".inter", lc.errhandler);
                    return ic;
                }
                if (reserved) e.releaseContext(candidate);
            }
        } catch (MPIException ex) {
            hidden.free();
            throw ex;
        }
    }

    /** The local leader's arguments: null if they are right, else the error (through the peer's error handler). */
    private static MPIException checkLeaderArgs(Comm peer, int remoteLeader, int tag, String op) {
        if (peer.engine == null) {
            return MPIException.of(MPI.ERR_COMM, op + ": the peer communicator " + peer.name + " is freed or MPI is not"
                    + " initialized");
        }
        if (remoteLeader < 0 || remoteLeader >= peer.size) {
            return peer.raise(MPI.ERR_RANK, op + ": remoteLeader " + remoteLeader + " is not a rank of the peer"
                    + " communicator " + peer.name + " (size " + peer.size + ")");
        }
        if (remoteLeader == peer.rank) {
            return peer.raise(MPI.ERR_RANK, op + ": remoteLeader " + remoteLeader + " is the local leader itself");
        }
        if (tag < 0 || tag > MPI.TAG_UB_VALUE) {
            return peer.raise(MPI.ERR_TAG, op + ": tag " + tag + " is outside 0.." + MPI.TAG_UB_VALUE);
        }
        return null;
    }

    /** MPI_COMM_DUP: same groups, new contexts, attributes and hints copied; collective over both groups. */
    @Override
    public Intercomm dup() throws MPIException {
        return dupInter("dup");
    }

    /** MPI_COMM_DUP (as Open MPI's bindings); collective. */
    @Override
    public Intercomm clone() {
        return (Intercomm) super.clone();
    }

    /** MPI_COMM_DUP_WITH_INFO. */
    @Override
    public Intercomm dupWithInfo(Info info) throws MPIException {
        check("dupWithInfo");
        if (info == null) throw raise(MPI.ERR_INFO, "dupWithInfo: info is null (use MPI.INFO_NULL)");
        Intercomm c = dupInter("dupWithInfo");
        c.hints = info.entries();
        return c;
    }

    private Intercomm dupInter(String op) throws MPIException {
        check(op);
        int seq = nextCreation();
        Intracomm l = local.dupIntra(op);
        try {
            int id = agreeInter(op, K_DUP, seq);
            Intercomm c = new Intercomm();
            c.bindInter(l, id, peers, name + ".dup", errhandler);
            c.hints = hints;
            c.attrs = attrs.copy();
            return c;
        } catch (MPIException ex) {
            l.free();
            throw ex;
        }
    }

    /**
     * MPI_INTERCOMM_MERGE: an intracommunicator of both groups; the group that passed
     * {@code high = false} comes first. If both groups pass the same value, the group whose
     * rank 0 has the lower world rank comes first. Collective over both groups.
     */
    public Intracomm merge(boolean high) throws MPIException {
        check("merge");
        int seq = nextCreation();
        long[] other = leaderSwap(local, 0, new long[] {high ? 1 : 0}, m -> interSwap("merge", m), "merge");
        boolean remoteHigh = other[0] != 0;
        boolean localFirst = high == remoteHigh ? lowGroup : !high;
        int[] members = new int[world.length + peers.length];
        int[] first = localFirst ? world : peers, second = localFirst ? peers : world;
        System.arraycopy(first, 0, members, 0, first.length);
        System.arraycopy(second, 0, members, first.length, second.length);
        int id = agreeInter("merge", K_MERGE, seq);
        return derived(id, localFirst ? rank : peers.length + rank, members, name + ".merge");
    }

    /** Frees this intercommunicator and its hidden local one. */
    @Override
    public void free() throws MPIException {
        check("free");
        Intracomm l = local;
        super.free();
        if (l != null && !l.isNull()) l.free();
    }

    // ------------------------------------------------------------------ agreement across both groups

    @FunctionalInterface
    interface Swap {
        long[] apply(long[] mine) throws MPIException;
    }

    /**
     * The leader of {@code group} (rank {@code leader}) swaps {@code mine} with the other group's
     * leader through {@code swap}; every member gets the other group's array.
     */
    static long[] leaderSwap(Intracomm group, int leader, long[] mine, Swap swap, String op) throws MPIException {
        long[] theirs = null;
        MPIException failed = null;
        if (group.rank == leader) {
            try {
                theirs = swap.apply(mine);
            } catch (MPIException ex) {
                failed = ex;
            }
        }
        long[] len = {theirs == null ? -1 : theirs.length};
        bcastLongs(group, len, leader, op);
        if (len[0] < 0) {
            if (failed != null) throw failed;
            throw group.raise(MPI.ERR_OTHER, op + ": the leader (rank " + leader + " of " + group.name
                    + ") could not exchange with the other group (see the error raised there)");
        }
        if (theirs == null) theirs = new long[(int) len[0]];
        bcastLongs(group, theirs, leader, op);
        return theirs;
    }

    private static void bcastLongs(Intracomm group, long[] a, int root, String op) throws MPIException {
        if (a.length == 0) return;
        group.runColl(op, () -> collectives().bcast(group.channel(), MemorySegment.ofArray(a), root));
    }

    /** Element-wise MAX of {@code v} over {@code group}, in place. */
    private static void allMax(Intracomm group, long[] v, String op) throws MPIException {
        Reducer max = MPI.MAX.reducer(MPI.LONG, op);
        MemorySegment in = MemorySegment.ofArray(v.clone());
        group.runColl(op, () -> collectives().allReduce(group.channel(), in, MemorySegment.ofArray(v), v.length, max));
    }

    /** The leaders' exchange at creation: length, then the array, over the peer communicator with the user's tag. */
    private static long[] peerSwap(Comm peer, int remoteLeader, int tag, long[] mine) throws MPIException {
        long[] n = new long[1];
        peer.sendRecv(new long[] {mine.length}, 1, MPI.LONG, remoteLeader, tag, n, 1, MPI.LONG, remoteLeader, tag);
        long[] theirs = new long[(int) n[0]];
        peer.sendRecv(mine, mine.length, MPI.LONG, remoteLeader, tag, theirs, theirs.length, MPI.LONG, remoteLeader, tag);
        return theirs;
    }

    /** The leaders' exchange on an existing intercommunicator (local rank 0 with remote rank 0). */
    private long[] interSwap(String op, long[] mine) throws MPIException {
        long[] n = new long[1];
        exchange(op, MemorySegment.ofArray(new long[] {mine.length}), MemorySegment.ofArray(n), T_LEN);
        long[] theirs = new long[(int) n[0]];
        exchange(op, MemorySegment.ofArray(mine), MemorySegment.ofArray(theirs), T_SWAP);
        return theirs;
    }

    /** Sends {@code out} to and receives {@code in} from remote rank 0 (this is local rank 0). */
    private void exchange(String op, MemorySegment out, MemorySegment in, int tag) throws MPIException {
        runColl(op, () -> awaitAll(engine, recvFrom(0, tag, in), sendTo(0, tag, out)));
    }

    /**
     * Agrees on a context id derived from this intercommunicator's id and creation sequence,
     * free at every member of both groups (as {@link Comm#agreeContext} does for one group).
     */
    private int agreeInter(String op, int kind, int seq) throws MPIException {
        for (int attempt = 0; ; attempt++) {
            int candidate = deriveContext(context, seq, attempt);
            boolean reserved = candidate > 2 && engine.reserveContext(candidate);
            long[] v = {candidate, -candidate, kind, -kind, reserved ? 0 : 1};
            try {
                allMax(local, v, op);
                long[] other = leaderSwap(local, 0, v, m -> interSwap(op, m), op);
                for (int i = 0; i < v.length; i++) v[i] = Math.max(v[i], other[i]);
            } catch (MPIException ex) {
                if (reserved) engine.releaseContext(candidate);
                throw ex;
            }
            if (v[0] != -v[1] || v[2] != -v[3]) {
                if (reserved) engine.releaseContext(candidate);
                throw raise(MPI.ERR_COMM, op + ": the members of " + name + " did not call communicator"
                        + " constructors (dup, merge) in the same order");
            }
            if (v[4] == 0) return candidate;
            if (reserved) engine.releaseContext(candidate);
        }
    }

    // ------------------------------------------------------------------ traffic between the groups

    private org.ftmpi.p2p.Request sendTo(int dest, int tag, MemorySegment data) {
        return engine.send(context + 1, epoch, rank, dest, peers[dest], tag, data, 0, data.byteSize(),
                org.ftmpi.p2p.Request.STANDARD);
    }

    private org.ftmpi.p2p.Request recvFrom(int source, int tag, MemorySegment into) {
        return engine.receive(context + 1, source, peers[source], tag, into, 0, into.byteSize());
    }

    private static final int NONE = 0, ROOT = 1, LEAF = 2;

    /** This process's part in a rooted collective: the root, a member of the root's group, or of the other group. */
    private int role(String op, int root) throws MPIException {
        if (root == MPI.ROOT) return ROOT;
        if (root == MPI.PROC_NULL) return NONE;
        if (root >= 0 && root < peers.length) return LEAF;
        throw raise(MPI.ERR_ROOT, op + ": root " + root + " is not MPI.ROOT, MPI.PROC_NULL or a rank of the remote group"
                + " of the intercommunicator " + name + " (size " + peers.length + ")");
    }

    private static MemorySegment scratch(long bytes) {
        return MemorySegment.ofArray(new byte[(int) bytes]);
    }

    // ------------------------------------------------------------------ collectives (called from Comm)

    /** Nobody leaves before every member of both groups has entered. */
    void interBarrier() throws MPIException {
        String op = "barrier";
        local.runColl(op, () -> org.ftmpi.coll.Dissemination.barrier(local.channel()));
        if (rank == 0) exchange(op, scratch(0), scratch(0), T_SYNC);
        local.runColl(op, () -> org.ftmpi.coll.Dissemination.barrier(local.channel()));
    }

    /** The root sends to remote rank 0, which broadcasts in its group. */
    void interBcast(Object buf, int count, Datatype type, int root) throws MPIException {
        String op = "bcast";
        int role = role(op, root);
        if (role == NONE) return;
        Buf b = buf(buf, count, type, op, null);
        if (role == ROOT) {
            runColl(op, () -> awaitAll(engine, sendTo(0, T_DATA, b.seg)));
            return;
        }
        if (rank == 0) runColl(op, () -> awaitAll(engine, recvFrom(root, T_DATA, b.seg)));
        local.runColl(op, () -> collectives().bcast(local.channel(), b.seg, 0));
        b.done();
    }

    /** The root receives remote rank 0's reduction of the other group's data. */
    void interReduce(Object sendbuf, Object recvbuf, int count, Datatype type, Op op, int root) throws MPIException {
        String name = "reduce";
        int role = role(name, root);
        if (role == NONE) return;
        if (role == ROOT) {
            reducerFor(op, type, name); // same argument checks as the contributors
            Buf r = buf(recvbuf, count, type, name, null);
            runColl(name, () -> awaitAll(engine, recvFrom(0, T_DATA, r.seg)));
            r.done();
            return;
        }
        Reducer red = reducerFor(op, type, name);
        Buf s = buf(sendbuf, count, type, name, null);
        MemorySegment acc = rank == 0 ? scratch(s.seg.byteSize()) : null;
        local.runColl(name, () -> collectives().reduce(local.channel(), s.seg, acc, count, red, 0));
        if (rank == 0) runColl(name, () -> awaitAll(engine, sendTo(root, T_DATA, acc)));
    }

    /** Each group gets the reduction of the other group's data. */
    void interAllReduce(Object sendbuf, Object recvbuf, int count, Datatype type, Op op) throws MPIException {
        String name = "allReduce";
        Reducer red = reducerFor(op, type, name);
        Buf s = buf(sendbuf, count, type, name, null);
        Buf r = buf(recvbuf, count, type, name, null);
        MemorySegment acc = rank == 0 ? scratch(s.seg.byteSize()) : null;
        local.runColl(name, () -> collectives().reduce(local.channel(), s.seg, acc, count, red, 0));
        if (rank == 0) exchange(name, acc, r.seg, T_DATA);
        local.runColl(name, () -> collectives().bcast(local.channel(), r.seg, 0));
        r.done();
    }

    /** The result for this group (the other group's reduction) is scattered by {@code recvcounts}. */
    void interReduceScatter(Object sendbuf, Object recvbuf, int[] recvcounts, Datatype type, Op op) throws MPIException {
        String name = "reduceScatter";
        Reducer red = reducerFor(op, type, name);
        int total = total(name, recvcounts);
        Buf s = buf(sendbuf, total, type, name, "recvcounts");
        Buf r = buf(recvbuf, recvcounts[rank], type, name, "recvcounts[" + rank + "]");
        MemorySegment acc = rank == 0 ? scratch(s.seg.byteSize()) : null;
        MemorySegment theirs = rank == 0 ? scratch(s.seg.byteSize()) : null;
        local.runColl(name, () -> collectives().reduce(local.channel(), s.seg, acc, total, red, 0));
        if (rank == 0) exchange(name, acc, theirs, T_DATA);
        MemorySegment[] blocks = null;
        if (rank == 0) {
            blocks = new MemorySegment[size];
            long off = 0;
            for (int i = 0; i < size; i++) {
                long len = (long) recvcounts[i] * type.sizeBytes;
                blocks[i] = theirs.asSlice(off, len);
                off += len;
            }
        }
        MemorySegment[] bl = blocks;
        local.runColl(name, () -> collectives().scatterv(local.channel(), bl, r.seg, 0));
        r.done();
    }

    /** The root receives one block from each member of the other group, linearly. */
    void interGather(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int recvcount,
                     Datatype recvtype, int root) throws MPIException {
        int[][] cd = role("gather", root) == ROOT ? uniform("gather", "recvcount", recvcount) : new int[2][];
        interGatherv("gather", sendbuf, sendcount, sendtype, recvbuf, cd[0], cd[1], recvtype, root);
    }

    /** {@link #interGather} with per-rank counts and displacements at the root. */
    void interGatherv(String op, Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int[] recvcount,
                      int[] displs, Datatype recvtype, int root) throws MPIException {
        int role = role(op, root);
        if (role == NONE) return;
        if (role == LEAF) {
            Buf s = buf(sendbuf, sendcount, sendtype, op, "sendcount");
            runColl(op, () -> awaitAll(engine, sendTo(root, T_DATA, s.seg)));
            return;
        }
        if (recvtype == null) {
            throw raise(MPI.ERR_ROOT, op + ": the root (MPI.ROOT) of an intercommunicator " + op + " must pass the"
                    + " receive buffer (the full form)");
        }
        Buf r = vbuf(recvbuf, recvcount, displs, recvtype, op, "recvcount", "displs", peers.length);
        MemorySegment[] blocks = vblocks(r, recvcount, displs, recvtype, peers.length);
        org.ftmpi.p2p.Request[] rs = new org.ftmpi.p2p.Request[blocks.length];
        for (int i = 0; i < blocks.length; i++) rs[i] = recvFrom(i, T_DATA, blocks[i]);
        runColl(op, () -> awaitAll(engine, rs));
        r.done();
    }

    /** Counts and displacements of {@code count} elements for each remote rank, one block after another. */
    private int[][] uniform(String op, String arg, int count) throws MPIException {
        checkCount(op, arg, count);
        Math.multiplyExact(count, peers.length);
        int[] counts = new int[peers.length], displs = new int[peers.length];
        for (int j = 0; j < counts.length; j++) {
            counts[j] = count;
            displs[j] = j * count;
        }
        return new int[][] {counts, displs};
    }

    /** The root sends one block to each member of the other group, linearly. */
    void interScatter(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int recvcount,
                      Datatype recvtype, int root) throws MPIException {
        int[][] cd = role("scatter", root) == ROOT ? uniform("scatter", "sendcount", sendcount) : new int[2][];
        interScatterv("scatter", sendbuf, cd[0], cd[1], sendtype, recvbuf, recvcount, recvtype, root);
    }

    /** {@link #interScatter} with per-rank counts and displacements at the root. */
    void interScatterv(String op, Object sendbuf, int[] sendcount, int[] displs, Datatype sendtype, Object recvbuf,
                       int recvcount, Datatype recvtype, int root) throws MPIException {
        int role = role(op, root);
        if (role == NONE) return;
        if (role == LEAF) {
            Buf r = buf(recvbuf, recvcount, recvtype, op, "recvcount");
            runColl(op, () -> awaitAll(engine, recvFrom(root, T_DATA, r.seg)));
            r.done();
            return;
        }
        if (sendtype == null) {
            throw raise(MPI.ERR_ROOT, op + ": the root (MPI.ROOT) of an intercommunicator " + op + " must pass the"
                    + " send buffer (the full form)");
        }
        Buf s = vbuf(sendbuf, sendcount, displs, sendtype, op, "sendcount", "displs", peers.length);
        MemorySegment[] blocks = vblocks(s, sendcount, displs, sendtype, peers.length);
        org.ftmpi.p2p.Request[] rs = new org.ftmpi.p2p.Request[blocks.length];
        for (int i = 0; i < blocks.length; i++) rs[i] = sendTo(i, T_DATA, blocks[i]);
        runColl(op, () -> awaitAll(engine, rs));
    }

    /**
     * Every member receives one block from each member of the other group: {@code recvcount}
     * each (allGather) or {@code recvcounts[i]} at {@code displs[i]} (allGatherv).
     */
    void interAllGatherv(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int[] recvcounts,
                         int[] displs, int recvcount, Datatype recvtype) throws MPIException {
        String op = recvcounts == null ? "allGather" : "allGatherv";
        Buf s = buf(sendbuf, sendcount, sendtype, op, "sendcount");
        MemorySegment[] in;
        Buf r;
        if (recvcounts == null) {
            checkCount(op, "recvcount", recvcount);
            r = buf(recvbuf, Math.multiplyExact(recvcount, peers.length), recvtype, op, "recvcount");
            in = blocks(r, recvcount, recvtype, peers.length);
        } else {
            r = vbuf(recvbuf, recvcounts, displs, recvtype, op, "recvcount", "displs", peers.length);
            in = vblocks(r, recvcounts, displs, recvtype, peers.length);
        }
        MemorySegment[] out = new MemorySegment[peers.length];
        java.util.Arrays.fill(out, s.seg);
        swapBlocks(op, out, in);
        r.done();
    }

    /** Block {@code j} of the send buffer goes to remote rank {@code j}; block {@code j} of the receive buffer comes from it. */
    void interAllToAllv(Object sendbuf, int[] sendcounts, int[] sdispls, int sendcount, Datatype sendtype,
                        Object recvbuf, int[] recvcounts, int[] rdispls, int recvcount, Datatype recvtype)
            throws MPIException {
        String op = sendcounts == null ? "allToAll" : "allToAllv";
        int n = peers.length;
        MemorySegment[] out, in;
        Buf r;
        if (sendcounts == null) {
            checkCount(op, "sendcount", sendcount);
            checkCount(op, "recvcount", recvcount);
            out = blocks(buf(sendbuf, Math.multiplyExact(sendcount, n), sendtype, op, "sendcount"), sendcount, sendtype, n);
            r = buf(recvbuf, Math.multiplyExact(recvcount, n), recvtype, op, "recvcount");
            in = blocks(r, recvcount, recvtype, n);
        } else {
            out = vblocks(vbuf(sendbuf, sendcounts, sdispls, sendtype, op, "sendcount", "sdispls", n),
                    sendcounts, sdispls, sendtype, n);
            r = vbuf(recvbuf, recvcounts, rdispls, recvtype, op, "recvcount", "rdispls", n);
            in = vblocks(r, recvcounts, rdispls, recvtype, n);
        }
        swapBlocks(op, out, in);
        r.done();
    }

    /** Posts every receive, then every send, then waits (linear, for every pair of the two groups). */
    void swapBlocks(String op, MemorySegment[] out, MemorySegment[] in) throws MPIException {
        int n = peers.length;
        org.ftmpi.p2p.Request[] rs = new org.ftmpi.p2p.Request[2 * n];
        for (int j = 0; j < n; j++) rs[j] = recvFrom(j, T_DATA, in[j]);
        for (int k = 0; k < n; k++) {
            int j = (rank + k) % n; // stagger the destinations
            rs[n + k] = sendTo(j, T_DATA, out[j]);
        }
        runColl(op, () -> awaitAll(engine, rs));
    }
}
