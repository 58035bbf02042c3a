package org.ftmpi.ckpt.rs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The k + m shards of one stripe (slots 0..k-1 data, k..k+m-1 parity), each possibly absent. All
 * shards have the same length. {@link #reconstruct} checks every present shard's CRC32C, treats the
 * corrupt ones as lost and rebuilds all lost shards, so a corrupted shard is never used for decoding.
 * Not thread-safe.
 */
public final class ShardSet {
    private final int k;
    private final int m;
    private final long shardLength;
    private final Shard[] slots;

    public ShardSet(int k, int m, long shardLength) {
        if (k < 1) throw new IllegalArgumentException("k: must be >= 1, got " + k);
        if (m < 0) throw new IllegalArgumentException("m: must be >= 0, got " + m);
        if (k + m > 256) throw new IllegalArgumentException("k + m: must be <= 256, got " + (k + m));
        if (shardLength < 0) throw new IllegalArgumentException("shardLength: must be >= 0, got " + shardLength);
        this.k = k;
        this.m = m;
        this.shardLength = shardLength;
        this.slots = new Shard[k + m];
    }

    /**
     * Encodes {@code parity} from {@code data} with {@code rs} and returns the sealed (checksummed)
     * stripe holding all k + m shards.
     */
    public static ShardSet encode(ReedSolomon rs, MemorySegment[] data, MemorySegment[] parity) {
        rs.encode(data, parity);
        ShardSet set = new ShardSet(rs.dataShards(), rs.parityShards(), data[0].byteSize());
        for (int i = 0; i < data.length; i++) set.put(Shard.seal(i, data[i]));
        for (int i = 0; i < parity.length; i++) set.put(Shard.seal(rs.dataShards() + i, parity[i]));
        return set;
    }

    public int dataShards() {
        return k;
    }

    public int parityShards() {
        return m;
    }

    public long shardLength() {
        return shardLength;
    }

    /** Stores a shard in its slot (replacing any previous one). */
    public ShardSet put(Shard shard) {
        Objects.requireNonNull(shard, "shard");
        if (shard.index() >= k + m) {
            throw new IllegalArgumentException("shard: index " + shard.index() + " out of range [0, " + (k + m) + ")");
        }
        if (shard.length() != shardLength) {
            throw new IllegalArgumentException("shard[" + shard.index() + "]: length " + shard.length()
                    + " differs from the stripe's shard length " + shardLength);
        }
        slots[shard.index()] = shard;
        return this;
    }

    /** The shard in slot {@code index}, or null if absent. */
    public Shard get(int index) {
        return slots[Objects.checkIndex(index, k + m)];
    }

    public void remove(int index) {
        slots[Objects.checkIndex(index, k + m)] = null;
    }

    /** Indices of the present shards whose CRC32C does not match. */
    public int[] corruptShards() {
        List<Integer> bad = new ArrayList<>();
        for (Shard s : slots) if (s != null && !s.verify()) bad.add(s.index());
        return bad.stream().mapToInt(Integer::intValue).toArray();
    }

    /** Outcome of {@link #reconstruct}: which slots were absent and which were corrupt (both rebuilt). */
    public record Repair(int[] missing, int[] corrupt) {
        /** Whether every shard was present and intact (nothing was rebuilt). */
        public boolean intact() {
            return missing.length == 0 && corrupt.length == 0;
        }

        @Override
        public String toString() {
            return "Repair[missing=" + Arrays.toString(missing) + ", corrupt=" + Arrays.toString(corrupt) + "]";
        }
    }

    /**
     * Verifies every present shard, drops the corrupt ones, and rebuilds every absent or corrupt shard
     * into new segments from {@code arena}, sealing them with fresh CRCs.
     *
     * @throws ErasureCodeException if fewer than k intact shards remain (nothing is modified then)
     */
    public Repair reconstruct(ReedSolomon rs, Arena arena) {
        Objects.requireNonNull(rs, "rs");
        Objects.requireNonNull(arena, "arena");
        if (rs.dataShards() != k || rs.parityShards() != m) {
            throw new IllegalArgumentException("rs: codec is (" + rs.dataShards() + "," + rs.parityShards()
                    + ") but the stripe is (" + k + "," + m + ")");
        }
        List<Integer> missing = new ArrayList<>(), corrupt = new ArrayList<>();
        boolean[] present = new boolean[k + m];
        for (int i = 0; i < k + m; i++) {
            if (slots[i] == null) {
                missing.add(i);
            } else if (!slots[i].verify()) {
                corrupt.add(i);
            } else {
                present[i] = true;
            }
        }
        int good = k + m - missing.size() - corrupt.size();
        if (good < k) {
            throw new ErasureCodeException("shards: only " + good + " intact shards, need k=" + k
                    + " (missing " + missing + ", corrupt by CRC32C " + corrupt + ")");
        }
        Repair repair = new Repair(missing.stream().mapToInt(Integer::intValue).toArray(),
                corrupt.stream().mapToInt(Integer::intValue).toArray());
        if (repair.intact()) return repair;
        MemorySegment[] segs = new MemorySegment[k + m];
        for (int i = 0; i < k + m; i++) {
            segs[i] = present[i] ? slots[i].data() : arena.allocate(Math.max(shardLength, 1), 64).asSlice(0, shardLength);
        }
        rs.decode(segs, present);
        for (int i = 0; i < k + m; i++) {
            if (!present[i]) slots[i] = Shard.seal(i, segs[i]);
        }
        return repair;
    }

    /** The k data payloads in order; all must be present. */
    public MemorySegment[] dataSegments() {
        MemorySegment[] d = new MemorySegment[k];
        for (int i = 0; i < k; i++) {
            if (slots[i] == null) throw new ErasureCodeException("shards: data shard " + i + " is absent; reconstruct first");
            d[i] = slots[i].data();
        }
        return d;
    }
}
