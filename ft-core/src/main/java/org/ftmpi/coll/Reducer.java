package org.ftmpi.coll;

import java.lang.foreign.MemorySegment;
import org.ftmpi.p2p.P2pException;

/** A reduction operation bound to one datatype, as seen by the collective algorithms. */
public interface Reducer {
    /** Bytes of one element. */
    long elementBytes();

    /** Whether {@code a op b == b op a}; non-commutative ops are combined in rank order. */
    boolean commutative();

    /**
     * {@code inout[i] = in[i] op inout[i]} for {@code count} elements, where {@code in} holds
     * the contribution of lower ranks than {@code inout}.
     */
    void apply(MemorySegment in, MemorySegment inout, int count) throws P2pException;

    /**
     * {@link #apply} for operands that are both regions of {@link Scratch} (an algorithm's own
     * buffers, never the caller's): an implementation may take a path compiled for those alone.
     * Why: a loop over the elements of a {@code MemorySegment} is compiled for the segment
     * classes it has seen, and one that has seen the callers' arrays of every type, direct
     * buffers and shared memory (a real program, or the profiles the AOT cache replays) takes
     * some 17 ns per element instead of 1-2; scratch regions are always of one class below
     * {@link Scratch#NATIVE_BYTES}.
     */
    default void applyScratch(MemorySegment in, MemorySegment inout, int count) throws P2pException {
        apply(in, inout, count);
    }
}
