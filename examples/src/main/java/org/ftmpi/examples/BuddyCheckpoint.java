package org.ftmpi.examples;

import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;

/**
 * A diskless checkpoint ({@link DisklessCheckpoint}) by buddy copies: {@link #save} keeps the
 * rank's own blocks and sends a copy of them to its buddy, the next rank (ring order), which keeps
 * them too. Every block lives in two processes, so any failure that does not take a rank and its
 * buddy together loses nothing; the redundancy costs 100 % of the data. The restore rebuilds the
 * whole vectors from whatever own and buddy blocks of the agreed version the survivors hold: an
 * {@code allReduce(SUM)} of the blocks and of a coverage count (a block held twice is summed
 * twice and divided by two: bit-exact). {@link RsCheckpoint} needs less memory and survives any
 * m failures.
 */
final class BuddyCheckpoint extends DisklessCheckpoint {
    private static final class BuddySlot extends Slot {
        int ownLo, ownLen, buddyLo, buddyLen;
        double[] own = new double[0], buddy = new double[0]; // vectors one after the other
    }

    BuddyCheckpoint(int vectors, int length, int scalars) {
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

    /** One allReduce(SUM) of the blocks and their coverage counts. */
    @Override
    double[][] rebuild(Intracomm comm, Slot slot) throws MPIException {
        // the vectors one after the other, then the coverage count of each index
        double[] sum = new double[(vectors + 1) * length];
        if (slot instanceof BuddySlot s) {
            add(sum, s.own, s.ownLo, s.ownLen);
            add(sum, s.buddy, s.buddyLo, s.buddyLen);
        }
        comm.allReduce(sum, sum.length, MPI.DOUBLE, MPI.SUM);
        calls++;
        double[][] out = new double[vectors][length];
        for (int i = 0; i < length; i++) {
            double c = sum[vectors * length + i];
            if (c == 0) {
                lost(comm, "element " + i + " was held only by failed processes (a rank and its buddy failed together)");
                return null;
            }
            for (int v = 0; v < vectors; v++) out[v][i] = sum[v * length + i] / c;
        }
        return out;
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
