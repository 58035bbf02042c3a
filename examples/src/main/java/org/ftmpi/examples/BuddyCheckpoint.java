package org.ftmpi.examples;

import java.util.Arrays;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;

/**
 * An application-level, in-memory ("diskless") checkpoint for SPMD programs whose state is a few
 * global vectors of the same length, each split over the ranks in one contiguous block per rank,
 * plus a few scalars that every rank holds alike. Used by {@link GameOfLife} (REBUILD) and
 * {@link PoissonCG} (SHRINK).
 *
 * <p><b>Buddy copies.</b> {@link #save} keeps the rank's own blocks and sends a copy of them to its
 * buddy, the next rank (ring order), which keeps them too: every block lives in two processes, so
 * any failure that does not take a rank and its buddy together loses nothing.
 *
 * <p><b>Two slots, agreed version.</b> Each process keeps two checkpoints: a save writes the slot
 * that does not hold the newest <i>committed</i> one, and commits (a barrier: every process holds
 * the new one) only then. A failure in the middle of a save therefore leaves every survivor with
 * the previous version still intact, and the committed versions of two processes differ by at
 * most one. {@link #restore} agrees on the oldest committed version among the survivors (which
 * every holder still has), and rebuilds the <i>whole</i> global vectors from whatever own and
 * buddy blocks of that version the survivors hold: an {@code allReduce(SUM)} of the blocks and of
 * a coverage count (a block held twice is summed twice and divided by two: bit-exact). The result
 * does not depend on how the vectors were split when they were saved, so a program can take its
 * block under a new layout: the same ranks after a REBUILD, fewer after a SHRINK.
 *
 * <p>The restore holds the full vectors on every rank for a moment (simple, fine for the
 * examples' sizes); the RS codec ({@code org.ftmpi.ckpt.rs}) would need less memory and survive
 * the loss of a rank and its buddy.
 *
 * <p>Not thread-safe: one application thread per process.
 */
final class BuddyCheckpoint {
    /** The vectors and scalars of one version, rebuilt by {@link #restore}. */
    record State(double[][] vectors, double[] scalars) {}

    private static final class Slot {
        long seq = -1; // the version held, -1: empty or being written
        double[] scalars;
        int ownLo, ownLen, buddyLo, buddyLen;
        double[] own = new double[0], buddy = new double[0]; // vectors one after the other
    }

    private final int vectors;
    private final int length;
    private final int nScalars;
    private final Slot[] slots = {new Slot(), new Slot()};
    private long committed = -1;
    private long nextSeq;
    /** MPI calls made here (the examples report their call count for {@code --inject at-call}). */
    long calls;

    /** {@code vectors} global vectors of {@code length} elements each, and {@code scalars} scalars. */
    BuddyCheckpoint(int vectors, int length, int scalars) {
        this.vectors = vectors;
        this.length = length;
        this.nScalars = scalars;
    }

    /**
     * Collective: saves this rank's blocks {@code blocks[v][0..len)} (global offset {@code lo}) and
     * the scalars, keeps the left neighbour's blocks as its buddy, and commits. 3 MPI calls.
     */
    void save(Intracomm comm, double[][] blocks, int lo, int len, double[] scalars) throws MPIException {
        int size = comm.getSize(), rank = comm.getRank();
        Slot s = committed >= 0 && slots[0].seq == committed ? slots[1] : slots[0];
        long seq = nextSeq++;
        s.seq = -1;
        if (scalars.length != nScalars) throw new IllegalArgumentException("scalars: " + scalars.length + " != " + nScalars);
        s.scalars = scalars.clone();
        s.ownLo = lo;
        s.ownLen = len;
        if (s.own.length != vectors * len) s.own = new double[vectors * len];
        for (int v = 0; v < vectors; v++) System.arraycopy(blocks[v], 0, s.own, v * len, len);
        int right = (rank + 1) % size, left = (rank - 1 + size) % size;
        int[] mine = {lo, len}, theirs = new int[2];
        comm.sendRecv(mine, 2, MPI.INT, right, 71, theirs, 2, MPI.INT, left, 71);
        s.buddyLo = theirs[0];
        s.buddyLen = theirs[1];
        if (s.buddy.length != vectors * s.buddyLen) s.buddy = new double[vectors * s.buddyLen];
        comm.sendRecv(s.own, s.own.length, MPI.DOUBLE, right, 72, s.buddy, s.buddy.length, MPI.DOUBLE, left, 72);
        s.seq = seq;
        comm.barrier(); // every process holds version seq: commit
        committed = seq;
        calls += 3;
    }

    /**
     * Collective over the current communicator (survivors and replacements): agrees on the
     * version to roll back to and returns the full vectors and scalars of it, or null if no
     * process holds any committed version (start again from the initial state). Exits the job
     * with a message if the version cannot be rebuilt (a block and its buddy copy both lost).
     * 3 MPI calls.
     */
    State restore(Intracomm comm) throws MPIException {
        // [0]: my newest committed version (none: MAX), [1]: -(versions I numbered), both MIN.
        long[] in = {committed >= 0 && holds(committed) ? committed : Long.MAX_VALUE, -nextSeq};
        long[] agreed = new long[2];
        comm.allReduce(in, agreed, 2, MPI.LONG, MPI.MIN);
        calls++;
        long seq = agreed[0];
        nextSeq = -agreed[1];
        if (seq == Long.MAX_VALUE) {
            committed = -1;
            return null;
        }
        Slot s = slots[0].seq == seq ? slots[0] : slots[1].seq == seq ? slots[1] : null;
        // the vectors one after the other, then the coverage count of each index
        double[] sum = new double[(vectors + 1) * length];
        double[] scalars = new double[nScalars];
        Arrays.fill(scalars, Double.NEGATIVE_INFINITY);
        if (s != null) {
            add(sum, s.own, s.ownLo, s.ownLen);
            add(sum, s.buddy, s.buddyLo, s.buddyLen);
            System.arraycopy(s.scalars, 0, scalars, 0, nScalars);
        }
        comm.allReduce(sum, sum.length, MPI.DOUBLE, MPI.SUM);
        comm.allReduce(scalars, nScalars, MPI.DOUBLE, MPI.MAX); // every holder has the same values
        calls += 2;
        double[][] out = new double[vectors][length];
        for (int i = 0; i < length; i++) {
            double c = sum[vectors * length + i];
            if (c == 0) {
                if (comm.getRank() == 0) {
                    System.err.println("checkpoint version " + seq + " cannot be rebuilt: element " + i
                            + " was held only by failed processes (a rank and its buddy failed together)");
                }
                comm.abort(3);
            }
            for (int v = 0; v < vectors; v++) out[v][i] = sum[v * length + i] / c;
        }
        committed = s != null ? seq : -1;
        return new State(out, scalars);
    }

    private boolean holds(long seq) {
        return slots[0].seq == seq || slots[1].seq == seq;
    }

    private void add(double[] sum, double[] data, int lo, int len) {
        for (int v = 0; v < vectors; v++) {
            int base = v * length + lo;
            for (int i = 0; i < len; i++) sum[base + i] += data[v * len + i];
        }
        int count = vectors * length + lo;
        for (int i = 0; i < len; i++) sum[count + i] += 1;
    }
}
