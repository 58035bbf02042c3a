package mpi;

/**
 * Adjacency of the calling process in a distributed graph topology
 * ({@link GraphComm#getDistGraphNeighbors()}). For a graph created without weights
 * {@link #isWeighted()} is false and every weight reads 1.
 */
public final class DistGraphNeighbors {
    private final int[] sources;
    private final int[] sourceWeights;
    private final int[] destinations;
    private final int[] destWeights;
    private final boolean weighted;

    DistGraphNeighbors(int[] sources, int[] sourceWeights, int[] destinations, int[] destWeights, boolean weighted) {
        this.sources = sources;
        this.sourceWeights = sourceWeights;
        this.destinations = destinations;
        this.destWeights = destWeights;
        this.weighted = weighted;
    }

    /** Number of edges into the calling process. */
    public int getInDegree() {
        return sources.length;
    }

    /** Number of edges out of the calling process. */
    public int getOutDegree() {
        return destinations.length;
    }

    /** False if the graph was created without weights (MPI_UNWEIGHTED). */
    public boolean isWeighted() {
        return weighted;
    }

    /** Source of in-edge {@code i}. */
    public int getSource(int i) {
        return sources[i];
    }

    /** Weight of in-edge {@code i}. */
    public int getSourceWeight(int i) {
        return sourceWeights[i];
    }

    /** Destination of out-edge {@code i}. */
    public int getDestination(int i) {
        return destinations[i];
    }

    /** Weight of out-edge {@code i}. */
    public int getDestinationWeight(int i) {
        return destWeights[i];
    }
}
