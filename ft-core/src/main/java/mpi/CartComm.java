package mpi;

import java.util.Arrays;

/**
 * A communicator with a Cartesian topology ({@link Intracomm#createCart}). Ranks are laid out
 * row-major over the grid (the last dimension varies fastest); {@code reorder} is accepted and
 * ignored, so rank {@code r} of the parent is rank {@code r} of the grid.
 */
public final class CartComm extends Intracomm {
    private final int[] dims;
    private final boolean[] periods;

    CartComm(int[] dims, boolean[] periods) {
        this.dims = dims;
        this.periods = periods;
    }

    @Override
    int topologyKind() {
        return MPI.CART;
    }

    @Override
    Intracomm newSameKind() {
        return new CartComm(dims, periods);
    }

    /** MPI_COMM_DUP, keeping the topology. */
    @Override
    public CartComm clone() {
        return (CartComm) super.clone();
    }

    /** MPI_COMM_DUP, keeping the topology. */
    @Override
    public CartComm dup() throws MPIException {
        return (CartComm) dupIntra("dup");
    }

    /** MPI_COMM_IDUP, keeping the topology. */
    @Override
    public CartComm iDup() throws MPIException {
        return (CartComm) NbColls.iDup(this);
    }

    /** MPI_COMM_DUP_WITH_INFO, keeping the topology. */
    @Override
    public CartComm dupWithInfo(Info info) throws MPIException {
        return (CartComm) super.dupWithInfo(info);
    }

    /** MPI_CART_GET: dimensions, periodicity and the calling process's coordinates. */
    public CartParms getTopo() throws MPIException {
        check("getTopo");
        return new CartParms(dims.clone(), periods.clone(), Topologies.coords(dims, rank));
    }

    /** MPI_CART_RANK: coordinates outside a periodic dimension wrap around. */
    public int getRank(int[] coords) throws MPIException {
        check("getRank");
        if (coords == null || coords.length != dims.length) {
            throw raise(MPI.ERR_ARG, "getRank: coords must have " + dims.length + " entries, not "
                    + (coords == null ? "null" : coords.length));
        }
        int[] c = coords.clone();
        for (int i = 0; i < dims.length; i++) {
            if (c[i] < 0 || c[i] >= dims[i]) {
                if (!periods[i]) {
                    throw raise(MPI.ERR_ARG, "getRank: coords[" + i + "] = " + c[i] + " is outside 0.." + (dims[i] - 1)
                            + " of the non-periodic dimension " + i);
                }
                c[i] = Math.floorMod(c[i], dims[i]);
            }
        }
        return Topologies.rank(dims, c);
    }

    /** MPI_CART_COORDS. */
    public int[] getCoords(int rank) throws MPIException {
        check("getCoords");
        if (rank < 0 || rank >= size) {
            throw raise(MPI.ERR_RANK, "getCoords: rank " + rank + " is not a rank of " + name + " (size " + size + ")");
        }
        return Topologies.coords(dims, rank);
    }

    /**
     * MPI_CART_SHIFT: the ranks {@code disp} steps down ({@code source}) and up ({@code dest})
     * dimension {@code direction}; {@link MPI#PROC_NULL} past a non-periodic boundary.
     */
    public ShiftParms shift(int direction, int disp) throws MPIException {
        check("shift");
        if (direction < 0 || direction >= dims.length) {
            throw raise(MPI.ERR_DIMS, "shift: direction " + direction + " is not a dimension of " + name
                    + " (it has " + dims.length + ")");
        }
        return new ShiftParms(neighbour(direction, -disp), neighbour(direction, disp));
    }

    private int neighbour(int direction, int disp) {
        int[] c = Topologies.coords(dims, rank);
        long x = (long) c[direction] + disp;
        if (x < 0 || x >= dims[direction]) {
            if (!periods[direction]) return MPI.PROC_NULL;
            x = Math.floorMod(x, (long) dims[direction]);
        }
        c[direction] = (int) x;
        return Topologies.rank(dims, c);
    }

    /**
     * MPI_CART_SUB: the sub-grid of the dimensions with {@code remainDims[i]} true that contains
     * the calling process (collective).
     */
    public CartComm sub(boolean[] remainDims) throws MPIException {
        check("sub");
        if (remainDims == null || remainDims.length != dims.length) {
            throw raise(MPI.ERR_ARG, "sub: remainDims must have " + dims.length + " entries, not "
                    + (remainDims == null ? "null" : remainDims.length));
        }
        int[] c = Topologies.coords(dims, rank);
        int colour = 0, key = 0, kept = 0;
        for (int i = 0; i < dims.length; i++) {
            if (remainDims[i]) {
                key = key * dims[i] + c[i];
                kept++;
            } else {
                colour = colour * dims[i] + c[i];
            }
        }
        int[] subDims = new int[kept];
        boolean[] subPeriods = new boolean[kept];
        for (int i = 0, k = 0; i < dims.length; i++) {
            if (remainDims[i]) {
                subDims[k] = dims[i];
                subPeriods[k++] = periods[i];
            }
        }
        return adopt(split(colour, key), new CartComm(subDims, subPeriods), name + ".sub");
    }

    /** MPI_CART_MAP: the rank the calling process would have in such a grid, or {@link MPI#UNDEFINED}. */
    public int map(int[] dims, boolean[] periods) throws MPIException {
        check("map");
        long n = checkGrid("map", dims, periods, size);
        return rank < n ? rank : MPI.UNDEFINED;
    }

    /** MPI_DIMS_CREATE: a balanced distribution of {@code nnodes} processes over {@code dims.length} dimensions. */
    public static void createDims(int nnodes, int[] dims) throws MPIException {
        Topologies.createDims(nnodes, dims);
    }

    @Override
    Topologies.Neighborhood neighborhood(String op) {
        int n = 2 * dims.length;
        int[] ranks = new int[n], recvTags = new int[n], sendTags = new int[n];
        for (int d = 0; d < dims.length; d++) {
            ranks[2 * d] = neighbour(d, -1);
            ranks[2 * d + 1] = neighbour(d, 1);
            // What the lower neighbour sent upwards (tag 2d+1) arrives in block 2d, and vice versa.
            recvTags[2 * d] = 2 * d + 1;
            recvTags[2 * d + 1] = 2 * d;
            sendTags[2 * d] = 2 * d;
            sendTags[2 * d + 1] = 2 * d + 1;
        }
        return new Topologies.Neighborhood(ranks, recvTags, ranks, sendTags);
    }
}
