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
 * Comm}, as in Open MPI's bindings), {@link #scan}/{@link #exScan} and their non-blocking
 * forms, communicator construction ({@link #dup}, {@link #iDup}, {@link #split},
 * {@link #splitType}, {@link #create}) and the topology constructors ({@link #createCart},
 * {@link #createGraph}, {@link #createDistGraph}, {@link #createDistGraphAdjacent}).
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
        for (int i = 0; i < size; i++) all[2 * i] = MPI.UNDEFINED; // BLANK: blanks stay out of every colour
        all[2 * rank] = colour;
        all[2 * rank + 1] = key;
        MemorySegment seg = MemorySegment.ofArray(all);
        MemorySegment[] blocks = new MemorySegment[size];
        for (int i = 0; i < size; i++) blocks[i] = seg.asSlice(8L * i, 8);
        try {
            runColl("split", () -> collectives().allGatherv(cc(), null, sel(blocks)));
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

    /** Tags of {@link #createGroup}'s agreement: {@code T_CREATE_GROUP + (tag mod 2^14) * 2^16 + step}. */
    private static final int T_CREATE_GROUP = 1 << 30;

    /**
     * MPI_COMM_CREATE_GROUP: a communicator of the processes of {@code group} (a subset of this
     * communicator's group), collective over {@code group} only: the other members of this
     * communicator do not take part. {@code tag} tells apart concurrent calls on this
     * communicator (the members of one call pass the same tag). A process that is not in
     * {@code group}, or an empty group, gets {@code null} (MPI_COMM_NULL) at once.
     */
    public final Intracomm createGroup(Group group, int tag) throws MPIException {
        String op = "createGroup";
        check(op);
        if (group == null || group.isNull()) throw raise(MPI.ERR_GROUP, op + ": group is null or freed");
        if (tag < 0 || tag > MPI.TAG_UB_VALUE) throw raise(MPI.ERR_TAG, op + ": tag " + tag + " is negative");
        int[] members = group.worldRanks(op).clone();
        Set<Integer> mine = new HashSet<>();
        for (int w : world) mine.add(w);
        for (int w : members) {
            if (!mine.contains(w)) {
                throw raise(MPI.ERR_GROUP, op + ": group contains world rank " + w + ", which is not in " + name);
            }
        }
        int newRank = -1;
        for (int i = 0; i < members.length; i++) if (members[i] == world[rank]) newRank = i;
        if (newRank < 0) return null;
        // Members derive candidates from this id, the group and the tag; the agreement runs over
        // the group alone (this communicator's collective context, tags of their own).
        int key = java.util.Arrays.hashCode(members) * 31 + tag;
        org.ftmpi.coll.Channel ch = Schedule.subgroupChannel(this, members, newRank,
                T_CREATE_GROUP + ((tag & 0x3FFF) << 16));
        int seq = 0x200000 ^ key;
        Voter voter = atomic ? groupVoter(members, deriveContext(context, seq, 0) | 1) : null;
        int id = agreeContext(op, ((long) tag << 32) ^ (key & 0xFFFFFFFFL), true, seq, ch, voter, op + ": the members"
                + " of the group did not pass the same group and tag, or did not call createGroup on " + name
                + " in the same order");
        return derived(id, newRank, members, name + ".createGroup(" + tag + ")");
    }

    /**
     * FT-MPI ATOMIC for {@code createGroup}, collective over the group only: its steps are agreed
     * over the group's members (not over this communicator, whose other members take no part),
     * on an FT state of their own with id {@code ftId} (odd: communicators' ids are even), every
     * member derives from this communicator, the group and the tag. The members number those
     * agreements in call order, as every member of the group does.
     */
    private Voter groupVoter(int[] members, int ftId) {
        org.ftmpi.p2p.CommFt f = engine.registerComm(ftId, members);
        return ok -> atomicVote(f, nextGroupAgreement(ftId) << 6, ok);
    }

    /** MPI_COMM_DUP_WITH_INFO: a duplicate whose hints are those of {@code info}. */
    @Override
    public Intracomm dupWithInfo(Info info) throws MPIException {
        return (Intracomm) super.dupWithInfo(info);
    }

    /**
     * MPI_COMM_SPLIT_TYPE: {@link MPI#COMM_TYPE_SHARED} groups the processes on the same host
     * (the host names the runtime reports), ordered by {@code key} then rank;
     * {@link MPI#UNDEFINED} returns {@code null}.
     */
    public final Intracomm splitType(int splitType, int key, Info info) throws MPIException {
        check("splitType");
        if (splitType == MPI.UNDEFINED) return split(MPI.UNDEFINED, key);
        if (splitType != MPI.COMM_TYPE_SHARED) {
            throw raise(MPI.ERR_ARG, "splitType: splitType " + splitType + " is not MPI.COMM_TYPE_SHARED or MPI.UNDEFINED");
        }
        String[] hosts = engine.job().hosts();
        String mine = hosts[world[rank]];
        int colour = 0;
        while (!hosts[world[colour]].equals(mine)) colour++;
        Intracomm c = split(colour, key);
        c.name = name + ".splitType(shared)";
        return c;
    }

    // ------------------------------------------------------------------ topologies

    /**
     * MPI_CART_CREATE: the first {@code prod(dims)} ranks form the grid, row-major; the others
     * get {@code null}. {@code reorder} is ignored.
     */
    public final CartComm createCart(int[] dims, boolean[] periods, boolean reorder) throws MPIException {
        check("createCart");
        int n = (int) checkGrid("createCart", dims, periods, size);
        return topoMembers("createCart", Topologies.K_CART, n, new CartComm(dims.clone(), periods.clone()), ".cart");
    }

    /**
     * MPI_GRAPH_CREATE: node {@code i} is rank {@code i}; ranks beyond {@code index.length} get
     * {@code null}. {@code reorder} is ignored.
     */
    public final GraphComm createGraph(int[] index, int[] edges, boolean reorder) throws MPIException {
        check("createGraph");
        int n = checkGraph("createGraph", index, edges);
        GraphComm g = GraphComm.graph(index.clone(), java.util.Arrays.copyOf(edges, n == 0 ? 0 : index[n - 1]));
        return topoMembers("createGraph", Topologies.K_GRAPH, n, g, ".graph");
    }

    /** MPI_DIST_GRAPH_CREATE_ADJACENT with weights. */
    public final GraphComm createDistGraphAdjacent(int[] sources, int[] sourceWeights, int[] destinations,
                                                   int[] destWeights, Info info, boolean reorder) throws MPIException {
        check("createDistGraphAdjacent");
        return adjacent(sources, sourceWeights, destinations, destWeights, true);
    }

    /** MPI_DIST_GRAPH_CREATE_ADJACENT with MPI_UNWEIGHTED. */
    public final GraphComm createDistGraphAdjacent(int[] sources, int[] destinations, Info info, boolean reorder)
            throws MPIException {
        check("createDistGraphAdjacent");
        return adjacent(sources, null, destinations, null, false);
    }

    /** MPI_DIST_GRAPH_CREATE with weights: edges {@code sources[i] -> destinations[...]}, given by any process. */
    public final GraphComm createDistGraph(int[] sources, int[] degrees, int[] destinations, int[] weights,
                                           Info info, boolean reorder) throws MPIException {
        check("createDistGraph");
        return DistGraphs.create(this, sources, degrees, destinations, weights, true);
    }

    /** MPI_DIST_GRAPH_CREATE with MPI_UNWEIGHTED. */
    public final GraphComm createDistGraph(int[] sources, int[] degrees, int[] destinations, Info info,
                                           boolean reorder) throws MPIException {
        check("createDistGraph");
        return DistGraphs.create(this, sources, degrees, destinations, null, false);
    }

    private GraphComm adjacent(int[] sources, int[] sw, int[] destinations, int[] dw, boolean weighted)
            throws MPIException {
        String op = "createDistGraphAdjacent";
        int[] s = checkRanks(op, "sources", sources), d = checkRanks(op, "destinations", destinations);
        int[] sWeights = DistGraphs.weights(this, op, "sourceWeights", sw, s.length, weighted);
        int[] dWeights = DistGraphs.weights(this, op, "destWeights", dw, d.length, weighted);
        return topoMembers(op, Topologies.K_DIST_GRAPH, size,
                GraphComm.distGraph(s, sWeights, d, dWeights, weighted), ".distGraph");
    }

    /** A copy of {@code ranks}, each checked to be a rank of this communicator. */
    final int[] checkRanks(String op, String arg, int[] ranks) throws MPIException {
        if (ranks == null) throw raise(MPI.ERR_ARG, op + ": " + arg + " is null");
        for (int i = 0; i < ranks.length; i++) {
            if (ranks[i] < 0 || ranks[i] >= size) {
                throw raise(MPI.ERR_RANK, op + ": " + arg + "[" + i + "] = " + ranks[i] + " is not a rank of " + name
                        + " (size " + size + ")");
            }
        }
        return ranks.clone();
    }

    /** Agrees on a context id and binds {@code shell} at the first {@code members} ranks; others get null. */
    final <C extends Intracomm> C topoMembers(String op, int kind, int members, C shell, String suffix)
            throws MPIException {
        int id = agreeContext(op, kind, rank < members);
        if (rank >= members) return null;
        return initDerived(shell, id, rank, java.util.Arrays.copyOf(world, members), name + suffix);
    }

    /** Moves the binding of {@code from} (fresh from split) into {@code into}; null stays null. */
    static <C extends Intracomm> C adopt(Intracomm from, C into, String name) {
        if (from == null) return null;
        into.bind(from.engine, from.context, from.rank, from.world, name, false);
        into.errhandler = from.errhandler;
        return into;
    }

    /** Checks a grid for this communicator; returns its number of points. */
    final long checkGrid(String op, int[] dims, boolean[] periods, int size) throws MPIException {
        if (dims == null) throw raise(MPI.ERR_DIMS, op + ": dims is null");
        if (periods == null || periods.length != dims.length) {
            throw raise(MPI.ERR_ARG, op + ": periods must have " + dims.length + " entries (one per dimension), not "
                    + (periods == null ? "null" : periods.length));
        }
        for (int i = 0; i < dims.length; i++) {
            if (dims[i] <= 0) throw raise(MPI.ERR_DIMS, op + ": dims[" + i + "] is " + dims[i] + "; it must be positive");
        }
        long n = Topologies.product(dims);
        if (n < 0 || n > size) {
            throw raise(MPI.ERR_DIMS, op + ": the grid " + java.util.Arrays.toString(dims) + " has more points than the "
                    + size + " processes of " + name);
        }
        return n;
    }

    /** Checks a graph (cumulative degrees, edges) for this communicator; returns its number of nodes. */
    final int checkGraph(String op, int[] index, int[] edges) throws MPIException {
        if (index == null) throw raise(MPI.ERR_ARG, op + ": index is null");
        if (edges == null) throw raise(MPI.ERR_ARG, op + ": edges is null");
        int n = index.length;
        if (n > size) {
            throw raise(MPI.ERR_ARG, op + ": index has " + n + " nodes; " + name + " has only " + size + " processes");
        }
        for (int i = 0; i < n; i++) {
            if (index[i] < (i == 0 ? 0 : index[i - 1])) {
                throw raise(MPI.ERR_ARG, op + ": index[" + i + "] = " + index[i] + " is negative or decreasing");
            }
        }
        int m = n == 0 ? 0 : index[n - 1];
        if (m > edges.length) throw raise(MPI.ERR_ARG, op + ": index promises " + m + " edges; edges has " + edges.length);
        for (int i = 0; i < m; i++) {
            if (edges[i] < 0 || edges[i] >= n) {
                throw raise(MPI.ERR_ARG, op + ": edges[" + i + "] = " + edges[i] + " is not a node (0.." + (n - 1) + ")");
            }
        }
        return n;
    }

    // ------------------------------------------------------------------ prefix reductions

    /** MPI_SCAN: inclusive prefix reduction in rank order. */
    public final void scan(Object sendbuf, Object recvbuf, int count, Datatype type, Op op) throws MPIException {
        check("scan");
        Reducer red = reducerFor(op, type, "scan");
        Buf s = buf(sendbuf, count, type, "scan", null);
        Buf r = buf(recvbuf, count, type, "scan", null);
        runColl("scan", () -> collectives().scan(cc(), s.seg, r.seg, count, red));
        r.done();
    }

    /** MPI_SCAN with MPI_IN_PLACE. */
    public final void scan(Object buf, int count, Datatype type, Op op) throws MPIException {
        check("scan");
        Reducer red = reducerFor(op, type, "scan");
        Buf b = buf(buf, count, type, "scan", null);
        MemorySegment send = b.copy();
        runColl("scan", () -> collectives().scan(cc(), send, b.seg, count, red));
        b.done();
    }

    /** MPI_EXSCAN: exclusive prefix reduction; {@code recvbuf} of rank 0 is left unchanged. */
    public final void exScan(Object sendbuf, Object recvbuf, int count, Datatype type, Op op) throws MPIException {
        check("exScan");
        Reducer red = reducerFor(op, type, "exScan");
        Buf s = buf(sendbuf, count, type, "exScan", null);
        Buf r = buf(recvbuf, count, type, "exScan", null);
        runColl("exScan", () -> collectives().exScan(cc(), s.seg, r.seg, count, red));
        r.done();
    }

    /** MPI_EXSCAN with MPI_IN_PLACE. */
    public final void exScan(Object buf, int count, Datatype type, Op op) throws MPIException {
        check("exScan");
        Reducer red = reducerFor(op, type, "exScan");
        Buf b = buf(buf, count, type, "exScan", null);
        MemorySegment send = b.copy();
        runColl("exScan", () -> collectives().exScan(cc(), send, b.seg, count, red));
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
