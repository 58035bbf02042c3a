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
}
