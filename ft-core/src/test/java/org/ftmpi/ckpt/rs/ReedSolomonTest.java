package org.ftmpi.ckpt.rs;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ReedSolomonTest {

    static Kernel vector() {
        return Kernels.vector().orElseThrow(() -> new AssertionError("tests run with --add-modules jdk.incubator.vector"));
    }

    static List<Kernel> kernels() {
        return List.of(vector(), ScalarKernel.INSTANCE);
    }

    static byte[][] random(Random rnd, int n, int len) {
        byte[][] a = new byte[n][len];
        for (byte[] x : a) rnd.nextBytes(x);
        return a;
    }

    /** Independent reference: byte-wise products with the bit-serial multiply. */
    static byte[][] referenceParity(ReedSolomon rs, byte[][] data) {
        int k = rs.dataShards(), m = rs.parityShards(), len = data[0].length;
        byte[][] p = new byte[m][len];
        for (int r = 0; r < m; r++) {
            for (int c = 0; c < k; c++) {
                int coef = rs.coefficient(r, c);
                for (int i = 0; i < len; i++) p[r][i] ^= (byte) GF256.mulSlow(coef, data[c][i]);
            }
        }
        return p;
    }

    static Stream<Arguments> exhaustiveShapes() {
        List<Arguments> a = new ArrayList<>();
        for (int k = 1; k <= 6; k++) for (int m = 1; m <= 3; m++) a.add(Arguments.of(k, m));
        a.add(Arguments.of(8, 2));
        a.add(Arguments.of(10, 4));
        return a.stream();
    }

    /** Every loss pattern of 1..m shards, both kernels, bit-exact. */
    @ParameterizedTest(name = "k={0} m={1}")
    @MethodSource("exhaustiveShapes")
    @Timeout(30)
    void everyLossPatternIsReconstructed(int k, int m) {
        Random rnd = new Random(k * 31 + m);
        for (Kernel kernel : kernels()) {
            ReedSolomon rs = ReedSolomon.withKernel(k, m, kernel);
            int len = 1 + rnd.nextInt(200); // mostly not a multiple of the vector width
            byte[][] data = random(rnd, k, len);
            byte[][] parity = new byte[m][len];
            rs.encode(data, parity);
            byte[][] ref = referenceParity(rs, data);
            for (int p = 0; p < m; p++) assertArrayEquals(ref[p], parity[p], kernel.name() + " parity " + p);
            byte[][] all = Stream.concat(Arrays.stream(data), Arrays.stream(parity)).toArray(byte[][]::new);
            int n = k + m, patterns = 0;
            for (int mask = 1; mask < (1 << n); mask++) {
                if (Integer.bitCount(mask) > m) continue;
                byte[][] shards = new byte[n][];
                boolean[] present = new boolean[n];
                for (int i = 0; i < n; i++) {
                    present[i] = (mask & (1 << i)) == 0;
                    // lost shards: half the time null (allocated), half the time garbage to overwrite
                    shards[i] = present[i] ? all[i].clone() : ((mask & 1) == 0 ? null : random(rnd, 1, len)[0]);
                }
                rs.decode(shards, present);
                for (int i = 0; i < n; i++) {
                    assertArrayEquals(all[i], shards[i], kernel.name() + " k=" + k + " m=" + m + " lost=" + Integer.toBinaryString(mask) + " shard " + i);
                }
                patterns++;
            }
            assertTrue(patterns > 0);
        }
    }

    static final int[] LENGTHS = {0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 1000,
            4095, 4096, 4097, 16383, 16384, 16385, 3 * 16384 + 77, 100_003};

    @Test
    @Timeout(90) // ~5 s idle; generous because CI machines are shared
    void vectorAndScalarAgreeOnAllLengthsAndBufferKinds() {
        Random rnd = new Random(11);
        int[][] shapes = {{4, 2}, {5, 3}, {8, 2}, {10, 4}, {16, 4}, {7, 6}, {3, 9}, {20, 10}};
        for (int[] s : shapes) {
            int k = s[0], m = s[1];
            ReedSolomon vec = ReedSolomon.withKernel(k, m, vector());
            ReedSolomon sca = ReedSolomon.withKernel(k, m, ScalarKernel.INSTANCE);
            for (int len : LENGTHS) {
                byte[][] data = random(rnd, k, len);
                byte[][] pv = new byte[m][len], ps = new byte[m][len];
                vec.encode(data, pv);
                sca.encode(data, ps);
                for (int p = 0; p < m; p++) assertArrayEquals(ps[p], pv[p], "k=" + k + " m=" + m + " len=" + len);
                if (len <= 300) {
                    byte[][] ref = referenceParity(vec, data);
                    for (int p = 0; p < m; p++) assertArrayEquals(ref[p], pv[p]);
                }
                // direct ByteBuffers with non-zero position, heap ByteBuffers, native segments
                ByteBuffer[] dd = new ByteBuffer[k], dp = new ByteBuffer[m];
                for (int i = 0; i < k; i++) dd[i] = ByteBuffer.allocateDirect(len + 3).position(3).put(data[i]).position(3);
                for (int i = 0; i < m; i++) dp[i] = ByteBuffer.allocateDirect(len + 5).position(5);
                vec.encode(dd, dp);
                for (int p = 0; p < m; p++) {
                    byte[] got = new byte[len];
                    dp[p].get(5, got);
                    assertArrayEquals(ps[p], got, "direct ByteBuffer len=" + len);
                    assertEquals(5, dp[p].position(), "positions are not moved");
                }
                ByteBuffer[] hd = new ByteBuffer[k], hp = new ByteBuffer[m];
                for (int i = 0; i < k; i++) hd[i] = ByteBuffer.wrap(data[i]);
                for (int i = 0; i < m; i++) hp[i] = ByteBuffer.allocate(len);
                sca.encode(hd, hp);
                for (int p = 0; p < m; p++) assertArrayEquals(ps[p], hp[p].array());
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment[] sd = new MemorySegment[k], sp = new MemorySegment[m];
                    for (int i = 0; i < k; i++) sd[i] = arena.allocate(len + 1, 1).asSlice(1, len).copyFrom(MemorySegment.ofArray(data[i]));
                    for (int i = 0; i < m; i++) sp[i] = arena.allocate(len + 1, 1).asSlice(1, len);
                    vec.encode(sd, sp);
                    for (int p = 0; p < m; p++) assertArrayEquals(ps[p], sp[p].toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
                }
            }
        }
    }

    @Test
    @Timeout(60)
    void decodeAgreesAcrossKernelsAndBuffers() {
        Random rnd = new Random(12);
        int[][] shapes = {{4, 2}, {8, 2}, {16, 4}, {10, 4}, {30, 20}};
        for (int[] s : shapes) {
            int k = s[0], m = s[1];
            for (int len : new int[] {0, 1, 63, 64, 65, 16385, 70_001}) {
                byte[][] data = random(rnd, k, len);
                byte[][] parity = new byte[m][len];
                ReedSolomon.withKernel(k, m, ScalarKernel.INSTANCE).encode(data, parity);
                byte[][] all = Stream.concat(Arrays.stream(data), Arrays.stream(parity)).toArray(byte[][]::new);
                for (int trial = 0; trial < 4; trial++) {
                    boolean[] present = new boolean[k + m];
                    Arrays.fill(present, true);
                    int lose = trial == 0 ? m : 1 + rnd.nextInt(m);
                    for (int l = 0; l < lose; ) {
                        int i = rnd.nextInt(k + m);
                        if (present[i]) { present[i] = false; l++; }
                    }
                    for (Kernel kernel : kernels()) {
                        ReedSolomon rs = ReedSolomon.withKernel(k, m, kernel);
                        ByteBuffer[] bufs = new ByteBuffer[k + m];
                        for (int i = 0; i < k + m; i++) {
                            bufs[i] = ByteBuffer.allocateDirect(len);
                            if (present[i]) bufs[i].put(0, all[i]);
                        }
                        rs.decode(bufs, present);
                        for (int i = 0; i < k + m; i++) {
                            byte[] got = new byte[len];
                            bufs[i].get(0, got);
                            assertArrayEquals(all[i], got, kernel.name() + " k=" + k + " m=" + m + " len=" + len + " shard " + i);
                        }
                    }
                }
            }
        }
    }

    @Test
    @Timeout(60)
    void updateEqualsFullReencode() {
        Random rnd = new Random(13);
        for (Kernel kernel : kernels()) {
            for (int[] s : new int[][] {{4, 2}, {10, 4}, {16, 4}, {6, 7}, {1, 3}}) {
                int k = s[0], m = s[1];
                ReedSolomon rs = ReedSolomon.withKernel(k, m, kernel);
                for (int len : new int[] {0, 1, 17, 64, 129, 16384 + 9, 50_000}) {
                    byte[][] data = random(rnd, k, len);
                    byte[][] parity = new byte[m][len];
                    rs.encode(data, parity);
                    for (int round = 0; round < 3; round++) {
                        int j = rnd.nextInt(k);
                        byte[] neu = random(rnd, 1, len)[0];
                        rs.update(j, data[j], neu, parity);
                        data[j] = neu;
                        byte[][] expect = new byte[m][len];
                        rs.encode(data, expect);
                        for (int p = 0; p < m; p++) assertArrayEquals(expect[p], parity[p], kernel.name() + " len=" + len);
                    }
                    // MemorySegment and direct ByteBuffer variants
                    int j = rnd.nextInt(k);
                    byte[] neu = random(rnd, 1, len)[0];
                    MemorySegment[] ps = new MemorySegment[m];
                    ByteBuffer[] pb = new ByteBuffer[m];
                    for (int p = 0; p < m; p++) {
                        ps[p] = Arena.ofAuto().allocate(Math.max(len, 1)).asSlice(0, len).copyFrom(MemorySegment.ofArray(parity[p]));
                        pb[p] = ByteBuffer.allocateDirect(len).put(0, parity[p]);
                    }
                    rs.update(j, MemorySegment.ofArray(data[j]), MemorySegment.ofArray(neu), ps);
                    rs.update(j, ByteBuffer.wrap(data[j]), ByteBuffer.wrap(neu), pb);
                    data[j] = neu;
                    byte[][] expect = new byte[m][len];
                    rs.encode(data, expect);
                    for (int p = 0; p < m; p++) {
                        assertArrayEquals(expect[p], ps[p].toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
                        byte[] got = new byte[len];
                        pb[p].get(0, got);
                        assertArrayEquals(expect[p], got);
                    }
                }
            }
        }
    }

    /** Every k x k submatrix of the generator (i.e. every choice of k rows) is invertible. */
    @Test
    @Timeout(30)
    void generatorIsMdsExhaustively() {
        int[][] shapes = {{1, 1}, {4, 2}, {5, 3}, {6, 3}, {8, 2}, {10, 4}, {16, 4}, {12, 6}};
        for (int[] s : shapes) {
            int k = s[0], m = s[1];
            byte[] g = ReedSolomon.cauchyGenerator(k, m);
            int[] rows = new int[k];
            for (int i = 0; i < k; i++) rows[i] = i;
            long count = 0;
            do {
                assertTrue(GF256.isInvertible(select(g, k, rows), k), "k=" + k + " m=" + m + " rows " + Arrays.toString(rows));
                count++;
            } while (nextCombination(rows, k + m));
            assertEquals(binomial(k + m, k), count);
        }
    }

    @Test
    @Timeout(30)
    void generatorIsMdsSampled() {
        Random rnd = new Random(14);
        int[][] shapes = {{20, 10, 3000}, {32, 32, 300}, {100, 28, 40}, {128, 128, 8}, {250, 6, 5}, {255, 1, 3}};
        for (int[] s : shapes) {
            int k = s[0], m = s[1];
            byte[] g = ReedSolomon.cauchyGenerator(k, m);
            for (int t = 0; t < s[2]; t++) {
                // bias towards many parity rows: the hard cases
                int[] perm = rnd.ints(0, k + m).distinct().limit(k + m).toArray();
                int[] rows = Arrays.copyOf(perm, k);
                Arrays.sort(rows);
                assertTrue(GF256.isInvertible(select(g, k, rows), k), "k=" + k + " m=" + m + " rows " + Arrays.toString(rows));
            }
            // all parity rows plus the first k - m data rows
            if (m <= k) {
                int[] rows = new int[k];
                for (int i = 0; i < k - m; i++) rows[i] = i;
                for (int i = 0; i < m; i++) rows[k - m + i] = k + i;
                assertTrue(GF256.isInvertible(select(g, k, rows), k));
            }
        }
    }

    /**
     * Negative control: [I; g^(p*j)] (the uncorrected Vandermonde-style matrix, also what ISA-L's
     * gf_gen_rs_matrix builds) is not MDS. Its 2x2 parity minor over rows p1,p2 and columns j1,j2
     * vanishes when (p1-p2)(j1-j2) = 0 mod 255, e.g. p = {0, 3}, j = {0, 85}; the same selection
     * from the Cauchy generator is invertible.
     */
    @Test
    void mdsCheckRejectsUncorrectedVandermonde() {
        int k = 90, m = 4;
        byte[] naive = new byte[(k + m) * k];
        for (int i = 0; i < k; i++) naive[i * k + i] = 1;
        for (int p = 0; p < m; p++) for (int j = 0; j < k; j++) naive[(k + p) * k + j] = (byte) GF256.exp(p * j);
        int[] rows = new int[k];
        int n = 0;
        for (int i = 0; i < k; i++) if (i != 0 && i != 85) rows[n++] = i;
        rows[n++] = k;      // parity row p = 0
        rows[n++] = k + 3;  // parity row p = 3
        assertFalse(GF256.isInvertible(select(naive, k, rows), k), "data shards 0 and 85 would be unrecoverable");
        assertTrue(GF256.isInvertible(select(ReedSolomon.cauchyGenerator(k, m), k, rows), k));
    }

    static byte[] select(byte[] g, int k, int[] rows) {
        byte[] sub = new byte[k * k];
        for (int r = 0; r < k; r++) System.arraycopy(g, rows[r] * k, sub, r * k, k);
        return sub;
    }

    static boolean nextCombination(int[] c, int n) {
        int k = c.length, i = k - 1;
        while (i >= 0 && c[i] == n - k + i) i--;
        if (i < 0) return false;
        c[i]++;
        for (int j = i + 1; j < k; j++) c[j] = c[j - 1] + 1;
        return true;
    }

    static long binomial(int n, int k) {
        long r = 1;
        for (int i = 1; i <= k; i++) r = r * (n - k + i) / i;
        return r;
    }

    @Test
    void decodeCacheIsBoundedAndThreadSafe() throws Exception {
        int k = 10, m = 4, len = 5000;
        ReedSolomon rs = ReedSolomon.create(k, m, ReedSolomon.Backend.AUTO, 3);
        Random rnd = new Random(15);
        byte[][] data = random(rnd, k, len);
        byte[][] parity = new byte[m][len];
        rs.encode(data, parity);
        byte[][] all = Stream.concat(Arrays.stream(data), Arrays.stream(parity)).toArray(byte[][]::new);
        ExecutorService ex = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                long seed = t;
                fs.add(ex.submit(() -> {
                    Random r = new Random(seed);
                    for (int it = 0; it < 40; it++) {
                        boolean[] present = new boolean[k + m];
                        Arrays.fill(present, true);
                        for (int l = 0; l < m; l++) present[r.nextInt(k + m)] = false;
                        byte[][] shards = new byte[k + m][];
                        for (int i = 0; i < k + m; i++) shards[i] = present[i] ? all[i] : null;
                        rs.decode(shards, present);
                        for (int i = 0; i < k + m; i++) assertArrayEquals(all[i], shards[i]);
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) f.get(30, TimeUnit.SECONDS);
        } finally {
            ex.shutdownNow();
        }
        assertTrue(rs.cachedDecodePlans() <= 3, "cache bounded: " + rs.cachedDecodePlans());
        assertTrue(rs.cachedDecodePlans() >= 1);
    }

    @Test
    void badArgumentsAreNamed() {
        assertMessage(IllegalArgumentException.class, "k:", () -> ReedSolomon.create(0, 2));
        assertMessage(IllegalArgumentException.class, "m:", () -> ReedSolomon.create(4, -1));
        assertMessage(IllegalArgumentException.class, "k + m", () -> ReedSolomon.create(200, 57));
        assertDoesNotThrow(() -> ReedSolomon.create(200, 56));
        assertDoesNotThrow(() -> ReedSolomon.create(256, 0));
        assertMessage(IllegalArgumentException.class, "decodeCacheSize", () -> ReedSolomon.create(4, 2, ReedSolomon.Backend.AUTO, 0));

        ReedSolomon rs = ReedSolomon.create(4, 2);
        assertMessage(IllegalArgumentException.class, "data: expected 4", () -> rs.encode(new byte[3][8], new byte[2][8]));
        assertMessage(IllegalArgumentException.class, "parity: expected 2", () -> rs.encode(new byte[4][8], new byte[3][8]));
        byte[][] uneven = {new byte[8], new byte[8], new byte[9], new byte[8]};
        assertMessage(IllegalArgumentException.class, "data[2]: length 9", () -> rs.encode(uneven, new byte[2][8]));
        assertMessage(IllegalArgumentException.class, "parity[1]: length 7", () -> rs.encode(new byte[4][8], new byte[][] {new byte[8], new byte[7]}));
        assertMessage(IllegalArgumentException.class, "data[1]: null", () -> rs.encode(new byte[][] {new byte[8], null, new byte[8], new byte[8]}, new byte[2][8]));
        ByteBuffer ro = ByteBuffer.allocateDirect(8).asReadOnlyBuffer();
        ByteBuffer[] d = {ByteBuffer.allocate(8), ByteBuffer.allocate(8), ByteBuffer.allocate(8), ByteBuffer.allocate(8)};
        assertMessage(IllegalArgumentException.class, "parity[0]: read-only", () -> rs.encode(d, new ByteBuffer[] {ro, ByteBuffer.allocate(8)}));

        // more than m losses
        byte[][] shards = new byte[6][8];
        boolean[] present = {true, false, true, false, false, true};
        assertMessage(ErasureCodeException.class, "present: only 3 of 6", () -> rs.decode(shards, present));
        assertMessage(IllegalArgumentException.class, "present: expected 6", () -> rs.decode(shards, new boolean[5]));
        byte[][] uneven2 = {new byte[8], new byte[8], new byte[8], new byte[8], new byte[9], new byte[8]};
        boolean[] onelost = {false, true, true, true, true, true};
        assertMessage(IllegalArgumentException.class, "shards[4]: length 9", () -> rs.decode(uneven2, onelost));

        assertMessage(IllegalArgumentException.class, "dataIndex", () -> rs.update(4, new byte[8], new byte[8], new byte[2][8]));
        assertMessage(IllegalArgumentException.class, "newData: length", () -> rs.update(1, new byte[8], new byte[9], new byte[2][8]));
        assertMessage(IllegalArgumentException.class, "parity[0]: length", () -> rs.update(1, new byte[8], new byte[8], new byte[][] {new byte[7], new byte[8]}));
    }

    static void assertMessage(Class<? extends Throwable> type, String fragment, org.junit.jupiter.api.function.Executable e) {
        Throwable t = assertThrows(type, e);
        assertTrue(t.getMessage() != null && t.getMessage().contains(fragment),
                () -> "message '" + t.getMessage() + "' should contain '" + fragment + "'");
    }

    @Test
    void zeroParityAndSingleDataShard() {
        ReedSolomon none = ReedSolomon.create(3, 0);
        none.encode(new byte[3][10], new byte[0][]);
        byte[][] sh = random(new Random(1), 3, 10);
        none.decode(sh, new boolean[] {true, true, true});
        ReedSolomon rep = ReedSolomon.create(1, 3);
        byte[][] d = random(new Random(2), 1, 100);
        byte[][] p = new byte[3][100];
        rep.encode(d, p);
        byte[][] shards = {null, null, null, p[2]};
        rep.decode(shards, new boolean[] {false, false, false, true});
        assertArrayEquals(d[0], shards[0]);
        assertArrayEquals(p[0], shards[1]);
    }

    @Test
    void defaultBackendIsVectorWhenModulePresent() {
        assertTrue(ReedSolomon.vectorAvailable());
        assertTrue(ReedSolomon.create(4, 2).backendName().startsWith("vector-"), ReedSolomon.create(4, 2).backendName());
        assertEquals("scalar-swar64", ReedSolomon.create(4, 2, ReedSolomon.Backend.SCALAR).backendName());
    }
}
