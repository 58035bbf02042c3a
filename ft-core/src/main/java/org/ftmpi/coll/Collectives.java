package org.ftmpi.coll;

import java.lang.foreign.MemorySegment;
import java.util.ServiceLoader;
import org.ftmpi.p2p.P2pException;

/**
 * The collective-algorithm SPI (Open MPI's coll framework, much reduced): one method per
 * blocking collective, on memory regions. Argument checking, buffers and in-place handling stay
 * in the {@code mpi} facade; an implementation only moves and combines bytes through a
 * {@link Channel}. Implementations are found with {@link ServiceLoader}; the one with the
 * highest {@link #priority()} is used ({@link DefaultCollectives} has priority 0).
 *
 * <p>Conventions: "v" arrays hold one region per rank (the block of that rank); a {@code null}
 * send region means in place (the caller's own block is already where it belongs). Every
 * member of the communicator calls the same method in the same order.
 */
public interface Collectives {
    String name();

    default int priority() {
        return 0;
    }

    void bcast(Channel c, MemorySegment buf, int root) throws P2pException;

    /** {@code recv} is used at the root only; {@code send} is never modified. */
    void reduce(Channel c, MemorySegment send, MemorySegment recv, int count, Reducer op, int root)
            throws P2pException;

    void allReduce(Channel c, MemorySegment send, MemorySegment recv, int count, Reducer op) throws P2pException;

    /** {@code recv} (root only): block of each rank; {@code send == null} at the root: in place. */
    void gatherv(Channel c, MemorySegment send, MemorySegment[] recv, int root) throws P2pException;

    /** {@code send} (root only): block for each rank; {@code recv == null} at the root: in place. */
    void scatterv(Channel c, MemorySegment[] send, MemorySegment recv, int root) throws P2pException;

    /** {@code send == null}: in place, {@code recv[rank]} already holds this rank's block. */
    void allGatherv(Channel c, MemorySegment send, MemorySegment[] recv) throws P2pException;

    void allToAllv(Channel c, MemorySegment[] send, MemorySegment[] recv) throws P2pException;

    /** Reduces {@code send} (sum of counts elements) and leaves block {@code rank} in {@code recv}. */
    void reduceScatter(Channel c, MemorySegment send, MemorySegment recv, int[] counts, Reducer op)
            throws P2pException;

    /** Inclusive prefix reduction in rank order. */
    void scan(Channel c, MemorySegment send, MemorySegment recv, int count, Reducer op) throws P2pException;

    /** Exclusive prefix reduction; {@code recv} of rank 0 is left untouched. */
    void exScan(Channel c, MemorySegment send, MemorySegment recv, int count, Reducer op) throws P2pException;

    /** The implementation to use: the highest-priority provider, else the default. */
    static Collectives load() {
        return Holder.INSTANCE;
    }

    /** Lazily selected provider. */
    final class Holder {
        static final Collectives INSTANCE = select();

        private Holder() {}

        private static Collectives select() {
            Collectives best = new DefaultCollectives();
            for (Collectives c : ServiceLoader.load(Collectives.class, Collectives.class.getClassLoader())) {
                if (c.priority() > best.priority()) best = c;
            }
            return best;
        }
    }
}
