package mpi;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Topology helpers shared by {@link CartComm}, {@link GraphComm} and the constructors on
 * {@link Intracomm}: MPI_DIMS_CREATE, row-major Cartesian ranks, and the neighbourhood
 * (in-neighbours, out-neighbours and their tags) that neighbour collectives exchange over.
 */
final class Topologies {
    /** Construction kinds for the context-id agreement (beside dup, split, create). */
    static final int K_CART = 4, K_GRAPH = 5, K_DIST_GRAPH = 6;

    private Topologies() {}

    /**
     * The neighbourhood of a process: {@code recv[i]} comes from {@code sources[i]} with tag
     * {@code recvTags[i]}; {@code send[i]} goes to {@code dests[i]} with tag {@code sendTags[i]}.
     * Negative ranks ({@link MPI#PROC_NULL}) are skipped.
     */
    record Neighborhood(int[] sources, int[] recvTags, int[] dests, int[] sendTags) {
        static Neighborhood symmetric(int[] neighbours) {
            int[] zeros = new int[neighbours.length];
            return new Neighborhood(neighbours, zeros, neighbours, zeros);
        }
    }

    /** MPI_DIMS_CREATE: fills the zero entries of {@code dims} so that the product is {@code nnodes}. */
    static void createDims(int nnodes, int[] dims) throws MPIException {
        if (dims == null) throw MPIException.of(MPI.ERR_DIMS, "createDims: dims is null");
        if (nnodes <= 0) throw MPIException.of(MPI.ERR_DIMS, "createDims: nnodes is " + nnodes + "; it must be positive");
        long fixed = 1;
        int free = 0;
        for (int i = 0; i < dims.length; i++) {
            if (dims[i] < 0) throw MPIException.of(MPI.ERR_DIMS, "createDims: dims[" + i + "] is negative (" + dims[i] + ")");
            if (dims[i] == 0) free++;
            else fixed *= dims[i];
        }
        if (nnodes % fixed != 0) {
            throw MPIException.of(MPI.ERR_DIMS, "createDims: nnodes " + nnodes + " is not a multiple of the product "
                    + fixed + " of the non-zero entries of dims " + Arrays.toString(dims));
        }
        int rest = (int) (nnodes / fixed);
        if (free == 0) {
            if (rest != 1) {
                throw MPIException.of(MPI.ERR_DIMS, "createDims: dims " + Arrays.toString(dims)
                        + " has no zero entry and its product is not nnodes " + nnodes);
            }
            return;
        }
        // Largest prime factors first, each to the currently smallest bin: as even as possible.
        List<Integer> primes = new ArrayList<>();
        for (int p = 2, m = rest; m > 1; ) {
            if ((long) p * p > m) {
                primes.add(m);
                break;
            }
            if (m % p == 0) {
                primes.add(p);
                m /= p;
            } else {
                p++;
            }
        }
        primes.sort((a, b) -> Integer.compare(b, a));
        int[] bins = new int[free];
        Arrays.fill(bins, 1);
        for (int p : primes) {
            int smallest = 0;
            for (int b = 1; b < free; b++) if (bins[b] < bins[smallest]) smallest = b;
            bins[smallest] *= p;
        }
        Arrays.sort(bins);
        int k = free - 1;
        for (int i = 0; i < dims.length; i++) if (dims[i] == 0) dims[i] = bins[k--];
    }

    /** Product of {@code dims}, or -1 past {@link Integer#MAX_VALUE}. */
    static long product(int[] dims) {
        long p = 1;
        for (int d : dims) {
            p *= d;
            if (p > Integer.MAX_VALUE) return -1;
        }
        return p;
    }

    static int[] coords(int[] dims, int rank) {
        int[] c = new int[dims.length];
        for (int i = dims.length - 1; i >= 0; i--) {
            c[i] = rank % dims[i];
            rank /= dims[i];
        }
        return c;
    }

    /** Row-major rank of in-range coordinates. */
    static int rank(int[] dims, int[] coords) {
        int r = 0;
        for (int i = 0; i < dims.length; i++) r = r * dims[i] + coords[i];
        return r;
    }
}
