package org.ftmpi.bench.rs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.ftmpi.ckpt.rs.GF256;
import org.ftmpi.ckpt.rs.ReedSolomon;

/**
 * Plain-Java throughput harness used by bench/peers/isal/compare.sh (JMH is in {@link RsBench}).
 * For each shape (k,m) it measures, interleaved and repeated, data GB/s = k x shard bytes / time of:
 * encode and decode with m data shards lost, for the codec (AUTO kernel, and optionally SCALAR), and
 * encode with a plain byte-at-a-time table-lookup loop. Buffers are 64-byte aligned native segments
 * (byte[] for the plain loop). Prints {@code RESULT <impl> <op> <k> <m> <GB/s>} lines with medians.
 *
 * <p>Usage: {@code RsHarness [shardBytes=1048576] [reps=7] [millisPerSample=200] [shapes=4x2,8x2,16x4] [scalar=true]}
 */
public final class RsHarness {
    public static void main(String[] args) {
        int len = args.length > 0 ? Integer.parseInt(args[0]) : 1 << 20;
        int reps = args.length > 1 ? Integer.parseInt(args[1]) : 7;
        long sampleNanos = (args.length > 2 ? Long.parseLong(args[2]) : 200) * 1_000_000L;
        String shapes = args.length > 3 ? args[3] : "4x2,8x2,16x4";
        boolean scalar = args.length <= 4 || Boolean.parseBoolean(args[4]);

        for (String shape : shapes.split(",")) {
            String[] km = shape.split("x");
            int k = Integer.parseInt(km[0]), m = Integer.parseInt(km[1]);
            List<Variant> vs = new ArrayList<>();
            ReedSolomon rs = ReedSolomon.create(k, m);
            System.out.println("# shape " + k + "+" + m + " shard=" + len + " kernel=" + rs.backendName());
            System.out.printf("PARITYHASH %d %d %016x%n", k, m, parityHash(rs, k, m, len));
            vs.add(new Variant("ours", "encode", codecEncode(rs, k, m, len)));
            vs.add(new Variant("ours", "decode", codecDecode(rs, k, m, len)));
            if (scalar) {
                ReedSolomon sc = ReedSolomon.create(k, m, ReedSolomon.Backend.SCALAR);
                vs.add(new Variant("scalar", "encode", codecEncode(sc, k, m, len)));
                vs.add(new Variant("scalar", "decode", codecDecode(sc, k, m, len)));
            }
            vs.add(new Variant("plain", "encode", plainEncode(rs, k, m, len)));
            // warm-up: every variant for at least 3 samples and 2 s (C2 must have compiled the
            // vector kernels; until then they run in the interpreter/C1, 100x slower)
            for (Variant v : vs) {
                long t0 = System.nanoTime();
                for (int w = 0; w < 3 || System.nanoTime() - t0 < 2_000_000_000L; w++) v.sample(sampleNanos);
            }
            double[][] res = new double[vs.size()][reps];
            for (int r = 0; r < reps; r++) {
                for (int i = 0; i < vs.size(); i++) {
                    // rotate start so no variant always runs first
                    int j = (i + r) % vs.size();
                    res[j][r] = vs.get(j).sample(sampleNanos) * k * (double) len / 1e9;
                    System.out.printf("SAMPLE %s %s %d %d %.3f%n", vs.get(j).impl, vs.get(j).op, k, m, res[j][r]);
                }
            }
            for (int i = 0; i < vs.size(); i++) {
                double[] s = res[i].clone();
                Arrays.sort(s);
                Variant v = vs.get(i);
                System.out.printf("RESULT %s %s %d %d %.3f (min %.3f max %.3f)%n",
                        v.impl, v.op, k, m, s[s.length / 2], s[0], s[s.length - 1]);
            }
        }
    }

    private record Variant(String impl, String op, Runnable body) {
        /** Runs body repeatedly for about {@code nanos}; returns operations per second. */
        double sample(long nanos) {
            long n = 0, t0 = System.nanoTime(), t;
            do {
                body.run();
                n++;
                t = System.nanoTime();
            } while (t - t0 < nanos);
            return n * 1e9 / (t - t0);
        }
    }

    /** FNV-1a 64 over the parity of the pattern data[i][j] = i*131 + j*7 (same as isal_bench.c). */
    static long parityHash(ReedSolomon rs, int k, int m, int len) {
        byte[][] d = new byte[k][len];
        for (int i = 0; i < k; i++) for (int j = 0; j < len; j++) d[i][j] = (byte) (i * 131 + j * 7);
        byte[][] p = new byte[m][len];
        rs.encode(d, p);
        long h = 0xcbf29ce484222325L;
        for (byte[] q : p) {
            for (byte b : q) {
                h ^= b & 0xff;
                h *= 0x100000001b3L;
            }
        }
        return h;
    }

    static MemorySegment[] segments(int n, int len, Random rnd) {
        MemorySegment[] s = new MemorySegment[n];
        byte[] tmp = new byte[len];
        for (int i = 0; i < n; i++) {
            s[i] = Arena.ofAuto().allocate(Math.max(len, 1), 64).asSlice(0, len);
            rnd.nextBytes(tmp);
            MemorySegment.copy(MemorySegment.ofArray(tmp), 0, s[i], 0, len);
        }
        return s;
    }

    static Runnable codecEncode(ReedSolomon rs, int k, int m, int len) {
        MemorySegment[] d = segments(k, len, new Random(1));
        MemorySegment[] p = segments(m, len, new Random(2));
        return () -> rs.encode(d, p);
    }

    static Runnable codecDecode(ReedSolomon rs, int k, int m, int len) {
        MemorySegment[] all = segments(k + m, len, new Random(3));
        rs.encode(Arrays.copyOf(all, k), Arrays.copyOfRange(all, k, k + m));
        boolean[] present = new boolean[k + m];
        Arrays.fill(present, true);
        for (int i = 0; i < m; i++) present[i] = false; // m data shards lost: the worst case
        return () -> rs.decode(all, present);
    }

    /** The baseline: one pass per (parity, data) pair, one table lookup per byte. */
    static Runnable plainEncode(ReedSolomon rs, int k, int m, int len) {
        Random rnd = new Random(4);
        byte[][] d = new byte[k][len];
        for (byte[] a : d) rnd.nextBytes(a);
        byte[][] p = new byte[m][len];
        byte[][] tables = new byte[m * k][256];
        for (int pi = 0; pi < m; pi++) {
            for (int j = 0; j < k; j++) {
                for (int x = 0; x < 256; x++) tables[pi * k + j][x] = (byte) GF256.mul(rs.coefficient(pi, j), x);
            }
        }
        return () -> plainLoop(tables, d, p, k, m, len);
    }

    static void plainLoop(byte[][] tables, byte[][] d, byte[][] p, int k, int m, int len) {
        for (int pi = 0; pi < m; pi++) {
            byte[] out = p[pi];
            Arrays.fill(out, (byte) 0);
            for (int j = 0; j < k; j++) {
                byte[] t = tables[pi * k + j];
                byte[] in = d[j];
                for (int i = 0; i < len; i++) out[i] ^= t[in[i] & 0xff];
            }
        }
    }
}
