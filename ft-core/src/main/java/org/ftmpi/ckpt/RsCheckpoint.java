package org.ftmpi.ckpt;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import org.ftmpi.ckpt.rs.ErasureCodeException;
import org.ftmpi.ckpt.rs.ReedSolomon;

/**
 * A diskless checkpoint ({@link DisklessCheckpoint}) protected by Reed-Solomon parity
 * ({@link ReedSolomon}, package {@code org.ftmpi.ckpt.rs}) spread over the ranks, RAID-6 style: it
 * survives the loss of any {@code m} processes and costs {@code m / (N - m)} of the data in
 * extra memory (buddy copies: 100 %, and only one failure per pair of neighbours).
 *
 * <p><b>Layout.</b> With N ranks, k = N - m. Rank r's checkpoint record {@code D_r} (its block
 * offset and length, then its blocks of every vector) is padded to a common length and cut into k
 * chunks of c bytes. There are N stripes; stripe s has the k data chunks {@code j = 0..k-1} of
 * ranks {@code (s + m + j) mod N} (chunk j of that rank) and m parity shards kept by ranks
 * {@code (s + p) mod N}, {@code p = 0..m-1}. Every rank keeps its own record and exactly one
 * parity shard of each index p; every stripe has its k + m shards on k + m different ranks, so
 * losing any m ranks leaves every stripe at least k shards, which decode.
 *
 * <pre>
 *   N = 4, m = 1 (k = 3):   stripe 0: parity on rank 0, data: chunk 0 of rank 1, 1 of 2, 2 of 3
 *                           stripe 1: parity on rank 1, data: chunk 0 of rank 2, 1 of 3, 2 of 0
 *                           ...
 * </pre>
 *
 * <p><b>Encoding without a coordinator.</b> Parity is linear: {@code P_p(s) = XOR_j C[p][j] *
 * data_j}. Each rank computes its own terms ({@link ReedSolomon#update} from zeros), lays them
 * out so that the term for {@code P_p(s)} sits in block {@code (s + p) mod N}, and one
 * {@code reduceScatterBlock(BXOR)} per parity index delivers every parity shard to its keeper.
 * Save: 1 + m MPI calls and the commit barrier.
 *
 * <p><b>Restore.</b> The survivors (and REBUILD replacements, holding nothing) agree on the size
 * of the version's layout, then one {@code allReduce(BXOR)} gives everyone every surviving record
 * and parity shard and which old ranks are present; each process decodes the lost chunks of every
 * stripe and rebuilds the whole vectors. This holds the full vectors on every rank for a moment,
 * as the buddy restore does ({@link DisklessCheckpoint}).
 */
final class RsCheckpoint extends DisklessCheckpoint {
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final int HEADER = 8; // a record starts with its block's global offset and length

    private static final class RsSlot extends Slot {
        int size, m, chunk; // the layout this version was saved with
        int rank;           // this process's rank in it
        byte[] record = new byte[0];    // own record, k * chunk bytes
        byte[][] parity = new byte[0][]; // [p]: parity p of stripe (rank - p) mod size
    }

    private final int wantedParity;
    private ReedSolomon codec;

    /** As {@link DisklessCheckpoint}, with {@code parity} parity shards per stripe (at most N - 1 used). */
    RsCheckpoint(int vectors, int length, int scalars, int parity) throws CheckpointException {
        super(vectors, length, scalars);
        if (parity < 1) throw CheckpointException.badArgument("parity: must be >= 1, got " + parity);
        this.wantedParity = parity;
    }

    @Override
    Slot newSlot() {
        return new RsSlot();
    }

    private ReedSolomon codec(int k, int m) {
        if (codec == null || codec.dataShards() != k || codec.parityShards() != m) codec = ReedSolomon.create(k, m);
        return codec;
    }

    @Override
    int write(Intracomm comm, Slot slot, double[][] blocks, int lo, int len) throws MPIException {
        RsSlot s = (RsSlot) slot;
        int size = comm.getSize(), rank = comm.getRank();
        int[] longest = {len};
        comm.allReduce(longest, 1, MPI.INT, MPI.MAX);
        s.size = size;
        s.rank = rank;
        s.m = Math.min(wantedParity, size - 1);
        int k = size - s.m;
        long bytes = HEADER + (long) vectors * longest[0] * Double.BYTES;
        s.chunk = (int) ((bytes + k - 1) / k);
        if (s.record.length != k * s.chunk) s.record = new byte[k * s.chunk];
        MemorySegment rec = MemorySegment.ofArray(s.record).fill((byte) 0);
        rec.set(INT, 0, lo);
        rec.set(INT, 4, len);
        for (int v = 0; v < vectors; v++) {
            MemorySegment.copy(MemorySegment.ofArray(blocks[v]), 0, rec, HEADER + (long) v * len * Double.BYTES,
                    (long) len * Double.BYTES);
        }
        s.parity = new byte[s.m][s.chunk];
        if (s.m == 0) return 1; // a single rank: nothing to protect it against
        ReedSolomon rs = codec(k, s.m);
        byte[][] terms = new byte[s.m][size * s.chunk];
        MemorySegment zero = MemorySegment.ofArray(new byte[s.chunk]);
        MemorySegment[] out = new MemorySegment[s.m];
        for (int j = 0; j < k; j++) {
            int stripe = Math.floorMod(rank - s.m - j, size); // the stripe holding my chunk j
            for (int p = 0; p < s.m; p++) {
                out[p] = MemorySegment.ofArray(terms[p]).asSlice((long) ((stripe + p) % size) * s.chunk, s.chunk);
            }
            rs.update(j, zero, rec.asSlice((long) j * s.chunk, s.chunk), out);
        }
        for (int p = 0; p < s.m; p++) {
            comm.reduceScatterBlock(terms[p], s.parity[p], s.chunk, MPI.BYTE, MPI.BXOR);
        }
        return 1 + s.m;
    }

    @Override
    double[][] rebuild(Intracomm comm, Slot slot) throws MPIException {
        RsSlot mine = slot instanceof RsSlot r ? r : null;
        int[] shape = mine == null ? new int[3] : new int[] {mine.size, mine.m, mine.chunk};
        comm.allReduce(shape, 3, MPI.INT, MPI.MAX); // every holder of the version has the same
        int size = shape[0], m = shape[1], c = shape[2], k = size - m;
        // per old rank: its record (k chunks), its m parity shards, and a presence byte
        int region = (k + m) * c + 1;
        byte[] all = new byte[size * region];
        if (mine != null) {
            int at = mine.rank * region;
            System.arraycopy(mine.record, 0, all, at, k * c);
            for (int p = 0; p < m; p++) System.arraycopy(mine.parity[p], 0, all, at + (k + p) * c, c);
            all[at + region - 1] = 1;
        }
        comm.allReduce(all, all.length, MPI.BYTE, MPI.BXOR);
        calls += 2;
        boolean[] alive = new boolean[size];
        int lostRanks = 0;
        for (int r = 0; r < size; r++) {
            alive[r] = all[r * region + region - 1] == 1;
            if (!alive[r]) lostRanks++;
        }
        if (lostRanks > m) {
            throw lost(lostRanks + " of the " + size + " processes that saved it failed; its Reed-Solomon"
                    + " parity covers " + m);
        }
        if (lostRanks > 0) {
            ReedSolomon rs = codec(k, m);
            byte[][] shards = new byte[k + m][];
            boolean[] present = new boolean[k + m];
            for (int stripe = 0; stripe < size; stripe++) {
                for (int j = 0; j < k; j++) {
                    int r = (stripe + m + j) % size;
                    shards[j] = slice(all, r * region + j * c, c);
                    present[j] = alive[r];
                }
                for (int p = 0; p < m; p++) {
                    int r = (stripe + p) % size;
                    shards[k + p] = slice(all, r * region + (k + p) * c, c);
                    present[k + p] = alive[r];
                }
                try {
                    rs.decode(shards, present);
                } catch (ErasureCodeException e) {
                    throw lost("stripe " + stripe + ": " + e.getMessage());
                }
                for (int j = 0; j < k; j++) {
                    int r = (stripe + m + j) % size;
                    if (!alive[r]) System.arraycopy(shards[j], 0, all, r * region + j * c, c);
                }
            }
        }
        double[][] out = new double[vectors][length];
        MemorySegment seg = MemorySegment.ofArray(all);
        for (int r = 0; r < size; r++) {
            long at = (long) r * region;
            int lo = seg.get(INT, at), len = seg.get(INT, at + 4);
            if (lo < 0 || len < 0 || (long) lo + len > length || HEADER + (long) vectors * len * Double.BYTES > (long) k * c) {
                throw lost("the record of rank " + r + " is inconsistent (offset " + lo + ", length " + len + ")");
            }
            for (int v = 0; v < vectors; v++) {
                MemorySegment.copy(seg, ValueLayout.JAVA_DOUBLE_UNALIGNED, at + HEADER + (long) v * len * Double.BYTES,
                        out[v], lo, len);
            }
        }
        return out;
    }

    private static byte[] slice(byte[] a, int from, int len) {
        byte[] b = new byte[len];
        System.arraycopy(a, from, b, 0, len);
        return b;
    }
}
