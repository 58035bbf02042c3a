package mpi;

/** Struct of the {@link MPI#LONG_INT} pair type (value, index) for MINLOC/MAXLOC: {@code MPI.longInt}. */
public final class LongInt extends Struct {
    private final int iOff;

    /** Only {@link MPI} creates this object. */
    LongInt() {
        addLong();
        setOffset(8);
        iOff = addInt();
    }

    @Override
    protected LongInt.Data newData() {
        return new LongInt.Data();
    }

    /** Reads and writes one (value, index) pair in a byte buffer. */
    public final class Data extends Struct.Data {
        public long getValue() {
            return getLong(0);
        }

        public int getIndex() {
            return getInt(iOff);
        }

        public void putValue(long v) {
            putLong(0, v);
        }

        public void putIndex(int v) {
            putInt(iOff, v);
        }
    }
}
