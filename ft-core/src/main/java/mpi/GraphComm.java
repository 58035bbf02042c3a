package mpi;

/**
 * A communicator with a graph topology ({@link Intracomm#createGraph}) or a distributed graph
 * topology ({@link Intracomm#createDistGraph}, {@link Intracomm#createDistGraphAdjacent}), as
 * in Open MPI's bindings, which use this one class for both. {@code reorder} is accepted and
 * ignored: ranks keep their order.
 */
public final class GraphComm extends Intracomm {
    /** Graph topology: cumulative degrees and edges (null for a distributed graph). */
    private final int[] index, edges;
    /** Distributed graph topology: this process's in- and out-edges (null for a graph). */
    private final int[] sources, sourceWeights, destinations, destWeights;
    private final boolean weighted;

    private GraphComm(int[] index, int[] edges, int[] sources, int[] sourceWeights, int[] destinations,
                      int[] destWeights, boolean weighted) {
        this.index = index;
        this.edges = edges;
        this.sources = sources;
        this.sourceWeights = sourceWeights;
        this.destinations = destinations;
        this.destWeights = destWeights;
        this.weighted = weighted;
    }

    static GraphComm graph(int[] index, int[] edges) {
        return new GraphComm(index, edges, null, null, null, null, false);
    }

    static GraphComm distGraph(int[] sources, int[] sourceWeights, int[] destinations, int[] destWeights,
                               boolean weighted) {
        return new GraphComm(null, null, sources, sourceWeights, destinations, destWeights, weighted);
    }

    @Override
    int topologyKind() {
        return index != null ? MPI.GRAPH : MPI.DIST_GRAPH;
    }

    @Override
    Intracomm newSameKind() {
        return new GraphComm(index, edges, sources, sourceWeights, destinations, destWeights, weighted);
    }

    /** MPI_COMM_DUP, keeping the topology. */
    @Override
    public GraphComm clone() {
        return (GraphComm) super.clone();
    }

    /** MPI_COMM_DUP, keeping the topology. */
    @Override
    public GraphComm dup() throws MPIException {
        return (GraphComm) dupIntra("dup");
    }

    /** MPI_COMM_IDUP, keeping the topology. */
    @Override
    public GraphComm iDup() throws MPIException {
        return (GraphComm) NbColls.iDup(this);
    }

    /** MPI_COMM_DUP_WITH_INFO, keeping the topology. */
    @Override
    public GraphComm dupWithInfo(Info info) throws MPIException {
        return (GraphComm) super.dupWithInfo(info);
    }

    /** MPI_GRAPHDIMS_GET and MPI_GRAPH_GET (graph topology only). */
    public GraphParms getDims() throws MPIException {
        check("getDims");
        requireGraph("getDims");
        return new GraphParms(index.clone(), edges.clone());
    }

    /** MPI_GRAPH_NEIGHBORS (graph topology only). */
    public int[] getNeighbors(int rank) throws MPIException {
        check("getNeighbors");
        requireGraph("getNeighbors");
        if (rank < 0 || rank >= size) {
            throw raise(MPI.ERR_RANK, "getNeighbors: rank " + rank + " is not a rank of " + name + " (size " + size + ")");
        }
        int from = rank == 0 ? 0 : index[rank - 1];
        return java.util.Arrays.copyOfRange(edges, from, index[rank]);
    }

    /** MPI_DIST_GRAPH_NEIGHBORS (distributed graph topology only). */
    public DistGraphNeighbors getDistGraphNeighbors() throws MPIException {
        check("getDistGraphNeighbors");
        if (index != null) {
            throw raise(MPI.ERR_TOPOLOGY, "getDistGraphNeighbors: " + name + " has a graph topology, not a distributed"
                    + " graph topology (use getNeighbors)");
        }
        return new DistGraphNeighbors(sources.clone(), sourceWeights.clone(), destinations.clone(),
                destWeights.clone(), weighted);
    }

    /** MPI_GRAPH_MAP: the rank the calling process would have in such a graph, or {@link MPI#UNDEFINED}. */
    public int map(int[] index, int[] edges) throws MPIException {
        check("map");
        int n = checkGraph("map", index, edges);
        return rank < n ? rank : MPI.UNDEFINED;
    }

    private void requireGraph(String op) throws MPIException {
        if (index == null) {
            throw raise(MPI.ERR_TOPOLOGY, op + ": " + name + " has a distributed graph topology, not a graph topology"
                    + " (use getDistGraphNeighbors)");
        }
    }

    @Override
    Topologies.Neighborhood neighborhood(String op) {
        if (index != null) {
            int from = rank == 0 ? 0 : index[rank - 1];
            return Topologies.Neighborhood.symmetric(java.util.Arrays.copyOfRange(edges, from, index[rank]));
        }
        return new Topologies.Neighborhood(sources, new int[sources.length], destinations, new int[destinations.length]);
    }
}
