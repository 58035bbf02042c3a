package mpi;

import java.util.Arrays;

/**
 * MPI_DIST_GRAPH_CREATE: any process may name any edge, so each process sends every edge it
 * names to the edge's two end points (one all-to-all of counts, one all-to-allv of
 * {@code (source, destination, weight)} triples); each process then keeps its in-edges and
 * out-edges in the order they arrive (by naming rank, then the order it named them).
 */
final class DistGraphs {
    private DistGraphs() {}

    static GraphComm create(Intracomm c, int[] sources, int[] degrees, int[] destinations, int[] weights,
                            boolean weighted) throws MPIException {
        String op = "createDistGraph";
        int n = c.size;
        c.checkRanks(op, "sources", sources);
        if (degrees == null || degrees.length < sources.length) {
            throw c.raise(MPI.ERR_ARG, op + ": degrees must have an entry for each of the " + sources.length + " sources");
        }
        long m = 0;
        for (int i = 0; i < sources.length; i++) {
            if (degrees[i] < 0) throw c.raise(MPI.ERR_ARG, op + ": degrees[" + i + "] is negative (" + degrees[i] + ")");
            m += degrees[i];
        }
        if (destinations == null || destinations.length < m) {
            throw c.raise(MPI.ERR_ARG, op + ": destinations must hold the " + m + " edges the degrees add up to");
        }
        c.checkRanks(op, "destinations", Arrays.copyOf(destinations, (int) m));
        int[] w = weights(c, op, "weights", weights, (int) m, weighted);
        // Count, then pack, the triples for each end point (an edge to oneself goes once).
        int[] sendCount = new int[n];
        for (int i = 0, e = 0; i < sources.length; i++) {
            for (int k = 0; k < degrees[i]; k++, e++) {
                sendCount[sources[i]] += 3;
                if (destinations[e] != sources[i]) sendCount[destinations[e]] += 3;
            }
        }
        int[] sdispls = new int[n];
        for (int p = 1; p < n; p++) sdispls[p] = sdispls[p - 1] + sendCount[p - 1];
        int[] packed = new int[sdispls[n - 1] + sendCount[n - 1]];
        int[] at = sdispls.clone();
        for (int i = 0, e = 0; i < sources.length; i++) {
            for (int k = 0; k < degrees[i]; k++, e++) {
                int s = sources[i], d = destinations[e];
                put(packed, at, s, s, d, w[e]);
                if (d != s) put(packed, at, d, s, d, w[e]);
            }
        }
        int[] recvCount = new int[n];
        c.allToAll(sendCount, 1, MPI.INT, recvCount, 1, MPI.INT);
        int[] rdispls = new int[n];
        for (int p = 1; p < n; p++) rdispls[p] = rdispls[p - 1] + recvCount[p - 1];
        int[] got = new int[rdispls[n - 1] + recvCount[n - 1]];
        c.allToAllv(packed, sendCount, sdispls, MPI.INT, got, recvCount, rdispls, MPI.INT);
        int in = 0, out = 0;
        for (int t = 0; t < got.length; t += 3) {
            if (got[t + 1] == c.rank) in++;
            if (got[t] == c.rank) out++;
        }
        int[] src = new int[in], srcW = new int[in], dst = new int[out], dstW = new int[out];
        in = 0;
        out = 0;
        for (int t = 0; t < got.length; t += 3) {
            if (got[t + 1] == c.rank) {
                src[in] = got[t];
                srcW[in++] = got[t + 2];
            }
            if (got[t] == c.rank) {
                dst[out] = got[t + 1];
                dstW[out++] = got[t + 2];
            }
        }
        return c.topoMembers(op, Topologies.K_DIST_GRAPH, n, GraphComm.distGraph(src, srcW, dst, dstW, weighted),
                ".distGraph");
    }

    private static void put(int[] packed, int[] at, int to, int s, int d, int w) {
        packed[at[to]++] = s;
        packed[at[to]++] = d;
        packed[at[to]++] = w;
    }

    /** A copy of the first {@code n} weights, or {@code n} ones for an unweighted graph. */
    static int[] weights(Intracomm c, String op, String arg, int[] weights, int n, boolean weighted)
            throws MPIException {
        int[] w = new int[n];
        if (!weighted) {
            Arrays.fill(w, 1);
            return w;
        }
        if (weights == null || weights.length < n) {
            throw c.raise(MPI.ERR_ARG, op + ": " + arg + " must have " + n + " entries, not "
                    + (weights == null ? "null" : weights.length));
        }
        for (int i = 0; i < n; i++) {
            if (weights[i] < 0) throw c.raise(MPI.ERR_ARG, op + ": " + arg + "[" + i + "] is negative (" + weights[i] + ")");
            w[i] = weights[i];
        }
        return w;
    }
}
