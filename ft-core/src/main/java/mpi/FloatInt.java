package mpi;

/** Struct of the {@link MPI#FLOAT_INT} pair type (value, index) for MINLOC/MAXLOC: {@code MPI.floatInt}. */
public final class FloatInt extends Struct {
    private final int iOff;

    /** Only {@link MPI} creates this object. */
    FloatInt() {
        addFloat();
        setOffset(4);
        iOff = addInt();
    }

    @Override
    protected FloatInt.Data newData() {
        return new FloatInt.Data();
    }

    /** Reads and writes one (value, index) pair in a byte buffer. */
    public final class Data extends Struct.Data {
        public float getValue() {
            return getFloat(0);
        }

        public int getIndex() {
            return getInt(iOff);
        }

        public void putValue(float v) {
            putFloat(0, v);
        }

        public void putIndex(int v) {
            putInt(iOff, v);
        }
    }
}
