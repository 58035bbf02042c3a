package mpi;

/** Struct of the {@link MPI#DOUBLE_INT} pair type (value, index) for MINLOC/MAXLOC: {@code MPI.doubleInt}. */
public final class DoubleInt extends Struct {
    private final int iOff;

    /** Only {@link MPI} creates this object. */
    DoubleInt() {
        addDouble();
        setOffset(8);
        iOff = addInt();
    }

    @Override
    protected DoubleInt.Data newData() {
        return new DoubleInt.Data();
    }

    /** Reads and writes one (value, index) pair in a byte buffer. */
    public final class Data extends Struct.Data {
        public double getValue() {
            return getDouble(0);
        }

        public int getIndex() {
            return getInt(iOff);
        }

        public void putValue(double v) {
            putDouble(0, v);
        }

        public void putIndex(int v) {
            putInt(iOff, v);
        }
    }
}
