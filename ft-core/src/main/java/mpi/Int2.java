package mpi;

/** Struct of the {@link MPI#INT2} pair type (value, index) for MINLOC/MAXLOC: {@code MPI.int2}. */
public final class Int2 extends Struct {
    private final int iOff;

    /** Only {@link MPI} creates this object. */
    Int2() {
        addInt();
        setOffset(4);
        iOff = addInt();
    }

    @Override
    protected Int2.Data newData() {
        return new Int2.Data();
    }

    /** Reads and writes one (value, index) pair in a byte buffer. */
    public final class Data extends Struct.Data {
        public int getValue() {
            return getInt(0);
        }

        public int getIndex() {
            return getInt(iOff);
        }

        public void putValue(int v) {
            putInt(0, v);
        }

        public void putIndex(int v) {
            putInt(iOff, v);
        }
    }
}
