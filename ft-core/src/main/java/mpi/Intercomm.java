package mpi;

import java.lang.foreign.MemorySegment;
import java.nio.Buffer;
import org.ftmpi.coll.Channel;
import org.ftmpi.coll.Dissemination;
import org.ftmpi.coll.Reducer;
import org.ftmpi.p2p.CommFt;
import org.ftmpi.p2p.Engine;
import org.ftmpi.p2p.P2pException;

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
    /**
     * Comm-mode BLANK (seed 001, Appendix A, 4.1, as {@link BlankColls} for intracommunicators):
     * the non-blank members of the remote group, or null when it has none. The collectives run
     * over the non-blank members of both groups: each group's leader is its first non-blank
     * member ({@link #lead}, {@link #remoteLead}: rank 0 without blanks, -1 when every remote
     * member is a blank), nothing goes to or comes from a blank, a blank root makes the rooted
     * collectives return at once, and the blocks of blanks stay untouched.
     */
    private int[] remoteLive;
    private int lead, remoteLead;

    // tags of the traffic between the groups (collective context; ordered pairs are FIFO)
    private static final int T_SYNC = 1, T_DATA = 2, T_LEN = 3, T_SWAP = 4;

    Intercomm() {}

    /** Binds this intercommunicator: local group = {@code local}'s, remote group = {@code remote} (world ranks). */
    private void bindInter(Intracomm local, int context, int[] remote, String newName, Errhandler eh) {
        bind(local.engine, context, local.rank, local.world, newName, false);
        this.local = local;
        this.peers = remote.clone();
        this.lowGroup = world[0] < peers[0];
        this.remoteLive = engine.recovers() ? BlankColls.liveRanks(engine, peers) : null;
        this.lead = live == null ? 0 : live[0];
        this.remoteLead = remoteLive == null ? 0 : remoteLive.length == 0 ? -1 : remoteLive[0];
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

    /** A remote rank that is a blank (comm-mode BLANK): point-to-point treats it as PROC_NULL. */
    @Override
    boolean blankPeer(int peer) {
        return remoteLive != null && peer >= 0 && peer < peers.length && BlankColls.indexOf(remoteLive, peer) < 0;
    }

    // ------------------------------------------------------------------ construction

    /** MPI_INTERCOMM_CREATE (see {@link Comm#createIntercomm}). */
    static Intercomm create(Comm peer, Intracomm lc, int leader, int remoteLeader, int tag) throws MPIException {
        String op = "createIntercomm";
        // The leader's arguments are checked at the leader; an error reaches the whole local group
        // through the leader's first exchange (so no member waits for a leader that gave up).
        MPIException bad = lc.rank == leader ? checkLeaderArgs(peer, remoteLeader, tag, op) : null;
        int localId = lc.agreeContext(op, K_INTERCOMM, true);
        // This call, the same at every member of the group (and learned by the other group): the
        // local communicator and its construction count, both agreed in call order.
        long token = (long) lc.context << 32 | lc.creationCount() & 0xffffffffL;
        Intracomm hidden = lc.initDerived(new Intracomm(), localId, lc.rank, lc.world, lc.name + ".local");
        Engine e = lc.engine;
        boolean atomic = hidden.atomic;
        int remoteId = -1;
        long remoteToken = 0;
        int[] remote = null; // the other group, once known here and valid
        try {
            Swap lists = viaPeer(bad, peer, remoteLeader, tag, FaultPoint.INTERCOMM_LISTS);
            Swap ids = viaPeer(bad, peer, remoteLeader, tag, FaultPoint.INTERCOMM_IDS);
            long[] mine = new long[2 + lc.size];
            mine[0] = localId;
            mine[1] = token;
            for (int i = 0; i < lc.size; i++) mine[2 + i] = lc.world[i];
            long[] theirs = leaderSwap(hidden, leader, mine, lists, op);
            int[] them = new int[theirs.length - 2];
            for (int i = 0; i < them.length; i++) them[i] = (int) theirs[2 + i];
            for (int w : them) {
                for (int v : lc.world) {
                    if (v == w) {
                        throw lc.raise(MPI.ERR_COMM, op + ": the local and remote groups overlap (world rank " + w + ")");
                    }
                }
            }
            remoteId = (int) theirs[0];
            remoteToken = theirs[1];
            remote = them;
            // Both groups derive the same candidates from the two groups' (deterministic) local ids.
            boolean low = lc.world[0] < remote[0];
            int keyLow = low ? localId : remoteId, keyHigh = low ? remoteId : localId;
            for (int attempt = 0; ; attempt++) {
                int candidate = deriveContext(keyLow, keyHigh, attempt);
                boolean reserved = candidate > 2 && e.reserveContext(candidate);
                long[] busy = {reserved ? 0 : 1};
                try {
                    allMax(hidden, hidden.cc(), atomic, busy, op);
                    long[] other = leaderSwap(hidden, leader, busy, ids, op);
                    busy[0] = Math.max(busy[0], other[0]);
                    // ATOMIC: one outcome for both groups (each group's steps above are agreed inside it)
                    if (busy[0] == 0 && atomic) unionVote(lc, e.joinUnion(localId, token, lc.world, remoteId, remoteToken, remote), op);
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
            // ATOMIC: the other group may be waiting in the union agreement; this member votes 0 there
            if (atomic) e.refuseUnion(localId, token, lc.world, remoteId, remoteToken, remote);
            hidden.free();
            throw ex;
        }
    }

    /**
     * The leader's exchange with the other leader over the peer communicator ({@code bad}: its
     * arguments' error, raised instead); {@code step}: the fault point ({@code --inject at-step})
     * reached once the exchange is done, before the group hears of it.
     */
    private static Swap viaPeer(MPIException bad, Comm peer, int remoteLeader, int tag, String step) {
        return mine -> {
            if (bad != null) throw bad;
            long[] theirs = peerSwap(peer, remoteLeader, tag, mine);
            FaultPoint.step(peer.engine, step);
            return theirs;
        };
    }

    /**
     * ATOMIC {@code createIntercomm}: this member's part succeeded; the members of both groups
     * agree ({@link Engine#joinUnion}) whether every part did. Raises if one did not.
     */
    private static void unionVote(Intracomm lc, CommFt union, String op) throws MPIException {
        P2pException other;
        try {
            other = lc.atomicVote(union, Engine.UNION_INSTANCE, true);
        } catch (P2pException ex) {
            throw lc.raise(ex, op);
        }
        if (other != null) throw lc.raise(other, op);
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
        if (peer.blankPeer(remoteLeader)) {
            return peer.raise(MPI.ERR_RANK, op + ": remoteLeader " + remoteLeader + " is a blank of the peer communicator "
                    + peer.name + " (comm-mode BLANK): the leader must be a live member");
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
        Intracomm l = null;
        MPIException before = null;
        try {
            l = local.dupIntra(op);
        } catch (MPIException ex) {
            before = ex; // the whole group failed it (ATOMIC: agreed); the other group learns in agreeInter
        }
        try {
            int id = agreeInter(op, K_DUP, seq, blocking(), before);
            Intercomm c = new Intercomm();
            c.bindInter(l, id, peers, name + ".dup", errhandler);
            c.hints = hints;
            c.attrs = attrs.copy();
            return c;
        } catch (MPIException ex) {
            if (l != null) l.free();
            throw ex;
        }
    }

    /**
     * MPI_COMM_IDUP on an intercommunicator: returns at once an intercommunicator that is usable
     * once {@link #getRequest()} completes; the duplication (of the hidden local communicator,
     * then of the intercommunicator's context) runs on this intercommunicator's schedule with the
     * non-blocking collectives' tags, so blocking collectives started meanwhile do not disturb it.
     */
    @Override
    public Intercomm iDup() throws MPIException {
        String op = "iDup";
        check(op);
        int seq = nextCreation(), localSeq = local.nextCreation(); // at the call, in call order
        Intercomm c = new Intercomm();
        c.attrs = attrs.copy(); // at the call, as MPI_COMM_IDUP copies attributes
        c.hints = hints;
        c.request = submit(op, l -> {
            int localId = local.agreeContext(op, K_DUP, true, localSeq, l.inside, false);
            Intracomm l2 = local.initDerived(new Intracomm(), localId, local.rank, local.world, local.name + ".idup");
            try {
                int id = agreeInter(op, K_DUP, seq, l);
                c.bindInter(l2, id, peers, name + ".idup", errhandler);
            } catch (MPIException ex) {
                l2.free();
                throw ex;
            }
        });
        return c;
    }

    /**
     * MPI_INTERCOMM_MERGE: an intracommunicator of both groups; the group that passed
     * {@code high = false} comes first. If both groups pass the same value, the group whose
     * rank 0 has the lower world rank comes first. Collective over both groups.
     */
    public Intracomm merge(boolean high) throws MPIException {
        check("merge");
        int seq = nextCreation();
        Links l = blocking();
        long[] other;
        try {
            other = leaderSwap(local, l.inside(), l.vote(), lead, new long[] {high ? 1 : 0}, m -> interSwap("merge", m, l),
                    "merge");
        } catch (MPIException ex) {
            agreeInter("merge", K_MERGE, seq, l, ex); // ATOMIC: the other group learns of it there; raises
            throw ex;
        }
        boolean remoteHigh = other[0] != 0;
        boolean localFirst = high == remoteHigh ? lowGroup : !high;
        int[] members = new int[world.length + peers.length];
        int[] first = localFirst ? world : peers, second = localFirst ? peers : world;
        System.arraycopy(first, 0, members, 0, first.length);
        System.arraycopy(second, 0, members, first.length, second.length);
        int id = agreeInter("merge", K_MERGE, seq, l);
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
        return leaderSwap(group, group.cc(), group.atomic, leader, mine, swap, op);
    }

    /**
     * {@link #leaderSwap} whose broadcasts inside the group run over {@code inside} (the group's
     * channel as {@link Comm#dense} makes it: over its non-blank members); {@code vote}: each
     * broadcast is an ATOMIC collective of the group (blocking calls under {@code --coll-mode
     * atomic}; a non-blocking operation agrees once at its end instead).
     */
    private static long[] leaderSwap(Intracomm group, Channel inside, boolean vote, int leader, long[] mine, Swap swap,
                                     String op) throws MPIException {
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
        int root = group.rt(leader);
        bcastLongs(group, inside, vote, len, root, op);
        if (len[0] < 0) {
            if (failed != null) throw failed;
            throw group.raise(MPI.ERR_OTHER, op + ": the leader (rank " + leader + " of " + group.name
                    + ") could not exchange with the other group (see the error raised there)");
        }
        if (theirs == null) theirs = new long[(int) len[0]];
        bcastLongs(group, inside, vote, theirs, root, op);
        return theirs;
    }

    private static void bcastLongs(Intracomm group, Channel inside, boolean vote, long[] a, int root, String op)
            throws MPIException {
        if (a.length == 0) return;
        Comm.CollBody body = () -> collectives().bcast(inside, MemorySegment.ofArray(a), root);
        if (vote) group.runColl(op, body);
        else group.runPlain(op, body);
    }

    /** Element-wise MAX of {@code v} over {@code group} (its channel {@code inside}), in place. */
    private static void allMax(Intracomm group, Channel inside, boolean vote, long[] v, String op) throws MPIException {
        Reducer max = MPI.MAX.reducer(MPI.LONG, op);
        MemorySegment in = MemorySegment.ofArray(v.clone());
        Comm.CollBody body = () -> collectives().allReduce(inside, in, MemorySegment.ofArray(v), v.length, max);
        if (vote) group.runColl(op, body);
        else group.runPlain(op, body);
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
    private long[] interSwap(String op, long[] mine, Links l) throws MPIException {
        if (remoteLead < 0) return mine.clone(); // every remote member is a blank: nobody to swap with
        long[] n = new long[1];
        exchange(op, MemorySegment.ofArray(new long[] {mine.length}), MemorySegment.ofArray(n), T_LEN, l);
        long[] theirs = new long[(int) n[0]];
        exchange(op, MemorySegment.ofArray(mine), MemorySegment.ofArray(theirs), T_SWAP, l);
        return theirs;
    }

    /**
     * Sends {@code out} to and receives {@code in} from the remote leader (this is the local one).
     * Only the leaders take part, so never through ATOMIC's agreement of all members (which
     * would wait for members that are not in it): the outcome reaches them through the group's
     * broadcast in {@link #leaderSwap} and, under ATOMIC, the agreement that ends each step.
     */
    private void exchange(String op, MemorySegment out, MemorySegment in, int tag, Links l) throws MPIException {
        runPlain(op, () -> awaitAll(engine, recvFrom(l, remoteLead, tag, in), sendTo(l, remoteLead, tag, out)));
    }

    /**
     * Agrees on a context id derived from this intercommunicator's id and creation sequence,
     * free at every member of both groups (as {@link Comm#agreeContext} does for one group).
     */
    private int agreeInter(String op, int kind, int seq, Links l) throws MPIException {
        return agreeInter(op, kind, seq, l, null);
    }

    /**
     * {@link #agreeInter(String, int, int, Links)}; {@code before}: the error of an earlier step
     * of the same constructor at this process (null if none). Under ATOMIC ({@code l.vote()})
     * every member of both groups ends each attempt in one agreement over this
     * intercommunicator, so that all of them get the new communicator or all raise; a member
     * whose earlier step failed (as its whole group did: those steps are agreed in the group)
     * takes no step and votes no. Without ATOMIC such a member raises at once.
     */
    private int agreeInter(String op, int kind, int seq, Links l, MPIException before) throws MPIException {
        if (before != null && !l.vote()) throw before;
        for (int attempt = 0; ; attempt++) {
            int id = l.vote() ? atomicAgreementId() : 0; // taken in call order, as every member does
            int candidate = deriveContext(context, seq, attempt);
            boolean reserved = before == null && candidate > 2 && engine.reserveContext(candidate);
            long[] v = {candidate, -candidate, kind, -kind, reserved ? 0 : 1};
            MPIException failed = before;
            if (failed == null) {
                try {
                    allMax(local, l.inside, l.vote(), v, op);
                    long[] other = leaderSwap(local, l.inside, l.vote(), lead, v, m -> interSwap(op, m, l), op);
                    for (int i = 0; i < v.length; i++) v[i] = Math.max(v[i], other[i]);
                } catch (MPIException ex) {
                    failed = ex;
                }
            }
            if (l.vote()) failed = settle(id, failed, op);
            if (failed != null) {
                if (reserved) engine.releaseContext(candidate);
                throw failed;
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

    /**
     * ATOMIC: every member of both groups agrees (instance {@code id}) whether its part of a step
     * succeeded. Returns this member's own error, else the error of another member's part (so
     * that every member raises), else null.
     */
    private MPIException settle(int id, MPIException mine, String op) {
        try {
            P2pException other = atomicVote(id, mine == null);
            if (mine != null || other == null) return mine;
            return raise(other, op);
        } catch (P2pException e) {
            return mine != null ? mine : raise(e, op);
        }
    }

    // ------------------------------------------------------------------ traffic between the groups

    /**
     * Where a collective's messages go: between the groups on context {@code c + 1} with tags
     * offset by {@code tagOffset}, inside this group over {@code inside} (the hidden local
     * communicator's collective channel). Blocking collectives use offset 0 and the plain
     * channel; non-blocking ones {@link Schedule#TAG_OFFSET} and an offset channel, so the two
     * never match each other (the argument of the intracommunicator schedule).
     */
    record Links(int tagOffset, Channel inside, boolean vote, java.util.List<Buf> outs) {
        /**
         * A receive buffer is complete: copied out now, or under ATOMIC ({@code outs != null})
         * once every member agreed that the collective succeeded.
         */
        void done(Buf b) throws MPIException {
            if (outs != null) outs.add(b);
            else b.done();
        }
    }

    /**
     * Blocking operations: under ATOMIC each of their steps inside a group is agreed in the group
     * ({@code vote}), and results are copied out after the agreement that ends the operation.
     */
    private Links blocking() {
        return new Links(0, local.cc(), atomic, atomic ? new java.util.ArrayList<>() : null);
    }

    /** Non-blocking operations: under ATOMIC one agreement at the end ({@link Schedule#submitColl}). */
    private Links nonBlocking() {
        return new Links(Schedule.TAG_OFFSET, local.dense(Schedule.offsetChannel(local)), false,
                atomic ? new java.util.ArrayList<>() : null);
    }

    private org.ftmpi.p2p.Request sendTo(Links l, int dest, int tag, MemorySegment data) {
        return engine.send(context + 1, epoch, rank, dest, peers[dest], l.tagOffset + tag, data, 0, data.byteSize(),
                org.ftmpi.p2p.Request.STANDARD);
    }

    private org.ftmpi.p2p.Request recvFrom(Links l, int source, int tag, MemorySegment into) {
        return engine.receive(context + 1, source, peers[source], l.tagOffset + tag, into, 0, into.byteSize());
    }

    /** The communication of one collective, its arguments checked and buffers resolved. */
    @FunctionalInterface
    interface Plan {
        void run(Links l) throws P2pException, MPIException;
    }

    private static final Plan NOTHING = l -> { };

    /**
     * Runs a plan now (blocking form). Under FT-MPI ATOMIC the plan writes scratch copies of the
     * receive buffers; then every member of both groups agrees (over this intercommunicator)
     * whether every part succeeded, and only then are the results copied out; otherwise every
     * surviving member raises and no receive buffer changed.
     */
    private void run(String op, Plan plan) throws MPIException {
        Links l = blocking();
        int id = atomic ? atomicAgreementId() : 0;
        MPIException failed = null;
        try {
            plan.run(l);
        } catch (P2pException e) {
            failed = collFailure(e, op);
        } catch (RuntimeException e) {
            failed = handle(MPIException.of(MPI.ERR_OTHER, op + ": " + e));
        } catch (MPIException e) {
            failed = e;
        }
        if (atomic) failed = settle(id, failed, op);
        if (failed != null) throw failed;
        if (l.outs() != null) {
            try {
                for (Buf b : l.outs()) b.done();
            } catch (MPIException e) {
                throw handle(e);
            }
        }
    }

    /** Queues a plan on this communicator's schedule (non-blocking form; ATOMIC as for {@link #run}). */
    private Request submit(String op, Plan plan) throws MPIException {
        Links l = nonBlocking();
        if (atomic) return schedule().submitColl(this, op, ch -> plan.run(l), l.outs());
        return schedule().submit(this, op, ch -> plan.run(l));
    }

    private static final int NONE = 0, ROOT = 1, LEAF = 2;

    /**
     * This process's part in a rooted collective: the root, a member of the root's group, or of
     * the other group; none also when the root is a blank (its collectives return at once).
     */
    private int role(String op, int root) throws MPIException {
        if (root == MPI.ROOT) return ROOT;
        if (root == MPI.PROC_NULL) return NONE;
        if (root >= 0 && root < peers.length) return blankPeer(root) ? NONE : LEAF;
        throw raise(MPI.ERR_ROOT, op + ": root " + root + " is not MPI.ROOT, MPI.PROC_NULL or a rank of the remote group"
                + " of the intercommunicator " + name + " (size " + peers.length + ")");
    }

    private static MemorySegment scratch(long bytes) {
        return MemorySegment.ofArray(new byte[(int) bytes]);
    }

    /** A collective buffer: any buffer for the blocking forms, a direct one for the non-blocking ones. */
    private Buf cbuf(boolean nb, Object b, int count, Datatype type, String op, String arg) throws MPIException {
        // false: not registered with Comm.nbOut; under ATOMIC the plans hand their receive buffers to Links.done
        return nb ? NbColls.dbuf(this, (Buffer) b, count, type, op, arg, false) : buf(b, count, type, op, arg);
    }

    /** {@link #cbuf} of blocks {@code counts[i]} at {@code displs[i]}, one per remote rank. */
    private Buf cvbuf(boolean nb, Object b, int[] counts, int[] displs, Datatype type, String op, String countsArg,
                      String displsArg) throws MPIException {
        if (nb && b != null && !((Buffer) b).isDirect()) {
            throw raise(MPI.ERR_BUFFER, op + ": buf must be a direct buffer (see MPI.newByteBuffer and friends);"
                    + " non-blocking operations do not take heap buffers or arrays");
        }
        return vbuf(b, counts, displs, type, op, countsArg, displsArg, peers.length);
    }

    // ------------------------------------------------------------------ collectives (called from Comm)

    /** Nobody leaves before every member of both groups has entered. */
    private Plan barrierPlan() {
        return l -> {
            Dissemination.barrier(l.inside);
            if (rank == lead && remoteLead >= 0) {
                awaitAll(engine, recvFrom(l, remoteLead, T_SYNC, scratch(0)), sendTo(l, remoteLead, T_SYNC, scratch(0)));
            }
            Dissemination.barrier(l.inside);
        };
    }

    void interBarrier() throws MPIException {
        run("barrier", barrierPlan());
    }

    Request iInterBarrier() throws MPIException {
        check("iBarrier");
        return submit("iBarrier", barrierPlan());
    }

    /** The root sends to the remote leader, which broadcasts in its group. */
    private Plan bcastPlan(boolean nb, String op, Object buf, int count, Datatype type, int root) throws MPIException {
        check(op);
        int role = role(op, root);
        if (role == NONE) return NOTHING;
        Buf b = cbuf(nb, buf, count, type, op, null);
        if (role == ROOT) return remoteLead < 0 ? NOTHING : l -> awaitAll(engine, sendTo(l, remoteLead, T_DATA, b.seg));
        return l -> {
            if (rank == lead) awaitAll(engine, recvFrom(l, root, T_DATA, b.seg));
            collectives().bcast(l.inside, b.seg, 0);
            l.done(b);
        };
    }

    void interBcast(Object buf, int count, Datatype type, int root) throws MPIException {
        run("bcast", bcastPlan(false, "bcast", buf, count, type, root));
    }

    Request iInterBcast(Buffer buf, int count, Datatype type, int root) throws MPIException {
        return submit("iBcast", bcastPlan(true, "iBcast", buf, count, type, root));
    }

    /** The root receives the remote leader's reduction of the other group's data. */
    private Plan reducePlan(boolean nb, String op, Object sendbuf, Object recvbuf, int count, Datatype type, Op o,
                            int root) throws MPIException {
        check(op);
        int role = role(op, root);
        if (role == NONE) return NOTHING;
        Reducer red = reducerFor(o, type, op);
        if (role == ROOT) {
            Buf r = cbuf(nb, recvbuf, count, type, op, null);
            if (remoteLead < 0) return NOTHING;
            return l -> {
                awaitAll(engine, recvFrom(l, remoteLead, T_DATA, r.seg));
                l.done(r);
            };
        }
        Buf s = cbuf(nb, sendbuf, count, type, op, null);
        MemorySegment acc = rank == lead ? scratch(s.seg.byteSize()) : null;
        return l -> {
            collectives().reduce(l.inside, s.seg, acc, count, red, 0);
            if (rank == lead) awaitAll(engine, sendTo(l, root, T_DATA, acc));
        };
    }

    void interReduce(Object sendbuf, Object recvbuf, int count, Datatype type, Op op, int root) throws MPIException {
        run("reduce", reducePlan(false, "reduce", sendbuf, recvbuf, count, type, op, root));
    }

    Request iInterReduce(Buffer sendbuf, Buffer recvbuf, int count, Datatype type, Op op, int root)
            throws MPIException {
        return submit("iReduce", reducePlan(true, "iReduce", sendbuf, recvbuf, count, type, op, root));
    }

    /**
     * Each group gets the other group's reduction (allReduce: {@code counts == null}, all of
     * it; reduceScatter: scattered over this group by {@code counts}).
     */
    private Plan allReducePlan(boolean nb, String op, Object sendbuf, Object recvbuf, int count, int[] counts,
                               Datatype type, Op o) throws MPIException {
        check(op);
        Reducer red = reducerFor(o, type, op);
        int total = counts == null ? count : total(op, counts);
        Buf s = cbuf(nb, sendbuf, total, type, op, counts == null ? null : "recvcounts");
        Buf r = counts == null ? cbuf(nb, recvbuf, count, type, op, null)
                : cbuf(nb, recvbuf, counts[rank], type, op, "recvcounts[" + rank + "]");
        long bytes = s.seg.byteSize();
        int[] cs = counts == null ? null : counts.clone();
        if (remoteLead < 0) return NOTHING; // every remote member is a blank: no result, nothing touched
        return l -> {
            MemorySegment acc = rank == lead ? scratch(bytes) : null;
            collectives().reduce(l.inside, s.seg, acc, total, red, 0);
            if (cs == null) {
                if (rank == lead) awaitAll(engine, recvFrom(l, remoteLead, T_DATA, r.seg), sendTo(l, remoteLead, T_DATA, acc));
                collectives().bcast(l.inside, r.seg, 0);
            } else {
                MemorySegment theirs = rank == lead ? scratch(bytes) : null;
                MemorySegment[] blocks = null;
                if (rank == lead) {
                    awaitAll(engine, recvFrom(l, remoteLead, T_DATA, theirs), sendTo(l, remoteLead, T_DATA, acc));
                    blocks = new MemorySegment[size];
                    long off = 0;
                    for (int i = 0; i < size; i++) {
                        long len = (long) cs[i] * type.sizeBytes;
                        blocks[i] = theirs.asSlice(off, len);
                        off += len;
                    }
                }
                collectives().scatterv(l.inside, sel(blocks), r.seg, 0); // blanks' blocks are not sent
            }
            l.done(r);
        };
    }

    void interAllReduce(Object sendbuf, Object recvbuf, int count, Datatype type, Op op) throws MPIException {
        run("allReduce", allReducePlan(false, "allReduce", sendbuf, recvbuf, count, null, type, op));
    }

    Request iInterAllReduce(Buffer sendbuf, Buffer recvbuf, int count, Datatype type, Op op) throws MPIException {
        return submit("iAllReduce", allReducePlan(true, "iAllReduce", sendbuf, recvbuf, count, null, type, op));
    }

    /** The result for this group (the other group's reduction) is scattered by {@code recvcounts}. */
    void interReduceScatter(Object sendbuf, Object recvbuf, int[] recvcounts, Datatype type, Op op) throws MPIException {
        run("reduceScatter", allReducePlan(false, "reduceScatter", sendbuf, recvbuf, 0, recvcounts, type, op));
    }

    Request iInterReduceScatter(Buffer sendbuf, Buffer recvbuf, int[] recvcounts, Datatype type, Op op)
            throws MPIException {
        return submit("iReduceScatter", allReducePlan(true, "iReduceScatter", sendbuf, recvbuf, 0, recvcounts, type, op));
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

    /**
     * Gather ({@code gather = true}: the root receives one block from each member of the other
     * group) or scatter (the root sends one block to each), linearly; blocks {@code counts[i]}
     * at {@code displs[i]} of the root's buffer. {@code rootType == null}: a non-root form.
     */
    private Plan rootedPlan(boolean nb, boolean gather, String op, Object mine, int myCount, Datatype myType,
                            Object rootBuf, int[] counts, int[] displs, Datatype rootType, int root)
            throws MPIException {
        check(op);
        int role = role(op, root);
        if (role == NONE) return NOTHING;
        if (role == LEAF) {
            Buf b = cbuf(nb, mine, myCount, myType, op, gather ? "sendcount" : "recvcount");
            if (gather) return l -> awaitAll(engine, sendTo(l, root, T_DATA, b.seg));
            return l -> {
                awaitAll(engine, recvFrom(l, root, T_DATA, b.seg));
                l.done(b);
            };
        }
        if (rootType == null) {
            throw raise(MPI.ERR_ROOT, op + ": the root (MPI.ROOT) of an intercommunicator " + op + " must pass the"
                    + (gather ? " receive" : " send") + " buffer (the full form)");
        }
        String side = gather ? "recvcount" : "sendcount";
        Buf r = cvbuf(nb, rootBuf, counts, displs, rootType, op, side, "displs");
        MemorySegment[] blocks = vblocks(r.seg, counts, displs, rootType, peers.length);
        return l -> {
            java.util.List<org.ftmpi.p2p.Request> rs = new java.util.ArrayList<>(blocks.length);
            for (int i = 0; i < blocks.length; i++) {
                if (blankPeer(i)) continue; // a blank's block: untouched (gather), not sent (scatter)
                rs.add(gather ? recvFrom(l, i, T_DATA, blocks[i]) : sendTo(l, i, T_DATA, blocks[i]));
            }
            awaitAll(engine, rs.toArray(org.ftmpi.p2p.Request[]::new));
            if (gather) l.done(r);
        };
    }

    private Plan gatherPlan(boolean nb, String op, Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf,
                            int recvcount, Datatype recvtype, int root) throws MPIException {
        int[][] cd = role(op, root) == ROOT ? uniform(op, "recvcount", recvcount) : new int[2][];
        return rootedPlan(nb, true, op, sendbuf, sendcount, sendtype, recvbuf, cd[0], cd[1], recvtype, root);
    }

    private Plan scatterPlan(boolean nb, String op, Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf,
                             int recvcount, Datatype recvtype, int root) throws MPIException {
        int[][] cd = role(op, root) == ROOT ? uniform(op, "sendcount", sendcount) : new int[2][];
        return rootedPlan(nb, false, op, recvbuf, recvcount, recvtype, sendbuf, cd[0], cd[1], sendtype, root);
    }

    void interGather(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int recvcount,
                     Datatype recvtype, int root) throws MPIException {
        run("gather", gatherPlan(false, "gather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
    }

    Request iInterGather(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf, int recvcount,
                         Datatype recvtype, int root) throws MPIException {
        return submit("iGather", gatherPlan(true, "iGather", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                recvtype, root));
    }

    void interGatherv(String op, Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int[] recvcount,
                      int[] displs, Datatype recvtype, int root) throws MPIException {
        run(op, rootedPlan(false, true, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, displs, recvtype, root));
    }

    Request iInterGatherv(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf, int[] recvcount,
                          int[] displs, Datatype recvtype, int root) throws MPIException {
        return submit("iGatherv", rootedPlan(true, true, "iGatherv", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                displs, recvtype, root));
    }

    void interScatter(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int recvcount,
                      Datatype recvtype, int root) throws MPIException {
        run("scatter", scatterPlan(false, "scatter", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
    }

    Request iInterScatter(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf, int recvcount,
                          Datatype recvtype, int root) throws MPIException {
        return submit("iScatter", scatterPlan(true, "iScatter", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                recvtype, root));
    }

    void interScatterv(String op, Object sendbuf, int[] sendcount, int[] displs, Datatype sendtype, Object recvbuf,
                       int recvcount, Datatype recvtype, int root) throws MPIException {
        run(op, rootedPlan(false, false, op, recvbuf, recvcount, recvtype, sendbuf, sendcount, displs, sendtype, root));
    }

    Request iInterScatterv(Buffer sendbuf, int[] sendcount, int[] displs, Datatype sendtype, Buffer recvbuf,
                           int recvcount, Datatype recvtype, int root) throws MPIException {
        return submit("iScatterv", rootedPlan(true, false, "iScatterv", recvbuf, recvcount, recvtype, sendbuf,
                sendcount, displs, sendtype, root));
    }

    /**
     * Every member receives one block from each member of the other group: {@code recvcount}
     * each (allGather, {@code recvcounts == null}) or {@code recvcounts[i]} at {@code displs[i]}.
     */
    private Plan allGatherPlan(boolean nb, String op, Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf,
                               int[] recvcounts, int[] displs, int recvcount, Datatype recvtype) throws MPIException {
        check(op);
        Buf s = cbuf(nb, sendbuf, sendcount, sendtype, op, "sendcount");
        int[][] cd = recvcounts == null ? uniform(op, "recvcount", recvcount) : new int[][] {recvcounts, displs};
        Buf r = cvbuf(nb, recvbuf, cd[0], cd[1], recvtype, op, "recvcount", "displs");
        MemorySegment[] in = vblocks(r.seg, cd[0], cd[1], recvtype, peers.length);
        MemorySegment[] out = new MemorySegment[peers.length];
        java.util.Arrays.fill(out, s.seg);
        return swapPlan(out, in, r);
    }

    void interAllGatherv(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int[] recvcounts,
                         int[] displs, int recvcount, Datatype recvtype) throws MPIException {
        String op = recvcounts == null ? "allGather" : "allGatherv";
        run(op, allGatherPlan(false, op, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvcount, recvtype));
    }

    Request iInterAllGatherv(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf, int[] recvcounts,
                             int[] displs, int recvcount, Datatype recvtype) throws MPIException {
        String op = recvcounts == null ? "iAllGather" : "iAllGatherv";
        return submit(op, allGatherPlan(true, op, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvcount,
                recvtype));
    }

    /** Block {@code j} of the send buffer goes to remote rank {@code j}; block {@code j} of the receive buffer comes from it. */
    private Plan allToAllPlan(boolean nb, String op, Object sendbuf, int[] sendcounts, int[] sdispls, int sendcount,
                              Datatype sendtype, Object recvbuf, int[] recvcounts, int[] rdispls, int recvcount,
                              Datatype recvtype) throws MPIException {
        check(op);
        int[][] s = sendcounts == null ? uniform(op, "sendcount", sendcount) : new int[][] {sendcounts, sdispls};
        int[][] r = recvcounts == null ? uniform(op, "recvcount", recvcount) : new int[][] {recvcounts, rdispls};
        Buf sb = cvbuf(nb, sendbuf, s[0], s[1], sendtype, op, "sendcount", "sdispls");
        Buf rb = cvbuf(nb, recvbuf, r[0], r[1], recvtype, op, "recvcount", "rdispls");
        return swapPlan(vblocks(sb.seg, s[0], s[1], sendtype, peers.length), vblocks(rb.seg, r[0], r[1], recvtype, peers.length),
                rb);
    }

    void interAllToAllv(Object sendbuf, int[] sendcounts, int[] sdispls, int sendcount, Datatype sendtype,
                        Object recvbuf, int[] recvcounts, int[] rdispls, int recvcount, Datatype recvtype)
            throws MPIException {
        String op = sendcounts == null ? "allToAll" : "allToAllv";
        run(op, allToAllPlan(false, op, sendbuf, sendcounts, sdispls, sendcount, sendtype, recvbuf, recvcounts, rdispls,
                recvcount, recvtype));
    }

    Request iInterAllToAllv(Buffer sendbuf, int[] sendcounts, int[] sdispls, int sendcount, Datatype sendtype,
                            Buffer recvbuf, int[] recvcounts, int[] rdispls, int recvcount, Datatype recvtype)
            throws MPIException {
        String op = sendcounts == null ? "iAllToAll" : "iAllToAllv";
        return submit(op, allToAllPlan(true, op, sendbuf, sendcounts, sdispls, sendcount, sendtype, recvbuf, recvcounts,
                rdispls, recvcount, recvtype));
    }

    /**
     * Posts every receive, then every send, then waits (linear, for every pair of the two
     * groups); a blank remote member gets nothing and its receive block stays untouched.
     */
    private Plan swapPlan(MemorySegment[] out, MemorySegment[] in, Buf done) {
        return l -> {
            int n = peers.length;
            java.util.List<org.ftmpi.p2p.Request> rs = new java.util.ArrayList<>(2 * n);
            for (int j = 0; j < n; j++) if (!blankPeer(j)) rs.add(recvFrom(l, j, T_DATA, in[j]));
            for (int k = 0; k < n; k++) {
                int j = (rank + k) % n; // stagger the destinations
                if (!blankPeer(j)) rs.add(sendTo(l, j, T_DATA, out[j]));
            }
            awaitAll(engine, rs.toArray(org.ftmpi.p2p.Request[]::new));
            if (done != null) l.done(done);
        };
    }

    /** allToAllw between the groups (blocks already resolved by {@link Comm}). */
    void swapBlocks(String op, MemorySegment[] out, MemorySegment[] in) throws MPIException {
        run(op, swapPlan(out, in, null));
    }

    /** iAllToAllw between the groups; {@code received}: the receive blocks, finished (and under ATOMIC copied out) at the end. */
    Request iSwapBlocks(String op, MemorySegment[] out, MemorySegment[] in, Buf[] received) throws MPIException {
        Plan p = swapPlan(out, in, null);
        return submit(op, l -> {
            p.run(l);
            for (Buf b : received) l.done(b);
        });
    }
}
