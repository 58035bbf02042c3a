package org.ftmpi.coll;

import java.lang.foreign.MemorySegment;
import org.ftmpi.p2p.P2pException;

/**
 * Dissemination barrier over a {@link Channel}: ceil(log2 size) rounds of zero-byte messages;
 * in round {@code k} rank {@code r} signals {@code r + 2^k} and waits for {@code r - 2^k}.
 */
public final class Dissemination {
    /** Tags {@code TAG_BASE + round}; below the other collective tags. */
    static final int TAG_BASE = 1;

    private Dissemination() {}

    public static void barrier(Channel c) throws P2pException {
        int n = c.size(), rank = c.rank();
        int round = 0;
        for (int k = 1; k < n; k <<= 1, round++) {
            int to = (rank + k) % n, from = (rank - k + n) % n;
            c.sendReceive(to, MemorySegment.NULL, from, MemorySegment.NULL, TAG_BASE + round);
        }
    }
}
