package org.ftmpi.examples;

import java.util.Arrays;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;

/**
 * An application-level, in-memory ("diskless") checkpoint for SPMD programs whose state is a few
 * global vectors of the same length, each split over the ranks in one contiguous block per rank,
 * plus a few scalars that every rank holds alike. Subclasses decide how the blocks are made
 * redundant: {@link BuddyCheckpoint} (a copy at the next rank) and {@link RsCheckpoint}
 * (Reed-Solomon parity spread over the ranks).
 *
 * <p><b>Two slots, agreed version.</b> Each process keeps two checkpoints: a save writes the slot
 * that does not hold the newest <i>committed</i> one, and commits (a barrier: every process holds
 * the new one) only then. A failure in the middle of a save therefore leaves every survivor with
 * the previous version still intact, and the committed versions of two processes differ by at
 * most one. {@link #restore} agrees on the oldest committed version among the survivors (which
 * every holder still has) and rebuilds the <i>whole</i> global vectors of that version. The
 * result does not depend on how the vectors were split when they were saved, so a program can
 * take its block under a new layout: the same ranks after a REBUILD, fewer after a SHRINK.
 *
 * <p>Not thread-safe: one application thread per process.
 */
abstract class DisklessCheckpoint {
    /** The vectors and scalars of one version, rebuilt by {@link #restore}. */
    record State(double[][] vectors, double[] scalars) {}

    /** One saved version; subclasses add the redundant data they keep. */
    static class Slot {
        long seq = -1; // the version held, -1: empty or being written
        double[] scalars;
    }

    final int vectors;
    final int length;
    private final int nScalars;
    private final Slot[] slots;
    private long committed = -1;
    private long nextSeq;
    /** MPI calls made here (the examples report their call count for {@code --inject at-call}). */
    long calls;

    /** {@code vectors} global vectors of {@code length} elements each, and {@code scalars} scalars. */
    DisklessCheckpoint(int vectors, int length, int scalars) {
        this.vectors = vectors;
        this.length = length;
        this.nScalars = scalars;
        this.slots = new Slot[] {newSlot(), newSlot()};
    }

    abstract Slot newSlot();

    /**
     * Collective: makes this rank's blocks {@code blocks[v][0..len)} (global offset {@code lo})
     * redundant in {@code slot}; returns the MPI calls it made.
     */
    abstract int write(Intracomm comm, Slot slot, double[][] blocks, int lo, int len) throws MPIException;

    /**
     * Collective over the current communicator: the full vectors of the agreed version, from the
     * slots of the processes that hold it ({@code slot} null: this process holds none, e.g. a
     * REBUILD replacement); returns null, after {@link #lost}, if they cannot be rebuilt. Adds
     * its MPI calls to {@link #calls}.
     */
    abstract double[][] rebuild(Intracomm comm, Slot slot) throws MPIException;

    /** Collective: saves the blocks and the scalars, and commits. */
    final void save(Intracomm comm, double[][] blocks, int lo, int len, double[] scalars) throws MPIException {
        if (scalars.length != nScalars) throw new IllegalArgumentException("scalars: " + scalars.length + " != " + nScalars);
        Slot s = committed >= 0 && slots[0].seq == committed ? slots[1] : slots[0];
        long seq = nextSeq++;
        s.seq = -1;
        s.scalars = scalars.clone();
        calls += write(comm, s, blocks, lo, len);
        s.seq = seq;
        comm.barrier(); // every process holds version seq: commit
        committed = seq;
        calls++;
    }

    /**
     * Collective over the current communicator (survivors and replacements): agrees on the
     * version to roll back to and returns the full vectors and scalars of it, or null if no
     * process holds any committed version (start again from the initial state). Ends the job
     * with a message if the version cannot be rebuilt (more blocks lost than the redundancy
     * covers).
     */
    final State restore(Intracomm comm) throws MPIException {
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
        double[][] out = rebuild(comm, s);
        double[] scalars = new double[nScalars];
        Arrays.fill(scalars, Double.NEGATIVE_INFINITY);
        if (s != null) System.arraycopy(s.scalars, 0, scalars, 0, nScalars);
        comm.allReduce(scalars, nScalars, MPI.DOUBLE, MPI.MAX); // every holder has the same values
        calls++;
        if (out == null) comm.abort(3);
        committed = s != null ? seq : -1;
        return new State(out, scalars);
    }

    /** Rank 0 says why the agreed version cannot be rebuilt (the caller then aborts the job). */
    static void lost(Intracomm comm, String why) throws MPIException {
        if (comm.getRank() == 0) System.err.println("the checkpoint cannot be rebuilt: " + why);
    }

    private boolean holds(long seq) {
        return slots[0].seq == seq || slots[1].seq == seq;
    }
}
