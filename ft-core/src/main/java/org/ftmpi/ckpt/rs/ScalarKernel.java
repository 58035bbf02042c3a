package org.ftmpi.ckpt.rs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Portable kernel (no Vector API), using 64-bit lanes two ways:
 * <ul>
 *   <li><b>Row-packed product tables.</b> For each input column c and group of up to 8 output rows,
 *   {@code T[c][x]} is a {@code long} whose byte r is {@code M[g*8+r][c] * x}. One table load per
 *   input byte therefore yields that byte's contribution to all (up to 8) output rows at once, so the
 *   data are read once however many parities there are (2 KiB of table per input column).</li>
 *   <li><b>Word-wide I/O.</b> Inputs are read 8 bytes at a time as a little-endian {@code long}; the
 *   eight per-position accumulators are transposed back into one 8-byte word per output row.</li>
 * </ul>
 * Output is bit-identical to the vector kernel (same field arithmetic). The tail ({@code len mod 8})
 * uses the 64 KiB product table byte by byte.
 */
final class ScalarKernel extends Kernel {
    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfByte BYTE = ValueLayout.JAVA_BYTE;

    static final ScalarKernel INSTANCE = new ScalarKernel();

    @Override
    String name() {
        return "scalar-swar64";
    }

    @Override
    Tables prepare(byte[] matrix, int rows, int cols) {
        return new Tables(matrix.clone(), rows, cols, packedTables(matrix, rows, cols));
    }

    /** tables[g][c * 256 + x] = sum over r < 8 of (M[g*8 + r][c] * x) << 8r. */
    static long[][] packedTables(byte[] matrix, int rows, int cols) {
        int groups = (rows + 7) >>> 3;
        long[][] t = new long[groups][cols * 256];
        for (int g = 0; g < groups; g++) {
            for (int r = g * 8; r < Math.min(rows, g * 8 + 8); r++) {
                int shift = 8 * (r - g * 8);
                for (int c = 0; c < cols; c++) {
                    int a = matrix[r * cols + c] & 0xff;
                    for (int x = 0; x < 256; x++) t[g][c * 256 + x] |= (long) GF256.mul(a, x) << shift;
                }
            }
        }
        return t;
    }

    @Override
    void dot(Tables t, MemorySegment[] in, MemorySegment[] out, long len) {
        long words = len & ~7L;
        dotWords((long[][]) t.expanded, t.rows, in, out, 0, words);
        dotBytes(t.matrix, t.rows, t.cols, in, out, words, len);
    }

    /** Word loop over {@code [from, to)}, {@code to - from} a multiple of 8. */
    static void dotWords(long[][] tables, int rows, MemorySegment[] in, MemorySegment[] out, long from, long to) {
        for (int g = 0; g < tables.length; g++) {
            long[] t = tables[g];
            int r0 = g * 8, nr = Math.min(8, rows - r0);
            for (long i = from; i < to; i += 8) {
                long a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
                for (int c = 0, b = 0; c < in.length; c++, b += 256) {
                    long w = in[c].get(WORD, i);
                    a0 ^= t[b + ((int) w & 0xff)];
                    a1 ^= t[b + ((int) (w >>> 8) & 0xff)];
                    a2 ^= t[b + ((int) (w >>> 16) & 0xff)];
                    a3 ^= t[b + ((int) (w >>> 24) & 0xff)];
                    a4 ^= t[b + ((int) (w >>> 32) & 0xff)];
                    a5 ^= t[b + ((int) (w >>> 40) & 0xff)];
                    a6 ^= t[b + ((int) (w >>> 48) & 0xff)];
                    a7 ^= t[b + (int) (w >>> 56)];
                }
                for (int r = 0; r < nr; r++) {
                    out[r0 + r].set(WORD, i, gather(r * 8, a0, a1, a2, a3, a4, a5, a6, a7));
                }
            }
        }
    }

    /** Byte {@code shift/8} of each of a0..a7, packed into one little-endian word. */
    private static long gather(int shift, long a0, long a1, long a2, long a3, long a4, long a5, long a6, long a7) {
        return ((a0 >>> shift) & 0xff)
                | ((a1 >>> shift) & 0xff) << 8
                | ((a2 >>> shift) & 0xff) << 16
                | ((a3 >>> shift) & 0xff) << 24
                | ((a4 >>> shift) & 0xff) << 32
                | ((a5 >>> shift) & 0xff) << 40
                | ((a6 >>> shift) & 0xff) << 48
                | ((a7 >>> shift) & 0xff) << 56;
    }

    /** Byte-at-a-time loop over {@code [from, to)} with the product table (tails and reference). */
    static void dotBytes(byte[] matrix, int rows, int cols, MemorySegment[] in, MemorySegment[] out, long from, long to) {
        byte[] mul = GF256.MUL;
        for (long i = from; i < to; i++) {
            for (int r = 0; r < rows; r++) {
                int acc = 0;
                for (int c = 0; c < cols; c++) {
                    acc ^= mul[(matrix[r * cols + c] & 0xff) << 8 | (in[c].get(BYTE, i) & 0xff)];
                }
                out[r].set(BYTE, i, (byte) acc);
            }
        }
    }

    @Override
    void update(Tables t, MemorySegment a, MemorySegment b, MemorySegment[] out, long len) {
        long words = len & ~7L;
        updateWords((long[][]) t.expanded, t.rows, a, b, out, 0, words);
        updateBytes(t.matrix, t.rows, a, b, out, words, len);
    }

    /** {@code out[r] ^= M[r][0] * (a ^ b)} over {@code [from, to)}, a multiple of 8 long. */
    static void updateWords(long[][] tables, int rows, MemorySegment a, MemorySegment b, MemorySegment[] out, long from, long to) {
        for (int g = 0; g < tables.length; g++) {
            long[] t = tables[g];
            int r0 = g * 8, nr = Math.min(8, rows - r0);
            for (long i = from; i < to; i += 8) {
                long w = a.get(WORD, i) ^ b.get(WORD, i);
                if (w == 0) continue; // unchanged bytes: nothing to add
                long a0 = t[(int) w & 0xff], a1 = t[(int) (w >>> 8) & 0xff];
                long a2 = t[(int) (w >>> 16) & 0xff], a3 = t[(int) (w >>> 24) & 0xff];
                long a4 = t[(int) (w >>> 32) & 0xff], a5 = t[(int) (w >>> 40) & 0xff];
                long a6 = t[(int) (w >>> 48) & 0xff], a7 = t[(int) (w >>> 56)];
                for (int r = 0; r < nr; r++) {
                    MemorySegment o = out[r0 + r];
                    o.set(WORD, i, o.get(WORD, i) ^ gather(r * 8, a0, a1, a2, a3, a4, a5, a6, a7));
                }
            }
        }
    }

    static void updateBytes(byte[] col, int rows, MemorySegment a, MemorySegment b, MemorySegment[] out, long from, long to) {
        byte[] mul = GF256.MUL;
        for (long i = from; i < to; i++) {
            int d = (a.get(BYTE, i) ^ b.get(BYTE, i)) & 0xff;
            for (int r = 0; r < rows; r++) {
                byte o = out[r].get(BYTE, i);
                out[r].set(BYTE, i, (byte) (o ^ mul[(col[r] & 0xff) << 8 | d]));
            }
        }
    }
}
