package org.ftmpi.ddt;

/**
 * The predefined element types of the Java binding. Sizes are the Java sizes (Open MPI's Java
 * {@code MPI.CHAR} is a 2-byte Java {@code char}; {@code BOOLEAN} is 1 byte). Alignment equals
 * the size for every type, so a run of n elements of one type keeps its alignment.
 *
 * <p>External32 sizes: Open MPI's Java bindings map CHAR to a 16-bit unsigned C type, SHORT to
 * {@code short}, INT to {@code int}, LONG to a 64-bit {@code long long}, FLOAT/DOUBLE to IEEE
 * single/double and BOOLEAN to a 1-byte C type; the MPI standard's external32 sizes for those C
 * types (2, 2, 4, 8, 4, 8, 1) equal the Java sizes, so external32 differs from native only in
 * byte order (big-endian).
 */
public enum BasicType {
    BYTE(1), CHAR(2), SHORT(2), BOOLEAN(1), INT(4), LONG(8), FLOAT(4), DOUBLE(8), PACKED(1);

    private final int size;

    BasicType(int size) {
        this.size = size;
    }

    /** Size in bytes in memory (and in a packed stream of any encoding). */
    public int size() {
        return size;
    }

    /** Alignment in bytes in memory and in the ALIGNED padding mode. */
    public int alignment() {
        return size;
    }

    /** Size in the external32 representation. */
    public int external32Size() {
        return size;
    }

    /** Section order of the REORDERED padding mode: widest types first, so no padding is needed. */
    static final BasicType[] REORDER_SEQUENCE = {DOUBLE, LONG, FLOAT, INT, SHORT, CHAR, BYTE, BOOLEAN, PACKED};
}
