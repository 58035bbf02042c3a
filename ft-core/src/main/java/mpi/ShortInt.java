package mpi;

/** Struct of the {@link MPI#SHORT_INT} pair type (value, index) for MINLOC/MAXLOC: {@code MPI.shortInt}. */
public final class ShortInt extends Struct {
    private final int iOff;

    /** Only {@link MPI} creates this object. */
    ShortInt() {
        addShort();
        setOffset(4);
        iOff = addInt();
    }

    @Override
    protected ShortInt.Data newData() {
        return new ShortInt.Data();
    }

    /** Reads and writes one (value, index) pair in a byte buffer. */
    public final class Data extends Struct.Data {
        public short getValue() {
            return getShort(0);
        }

        public int getIndex() {
            return getInt(iOff);
        }

        public void putValue(short v) {
            putShort(0, v);
        }

        public void putIndex(int v) {
            putInt(iOff, v);
        }
    }
}
