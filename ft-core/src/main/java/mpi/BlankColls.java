package mpi;

import java.lang.foreign.MemorySegment;
import org.ftmpi.coll.Channel;
import org.ftmpi.p2p.Engine;
import org.ftmpi.p2p.P2pException;
import org.ftmpi.p2p.Request;

/**
 * Collectives under FT-MPI comm-mode BLANK (seed 001, Appendix A, 4.1): a communicator whose
 * members include blanks (failed processes a recovery covered) runs its collectives over the
 * non-blank members only, through {@link Dense}. The plain algorithms then never send to a
 * blank, never wait for one, never combine a value for one (no invented identity elements for
 * MIN, MAX, PROD; user operations are never called for a blank; MAXLOC/MINLOC can only return a
 * contributing rank), every temporary root is a non-blank, and the gather blocks of blanks stay
 * untouched. A blank root makes the rooted collectives return at once (in {@link Comm}).
 */
final class BlankColls {
    private BlankColls() {}

    /** The ranks of {@code world}'s members that are not blanks, or null when there is no blank. */
    static int[] liveRanks(Engine e, int[] world) {
        int blanks = 0;
        for (int w : world) if (e.isRecovered(w)) blanks++;
        if (blanks == 0) return null;
        int[] live = new int[world.length - blanks];
        int k = 0;
        for (int i = 0; i < world.length; i++) if (!e.isRecovered(world[i])) live[k++] = i;
        return live;
    }

    /** Position of {@code rank} in {@code live}, or -1 (a blank). */
    static int indexOf(int[] live, int rank) {
        for (int i = 0; i < live.length; i++) if (live[i] == rank) return i;
        return -1;
    }

    /** The blocks of the live ranks, in order. */
    static MemorySegment[] select(MemorySegment[] blocks, int[] live) {
        MemorySegment[] out = new MemorySegment[live.length];
        for (int i = 0; i < live.length; i++) out[i] = blocks[live[i]];
        return out;
    }

    /** The counts of the live ranks, in order. */
    static int[] select(int[] counts, int[] live) {
        int[] out = new int[live.length];
        for (int i = 0; i < live.length; i++) out[i] = counts[live[i]];
        return out;
    }

    /**
     * The blocks of the live ranks, packed in order, out of {@code all} (rank i's block is
     * {@code counts[i]} elements of {@code elemBytes} after those of the ranks before it): the
     * input of a reduce-scatter over the non-blank members.
     */
    static MemorySegment compact(MemorySegment all, int[] counts, int[] live, long elemBytes) {
        long[] at = new long[counts.length];
        for (int i = 1; i < counts.length; i++) at[i] = at[i - 1] + counts[i - 1] * elemBytes;
        long total = 0;
        for (int r : live) total += counts[r] * elemBytes;
        MemorySegment out = java.lang.foreign.Arena.ofAuto().allocate(total, 8);
        long k = 0;
        for (int r : live) {
            long n = counts[r] * elemBytes;
            MemorySegment.copy(all, at[r], out, k, n);
            k += n;
        }
        return out;
    }

    /** A channel over the non-blank members: dense rank i is communicator rank {@code live[i]}. */
    record Dense(Channel in, int[] live, int me) implements Channel {
        @Override public int rank() { return indexOf(live, me); }

        @Override public int size() { return live.length; }

        @Override
        public Request send(int dest, int tag, MemorySegment data) {
            return in.send(live[dest], tag, data);
        }

        @Override
        public Request receive(int source, int tag, MemorySegment into) {
            return in.receive(live[source], tag, into);
        }

        @Override
        public void waitAll(Request... requests) throws P2pException {
            in.waitAll(requests);
        }

        @Override
        public void waitFor(Request request) throws P2pException {
            in.waitFor(request);
        }

        @Override
        public void sendReceive(int dest, MemorySegment data, int source, MemorySegment into, int tag)
                throws P2pException {
            in.sendReceive(live[dest], data, live[source], into, tag);
        }
    }
}
