package mpi;

import org.ftmpi.p2p.Engine;

/**
 * An intra-communicator. This release provides point-to-point (inherited from {@link Comm}) and
 * {@link #barrier()}; the other collectives, communicator construction and topologies come with
 * the collectives issue.
 */
public class Intracomm extends Comm {
    private static final int BARRIER_TAG_BASE = 1;

    Intracomm() {}

    @Override
    public Intracomm clone() {
        return (Intracomm) super.clone();
    }

    /**
     * MPI_BARRIER: dissemination algorithm, ceil(log2 size) rounds of zero-byte messages on the
     * communicator's collective context (never matched by point-to-point receives).
     */
    public final void barrier() throws MPIException {
        check("barrier");
        int round = 0;
        for (int k = 1; k < size; k <<= 1, round++) {
            int to = (rank + k) % size;
            int from = (rank - k + size) % size;
            org.ftmpi.p2p.Request r = engine.receive(context + 1, from, world[from], BARRIER_TAG_BASE + round,
                    java.lang.foreign.MemorySegment.NULL, 0, 0);
            org.ftmpi.p2p.Request s = engine.send(context + 1, epoch, rank, to, world[to], BARRIER_TAG_BASE + round,
                    java.lang.foreign.MemorySegment.NULL, 0, 0, org.ftmpi.p2p.Request.STANDARD);
            engine.await(s);
            engine.await(r);
            report(s, "barrier");
            report(r, "barrier");
        }
    }

    Engine engine() {
        return engine;
    }
}
