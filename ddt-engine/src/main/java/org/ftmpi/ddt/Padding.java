package org.ftmpi.ddt;

/** Layout of the packed stream (seed section 4.1.2). */
public enum Padding {
    /** Zero padding: elements back to back in type-map order, smallest space. */
    NONE,
    /**
     * Minimal padding: each basic element starts at a stream offset that is a multiple of its
     * alignment, and each instance of the type ends padded to the type's largest alignment.
     * Offsets are relative to the start of the packed stream; padding bytes are zero.
     */
    ALIGNED,
    /**
     * Re-ordered: all values of one basic type (over all {@code count} instances, in type-map
     * order), then the next type; types are in {@code DOUBLE, LONG, FLOAT, INT, SHORT, CHAR, BYTE,
     * BOOLEAN, PACKED} order, so every section is naturally aligned without any padding.
     */
    REORDERED
}
