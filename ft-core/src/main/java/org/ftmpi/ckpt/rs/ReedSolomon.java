package org.ftmpi.ckpt.rs;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Systematic MDS Reed-Solomon erasure code over GF(2^8) (polynomial 0x11d) with {@code k} data and
 * {@code m} parity shards, {@code 1 <= k}, {@code 0 <= m}, {@code k + m <= 256}.
 *
 * <p>The generator is {@code [I_k ; C]} where C is the {@code m x k} Cauchy matrix
 * {@code C[p][j] = 1 / ((k + p) XOR j)}. Every square submatrix of a Cauchy matrix is non-singular,
 * hence every {@code k x k} submatrix of the generator is invertible and any k of the k + m shards
 * reconstruct the rest (see docs/erasure-coding.md). The coefficients equal ISA-L's
 * {@code gf_gen_cauchy1_matrix}, so parity is byte-identical to ISA-L's.
 *
 * <p>Buffers: {@code byte[]} (whole array), {@link ByteBuffer} (position to limit, positions are not
 * changed; heap or direct) and {@link MemorySegment} (whole segment, heap or native). All shards of a
 * call must have the same length (any length, including 0). Output buffers must not overlap inputs.
 * Instances are immutable apart from the bounded, thread-safe decode-matrix cache and may be shared
 * by threads; concurrent calls must of course use distinct output buffers.
 */
public final class ReedSolomon {

    /** Which kernel to use. AUTO = vector if jdk.incubator.vector is in the boot layer, else scalar. */
    public enum Backend { AUTO, VECTOR, SCALAR }

    public static final int DEFAULT_DECODE_CACHE = 256;

    private final int k;
    private final int m;
    private final Kernel kernel;
    private final byte[] generator; // (k+m) x k
    private final Kernel.Tables encodeTables; // m x k
    private final Kernel.Tables[] updateTables; // per data column, m x 1, lazily built
    private final DecodeCache cache;

    private ReedSolomon(int k, int m, Kernel kernel, int cacheSize) {
        checkShape(k, m);
        if (cacheSize < 1) throw new IllegalArgumentException("decodeCacheSize: must be >= 1, got " + cacheSize);
        this.k = k;
        this.m = m;
        this.kernel = kernel;
        this.generator = cauchyGenerator(k, m);
        this.encodeTables = kernel.prepare(Arrays.copyOfRange(generator, k * k, (k + m) * k), m, k);
        this.updateTables = new Kernel.Tables[k];
        this.cache = new DecodeCache(cacheSize);
    }

    public static ReedSolomon create(int k, int m) {
        return create(k, m, Backend.AUTO, DEFAULT_DECODE_CACHE);
    }

    public static ReedSolomon create(int k, int m, Backend backend) {
        return create(k, m, backend, DEFAULT_DECODE_CACHE);
    }

    /**
     * @param decodeCacheSize maximum number of loss patterns whose decode matrices are kept (LRU)
     * @throws IllegalArgumentException if k < 1, m < 0, k + m > 256 or decodeCacheSize < 1
     * @throws ErasureCodeException if VECTOR is requested but the vector module is absent
     */
    public static ReedSolomon create(int k, int m, Backend backend, int decodeCacheSize) {
        checkShape(k, m);
        return new ReedSolomon(k, m, Kernels.select(Objects.requireNonNull(backend, "backend")), decodeCacheSize);
    }

    static ReedSolomon withKernel(int k, int m, Kernel kernel) {
        return new ReedSolomon(k, m, kernel, DEFAULT_DECODE_CACHE);
    }

    /** True if the vector kernel can be used in this JVM. */
    public static boolean vectorAvailable() {
        return Kernels.vector().isPresent();
    }

    private static void checkShape(int k, int m) {
        if (k < 1) throw new IllegalArgumentException("k: number of data shards must be >= 1, got " + k);
        if (m < 0) throw new IllegalArgumentException("m: number of parity shards must be >= 0, got " + m);
        if (k + m > 256) {
            throw new IllegalArgumentException("k + m: must be <= 256 for GF(2^8), got k=" + k + ", m=" + m);
        }
    }

    /** {@code [I_k ; C]} with {@code C[p][j] = 1/((k+p) ^ j)}; row-major (k+m) x k. */
    static byte[] cauchyGenerator(int k, int m) {
        byte[] g = new byte[(k + m) * k];
        for (int i = 0; i < k; i++) g[i * k + i] = 1;
        for (int p = 0; p < m; p++) {
            for (int j = 0; j < k; j++) g[(k + p) * k + j] = (byte) GF256.inv((k + p) ^ j);
        }
        return g;
    }

    public int dataShards() {
        return k;
    }

    public int parityShards() {
        return m;
    }

    public int totalShards() {
        return k + m;
    }

    /** Name of the kernel in use, e.g. {@code vector-512} or {@code scalar-swar64}. */
    public String backendName() {
        return kernel.name();
    }

    /** A copy of the (k+m) x k generator matrix, row-major; the top k rows are the identity. */
    public byte[] generatorMatrix() {
        return generator.clone();
    }

    /** The coefficient of data shard {@code dataIndex} in parity shard {@code parityIndex}. */
    public int coefficient(int parityIndex, int dataIndex) {
        Objects.checkIndex(parityIndex, m);
        Objects.checkIndex(dataIndex, k);
        return generator[(k + parityIndex) * k + dataIndex] & 0xff;
    }

    /** Number of loss patterns currently cached. */
    public int cachedDecodePlans() {
        return cache.size();
    }

    // ------------------------------------------------------------------ encode

    /** Computes {@code parity[0..m)} from {@code data[0..k)}; all arrays of equal length. */
    public void encode(byte[][] data, byte[][] parity) {
        encode(Buffers.wrap(data, "data"), Buffers.wrap(parity, "parity"));
    }

    /** As {@link #encode(MemorySegment[], MemorySegment[])} on each buffer's position..limit. */
    public void encode(ByteBuffer[] data, ByteBuffer[] parity) {
        encode(Buffers.wrap(data, "data"), Buffers.wrap(parity, "parity"));
    }

    public void encode(MemorySegment[] data, MemorySegment[] parity) {
        Buffers.checkCount(data, k, "data");
        Buffers.checkCount(parity, m, "parity");
        long len = Buffers.commonLength(data, "data", -1);
        len = Buffers.commonLength(parity, "parity", len);
        Buffers.checkWritable(parity, "parity");
        if (m == 0 || len == 0) return;
        kernel.dot(encodeTables, data, parity, len);
    }

    // ------------------------------------------------------------------ update

    /**
     * Brings parity up to date after data shard {@code dataIndex} changed from {@code oldData} to
     * {@code newData}: {@code parity[p] ^= C[p][dataIndex] * (oldData ^ newData)}. Reads no other
     * data shard.
     */
    public void update(int dataIndex, byte[] oldData, byte[] newData, byte[][] parity) {
        Objects.requireNonNull(oldData, "oldData");
        Objects.requireNonNull(newData, "newData");
        update(dataIndex, MemorySegment.ofArray(oldData), MemorySegment.ofArray(newData), Buffers.wrap(parity, "parity"));
    }

    public void update(int dataIndex, ByteBuffer oldData, ByteBuffer newData, ByteBuffer[] parity) {
        Objects.requireNonNull(oldData, "oldData");
        Objects.requireNonNull(newData, "newData");
        update(dataIndex, MemorySegment.ofBuffer(oldData), MemorySegment.ofBuffer(newData), Buffers.wrap(parity, "parity"));
    }

    public void update(int dataIndex, MemorySegment oldData, MemorySegment newData, MemorySegment[] parity) {
        if (dataIndex < 0 || dataIndex >= k) {
            throw new IllegalArgumentException("dataIndex: must be in [0, " + k + "), got " + dataIndex);
        }
        Objects.requireNonNull(oldData, "oldData");
        Objects.requireNonNull(newData, "newData");
        Buffers.checkCount(parity, m, "parity");
        long len = oldData.byteSize();
        if (newData.byteSize() != len) {
            throw new IllegalArgumentException("newData: length " + newData.byteSize() + " differs from oldData length " + len);
        }
        Buffers.commonLength(parity, "parity", len);
        Buffers.checkWritable(parity, "parity");
        if (m == 0 || len == 0) return;
        Kernel.Tables t = updateTables[dataIndex];
        if (t == null) {
            byte[] col = new byte[m];
            for (int p = 0; p < m; p++) col[p] = generator[(k + p) * k + dataIndex];
            t = kernel.prepare(col, m, 1);
            updateTables[dataIndex] = t; // benign race: Tables is immutable with final fields
        }
        kernel.update(t, oldData, newData, parity, len);
    }

    // ------------------------------------------------------------------ decode

    /**
     * Reconstructs every shard {@code i} with {@code !present[i]} from the present ones.
     * {@code shards} has k + m entries (data then parity); missing entries may be {@code null} (a new
     * array is allocated and stored) or an array of the common length that is overwritten.
     *
     * @throws ErasureCodeException if fewer than k shards are present
     */
    public void decode(byte[][] shards, boolean[] present) {
        Objects.requireNonNull(shards, "shards");
        Buffers.checkCount(present, k + m);
        if (shards.length != k + m) {
            throw new IllegalArgumentException("shards: expected " + (k + m) + " entries (k + m), got " + shards.length);
        }
        int len = -1;
        for (int i = 0; i < shards.length; i++) {
            if (present[i]) {
                if (shards[i] == null) throw new IllegalArgumentException("shards[" + i + "]: present but null");
                if (len < 0) len = shards[i].length;
            }
        }
        for (int i = 0; i < shards.length; i++) {
            if (!present[i] && shards[i] == null && len >= 0) shards[i] = new byte[len];
        }
        MemorySegment[] segs = new MemorySegment[shards.length];
        for (int i = 0; i < shards.length; i++) {
            segs[i] = shards[i] == null ? null : MemorySegment.ofArray(shards[i]);
        }
        decode(segs, present);
    }

    /** As {@link #decode(MemorySegment[], boolean[])} on each buffer's position..limit. */
    public void decode(ByteBuffer[] shards, boolean[] present) {
        decode(Buffers.wrap(shards, "shards"), present);
    }

    /**
     * Reconstructs every shard {@code i} with {@code !present[i]} into {@code shards[i]} (which must
     * be a writable segment of the common length) from the present ones.
     *
     * @throws ErasureCodeException if fewer than k shards are present
     */
    public void decode(MemorySegment[] shards, boolean[] present) {
        Buffers.checkCount(present, k + m);
        Buffers.checkCount(shards, k + m, "shards");
        int have = 0;
        for (boolean p : present) if (p) have++;
        if (have < k) {
            throw new ErasureCodeException("present: only " + have + " of " + (k + m) + " shards present, "
                    + (k + m - have) + " lost; need k=" + k + " (at most m=" + m + " losses)");
        }
        if (have == k + m) return;
        long len = Buffers.commonLength(shards, "shards", -1);
        for (int i = 0; i < shards.length; i++) {
            if (!present[i] && shards[i].isReadOnly()) {
                throw new IllegalArgumentException("shards[" + i + "]: missing shard's buffer is read-only");
            }
        }
        DecodePlan plan = plan(present);
        if (len == 0) return;
        MemorySegment[] in = new MemorySegment[k];
        for (int i = 0; i < k; i++) in[i] = shards[plan.sources[i]];
        MemorySegment[] out = new MemorySegment[plan.missing.length];
        for (int i = 0; i < out.length; i++) out[i] = shards[plan.missing[i]];
        kernel.dot(plan.tables, in, out, len);
    }

    /** Decode matrix for one loss pattern: missing rows expressed over the first k present shards. */
    record DecodePlan(int[] sources, int[] missing, Kernel.Tables tables) {}

    private DecodePlan plan(boolean[] present) {
        long[] key = new long[4];
        for (int i = 0; i < present.length; i++) if (present[i]) key[i >>> 6] |= 1L << i;
        PatternKey pk = new PatternKey(key[0], key[1], key[2], key[3]);
        DecodePlan plan = cache.get(pk);
        if (plan == null) {
            plan = buildPlan(present);
            cache.put(pk, plan);
        }
        return plan;
    }

    DecodePlan buildPlan(boolean[] present) {
        int[] sources = new int[k];
        int[] missing = new int[k + m];
        int ns = 0, nm = 0;
        for (int i = 0; i < k + m; i++) {
            if (present[i]) {
                if (ns < k) sources[ns++] = i;
            } else {
                missing[nm++] = i;
            }
        }
        missing = Arrays.copyOf(missing, nm);
        byte[] sub = new byte[k * k];
        for (int r = 0; r < k; r++) System.arraycopy(generator, sources[r] * k, sub, r * k, k);
        byte[] inv = GF256.invert(sub, k);
        if (inv == null) {
            // Cannot happen for an MDS generator; guard against silent corruption anyway.
            throw new ErasureCodeException("present: generator submatrix for sources " + Arrays.toString(sources) + " is singular");
        }
        byte[] rows = new byte[nm * k];
        for (int r = 0; r < nm; r++) {
            byte[] g = Arrays.copyOfRange(generator, missing[r] * k, missing[r] * k + k);
            System.arraycopy(GF256.matMul(g, 1, k, inv, k), 0, rows, r * k, k);
        }
        return new DecodePlan(sources, missing, kernel.prepare(rows, nm, k));
    }

    private record PatternKey(long w0, long w1, long w2, long w3) {}

    /** Bounded LRU map, all access under the instance lock; plans are built outside it. */
    private static final class DecodeCache {
        private final Map<PatternKey, DecodePlan> map;

        DecodeCache(int capacity) {
            this.map = new LinkedHashMap<>(16, 0.75f, true) {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(Map.Entry<PatternKey, DecodePlan> e) {
                    return size() > capacity;
                }
            };
        }

        synchronized DecodePlan get(PatternKey key) {
            return map.get(key);
        }

        synchronized void put(PatternKey key, DecodePlan plan) {
            map.putIfAbsent(key, plan);
        }

        synchronized int size() {
            return map.size();
        }
    }

    @Override
    public String toString() {
        return "ReedSolomon[k=" + k + ", m=" + m + ", kernel=" + kernel.name() + "]";
    }
}
