package mpi;

/** Cartesian topology information of a communicator ({@link CartComm#getTopo()}). */
public final class CartParms {
    private final int[] dims;
    private final boolean[] periods;
    private final int[] coords;

    CartParms(int[] dims, boolean[] periods, int[] coords) {
        this.dims = dims;
        this.periods = periods;
        this.coords = coords;
    }

    /** Number of dimensions. */
    public int getDimCount() {
        return dims.length;
    }

    /** Number of processes in dimension {@code i}. */
    public int getDim(int i) {
        return dims[i];
    }

    /** Whether dimension {@code i} is periodic. */
    public boolean getPeriod(int i) {
        return periods[i];
    }

    /** Coordinate of the calling process in dimension {@code i}. */
    public int getCoord(int i) {
        return coords[i];
    }
}
