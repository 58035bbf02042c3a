package org.ftmpi.coll;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.ftmpi.p2p.P2pException;
import org.ftmpi.p2p.Request;

/**
 * Neighbourhood exchange, the algorithm of every neighbour collective: post a receive from each
 * in-neighbour, send to each out-neighbour, wait for all. Negative ranks (MPI_PROC_NULL
 * neighbours of a non-periodic Cartesian boundary) are skipped and their blocks left untouched.
 * Tags tell apart two edges between the same pair of ranks where the topology can name them
 * (Cartesian directions); repeated edges of a graph match in FIFO order.
 */
public final class Neighbors {
    /** Tags {@code TAG_BASE + tag}. */
    static final int TAG_BASE = 4096;

    private Neighbors() {}

    /**
     * @param sources  in-neighbours, {@code recv[i]} is filled from {@code sources[i]} with tag {@code recvTags[i]}
     * @param dests    out-neighbours, {@code send[i]} goes to {@code dests[i]} with tag {@code sendTags[i]}
     */
    public static void exchange(Channel c, int[] sources, int[] recvTags, MemorySegment[] recv,
                                int[] dests, int[] sendTags, MemorySegment[] send) throws P2pException {
        List<Request> rs = new ArrayList<>(sources.length + dests.length);
        for (int i = 0; i < sources.length; i++) {
            if (sources[i] >= 0) rs.add(c.receive(sources[i], TAG_BASE + recvTags[i], recv[i]));
        }
        for (int i = 0; i < dests.length; i++) {
            if (dests[i] >= 0) rs.add(c.send(dests[i], TAG_BASE + sendTags[i], send[i]));
        }
        c.waitAll(rs.toArray(Request[]::new));
    }
}
