package mpi;

/** Graph topology information of a communicator ({@link GraphComm#getDims()}). */
public final class GraphParms {
    private final int[] index;
    private final int[] edges;

    GraphParms(int[] index, int[] edges) {
        this.index = index;
        this.edges = edges;
    }

    /** Number of nodes. */
    public int getIndexCount() {
        return index.length;
    }

    /** Cumulative degree: {@code getIndex(i)} is the number of edges of nodes {@code 0..i}. */
    public int getIndex(int i) {
        return index[i];
    }

    /** Number of edges. */
    public int getEdgeCount() {
        return edges.length;
    }

    /** Edge {@code i}: the neighbours of node 0 come first, then those of node 1, ... */
    public int getEdge(int i) {
        return edges[i];
    }
}
