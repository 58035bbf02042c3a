package org.ftmpi.ckpt;

import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;

/**
 * A diskless checkpoint ({@link DisklessCheckpoint}) by buddy copies: {@link #save} keeps the
 * rank's own blocks and sends a copy of them to its buddy, the next rank (ring order), which keeps
 * them too. Every block lives in two processes, so any failure that does not take a rank and its
 * buddy together loses nothing; the redundancy costs 100 % of the data. The restore rebuilds the
 * whole vectors from whatever own and buddy blocks of the agreed version the survivors hold, bit
 * for bit (see {@link #rebuild}). {@link RsCheckpoint} needs less memory and survives any
 * m failures.
 */
final class BuddyCheckpoint extends DisklessCheckpoint {
    private static final class BuddySlot extends Slot {
        int ownLo, ownLen, buddyLo, buddyLen;
        double[] own = new double[0], buddy = new double[0]; // vectors one after the other
    }

    BuddyCheckpoint(int vectors, int length, int scalars) throws CheckpointException {
        super(vectors, length, scalars);
    }

    @Override
    Slot newSlot() {
        return new BuddySlot();
    }

    /** Keeps the own blocks, and the left neighbour's as its buddy. 2 MPI calls. */
    @Override
    int write(Intracomm comm, Slot slot, double[][] blocks, int lo, int len) throws MPIException {
        BuddySlot s = (BuddySlot) slot;
        int size = comm.getSize(), rank = comm.getRank();
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
        return 2;
    }

    private static final byte OWN = 1, COPY = 2;

    /**
     * Two reductions. First a bitwise OR of one byte per element: who holds it ({@link #OWN}: the
     * rank that saved it, {@link #COPY}: its buddy). Then every element is contributed by exactly
     * one holder (the owner if it survived, else the buddy) as its raw bits, and a bitwise XOR of
     * them gives every process the exact bits that were saved: no arithmetic touches a value
     * (a sum of the two copies halved would turn -0.0 into +0.0 and overflow above half of
     * Double.MAX_VALUE).
     */
    @Override
    double[][] rebuild(Intracomm comm, Slot slot) throws MPIException {
        BuddySlot s = slot instanceof BuddySlot b ? b : null;
        byte[] held = new byte[length];
        if (s != null) {
            mark(held, s.ownLo, s.ownLen, OWN);
            mark(held, s.buddyLo, s.buddyLen, COPY);
        }
        comm.allReduce(held, length, MPI.BYTE, MPI.BOR);
        for (int i = 0; i < length; i++) {
            if (held[i] == 0) {
                throw lost("element " + i + " was held only by failed processes (a rank and its buddy failed together)");
            }
        }
        long[] bits = new long[vectors * length]; // the vectors one after the other
        if (s != null) {
            contribute(bits, held, s.own, s.ownLo, s.ownLen, OWN);
            contribute(bits, held, s.buddy, s.buddyLo, s.buddyLen, COPY);
        }
        comm.allReduce(bits, bits.length, MPI.LONG, MPI.BXOR);
        calls += 2;
        double[][] out = new double[vectors][length];
        for (int v = 0; v < vectors; v++) {
            for (int i = 0; i < length; i++) out[v][i] = Double.longBitsToDouble(bits[v * length + i]);
        }
        return out;
    }

    private static void mark(byte[] held, int lo, int len, byte who) {
        for (int i = lo; i < lo + len; i++) held[i] |= who;
    }

    /** Puts the raw bits of {@code data}'s elements that this copy ({@code who}) is the one to give. */
    private void contribute(long[] bits, byte[] held, double[] data, int lo, int len, byte who) {
        for (int i = 0; i < len; i++) {
            boolean mine = who == OWN || (held[lo + i] & OWN) == 0; // the buddy gives only what no owner holds
            if (!mine) continue;
            for (int v = 0; v < vectors; v++) bits[v * length + lo + i] = Double.doubleToRawLongBits(data[v * len + i]);
        }
    }
}
