package org.ftmpi.ckpt;

import java.util.Arrays;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;

/**
 * An in-memory ("diskless") checkpoint for SPMD programs, as FT-MPI's applications keep them
 * (seed 001, section 4): no file system, the redundancy lives in the other processes' memory.
 * The state it keeps is a few global vectors of doubles of the same length, each split over the
 * ranks in one contiguous block per rank, plus a few scalars that every rank holds alike (an
 * iteration number, a residual).
 *
 * <pre>{@code
 * DisklessCheckpoint ckpt = DisklessCheckpoint.reedSolomon(3, n, 2, 1); // x, r, p; 2 scalars; 1 parity
 * ...
 * ckpt.save(world, new double[][] {x, r, p}, lo, len, new double[] {iter, rho});   // every k iterations
 * ...
 * // after a failure and the recovery (SHRINK: fewer ranks; REBUILD: a replacement that holds nothing):
 * DisklessCheckpoint.State s = ckpt.restore(world);    // null: nothing was saved yet
 * // s.vectors()[v] is the whole global vector v of the agreed version: take the block of the new layout
 * }</pre>
 *
 * <p>Two kinds: {@link #buddy} (a copy of each rank's blocks at the next rank: 100 % extra memory,
 * survives any failures that do not take a rank and its right neighbour together) and
 * {@link #reedSolomon} (parity spread over the ranks with the library's Reed-Solomon codec,
 * {@code org.ftmpi.ckpt.rs}: {@code m / (N - m)} extra memory, survives any {@code m} failures).
 * Both are bit-exact: a restored double has the bits that were saved.
 *
 * <p><b>Two slots, agreed version.</b> Each process keeps two versions: a save writes the slot
 * that does not hold the newest <i>committed</i> one, and commits (a barrier: every process holds
 * the new one) only then. A failure in the middle of a save therefore leaves every survivor with
 * the previous version intact, and the committed versions of two processes differ by at most
 * one. {@link #restore} agrees on the oldest committed version among the survivors (which every
 * holder still has) and rebuilds the <i>whole</i> global vectors of that version. The result does
 * not depend on how the vectors were split when they were saved, so a program can take its block
 * under a new layout: the same ranks after a REBUILD, fewer after a SHRINK. The restore holds the
 * whole vectors on every rank for a moment (memory: the global state once per process).
 *
 * <p>{@link #save} and {@link #restore} are collective over the communicator they are given;
 * MPI errors inside them (a failure during the save, say) reach the caller through that
 * communicator's error handler, as from any collective.
 *
 * <p>Not thread-safe: one application thread per process.
 */
public abstract sealed class DisklessCheckpoint permits BuddyCheckpoint, RsCheckpoint {
    /** The vectors and scalars of one version, as {@link #restore} rebuilt them. */
    public record State(double[][] vectors, double[] scalars) {}

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
    /** MPI calls made here. */
    long calls;

    DisklessCheckpoint(int vectors, int length, int scalars) throws CheckpointException {
        if (vectors < 1) throw CheckpointException.badArgument("vectors: must be >= 1, got " + vectors);
        if (length < 0) throw CheckpointException.badArgument("length: must be >= 0, got " + length);
        if (scalars < 0) throw CheckpointException.badArgument("scalars: must be >= 0, got " + scalars);
        this.vectors = vectors;
        this.length = length;
        this.nScalars = scalars;
        this.slots = new Slot[] {newSlot(), newSlot()};
    }

    /**
     * A checkpoint by buddy copies of {@code vectors} global vectors of {@code length} doubles and
     * {@code scalars} scalars: each rank keeps its own blocks and a copy of its left neighbour's.
     *
     * @throws CheckpointException (ERR_ARG) for a negative length or count, or no vector
     */
    public static DisklessCheckpoint buddy(int vectors, int length, int scalars) throws CheckpointException {
        return new BuddyCheckpoint(vectors, length, scalars);
    }

    /**
     * A checkpoint protected by Reed-Solomon parity: {@code parity} parity shards per stripe, so
     * that it survives the loss of any {@code parity} processes between two saves (with N ranks
     * at most N - 1 are used).
     *
     * @throws CheckpointException (ERR_ARG) for {@code parity < 1}, a negative length or count, or no vector
     */
    public static DisklessCheckpoint reedSolomon(int vectors, int length, int scalars, int parity)
            throws CheckpointException {
        return new RsCheckpoint(vectors, length, scalars, parity);
    }

    /** MPI calls {@link #save} and {@link #restore} made so far at this process (for fault injection by call count). */
    public final long mpiCalls() {
        return calls;
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
     * REBUILD replacement). Adds its MPI calls to {@link #calls}.
     *
     * @throws CheckpointException (ERR_OTHER, at every process) if they cannot be rebuilt
     */
    abstract double[][] rebuild(Intracomm comm, Slot slot) throws MPIException;

    /**
     * Collective over {@code comm}: saves this rank's blocks {@code blocks[v][0..len)}, which
     * start at element {@code lo} of global vector {@code v}, and the {@code scalars}, then
     * commits the new version. The ranks' blocks need not have equal lengths; together they
     * should cover each vector once.
     *
     * @throws CheckpointException (ERR_ARG) for blocks or scalars of the wrong shape
     */
    public final void save(Intracomm comm, double[][] blocks, int lo, int len, double[] scalars) throws MPIException {
        check(comm, blocks, lo, len, scalars);
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

    private void check(Intracomm comm, double[][] blocks, int lo, int len, double[] scalars) throws CheckpointException {
        if (comm == null) throw CheckpointException.badArgument("save: comm is null");
        if (blocks == null || blocks.length != vectors) {
            throw CheckpointException.badArgument("save: blocks must hold " + vectors + " arrays, got "
                    + (blocks == null ? "null" : blocks.length));
        }
        if (lo < 0 || len < 0 || (long) lo + len > length) {
            throw CheckpointException.badArgument("save: lo " + lo + " and len " + len + " are not a block of a vector"
                    + " of length " + length);
        }
        for (int v = 0; v < vectors; v++) {
            if (blocks[v] == null || blocks[v].length < len) {
                throw CheckpointException.badArgument("save: blocks[" + v + "] has " + (blocks[v] == null ? "no array"
                        : blocks[v].length + " elements") + "; len is " + len);
            }
        }
        if (scalars == null || scalars.length != nScalars) {
            throw CheckpointException.badArgument("save: scalars must hold " + nScalars + " values, got "
                    + (scalars == null ? "null" : scalars.length));
        }
    }

    /**
     * Collective over {@code comm} (the survivors, and under REBUILD the replacements): agrees on
     * the version to roll back to and returns the full vectors and scalars of it, or null if no
     * process holds a committed version (start again from the initial state).
     *
     * @throws CheckpointException (ERR_OTHER, at every process of {@code comm}) if the agreed
     *         version cannot be rebuilt: more of it was lost than the redundancy covers
     */
    public final State restore(Intracomm comm) throws MPIException {
        if (comm == null) throw CheckpointException.badArgument("restore: comm is null");
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
        committed = s != null ? seq : -1;
        return new State(out, scalars);
    }

    /** The error every process of a restore raises when the agreed version cannot be rebuilt. */
    static CheckpointException lost(String why) {
        return new CheckpointException(MPI.ERR_OTHER, "the checkpoint cannot be rebuilt: " + why);
    }

    private boolean holds(long seq) {
        return slots[0].seq == seq || slots[1].seq == seq;
    }
}
