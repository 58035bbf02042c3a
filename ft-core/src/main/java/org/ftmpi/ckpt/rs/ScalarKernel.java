package org.ftmpi.ckpt.rs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Portable kernel. The main loop works on 64-bit words holding 8 field elements (SWAR): for each
 * input word x it computes x*2^b for b = 0..7 once (7 lane-wise "xtime" steps, each a shift, mask and
 * a multiply by the reduction constant 0x1d), then every output row accumulates
 * {@code XOR_b (x*2^b & mask[r][c][b])}, where {@code mask} is all-ones where bit b of the
 * coefficient is set. The doublings are shared by all output rows, so the cost per row is 16
 * branch-free ALU operations per 8 bytes. The tail (len mod 8) uses the 64 KiB product table.
 */
final class ScalarKernel extends Kernel {
    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfByte BYTE = ValueLayout.JAVA_BYTE;
    private static final long LO7 = 0x7f7f7f7f7f7f7f7fL;
    private static final long ONES = 0x0101010101010101L;

    static final ScalarKernel INSTANCE = new ScalarKernel();

    @Override
    String name() {
        return "scalar-swar64";
    }

    @Override
    Tables prepare(byte[] matrix, int rows, int cols) {
        return new Tables(matrix.clone(), rows, cols, masks(matrix, rows, cols));
    }

    /** masks[(r * cols + c) * 8 + b] = bit b of M[r][c] ? -1 : 0. */
    static long[] masks(byte[] matrix, int rows, int cols) {
        long[] mk = new long[rows * cols * 8];
        for (int i = 0; i < rows * cols; i++) {
            int v = matrix[i] & 0xff;
            for (int b = 0; b < 8; b++) mk[i * 8 + b] = -((v >>> b) & 1);
        }
        return mk;
    }

    /** Multiplies each of the 8 packed field elements by 2 (x), reducing by 0x11d. */
    static long xtime(long x) {
        return ((x & LO7) << 1) ^ (((x >>> 7) & ONES) * 0x1d);
    }

    @Override
    void dot(Tables t, MemorySegment[] in, MemorySegment[] out, long len) {
        long[] mk = (long[]) (t.expanded instanceof long[] l ? l : masks(t.matrix, t.rows, t.cols));
        long words = len & ~7L;
        dotWords(mk, t.rows, t.cols, in, out, 0, words);
        dotBytes(t.matrix, t.rows, t.cols, in, out, words, len);
    }

    static void dotWords(long[] mk, int rows, int cols, MemorySegment[] in, MemorySegment[] out, long from, long to) {
        long[] acc = new long[rows];
        for (long i = from; i < to; i += 8) {
            for (int r = 0; r < rows; r++) acc[r] = 0;
            for (int c = 0; c < cols; c++) {
                long x0 = in[c].get(WORD, i);
                long x1 = xtime(x0), x2 = xtime(x1), x3 = xtime(x2), x4 = xtime(x3);
                long x5 = xtime(x4), x6 = xtime(x5), x7 = xtime(x6);
                for (int r = 0, m = c * 8; r < rows; r++, m += cols * 8) {
                    acc[r] ^= (x0 & mk[m]) ^ (x1 & mk[m + 1]) ^ (x2 & mk[m + 2]) ^ (x3 & mk[m + 3])
                            ^ (x4 & mk[m + 4]) ^ (x5 & mk[m + 5]) ^ (x6 & mk[m + 6]) ^ (x7 & mk[m + 7]);
                }
            }
            for (int r = 0; r < rows; r++) out[r].set(WORD, i, acc[r]);
        }
    }

    /** Byte-at-a-time reference/tail loop over {@code [from, to)} with the product table. */
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
        long[] mk = (long[]) (t.expanded instanceof long[] l ? l : masks(t.matrix, t.rows, 1));
        long words = len & ~7L;
        updateWords(mk, t.rows, a, b, out, 0, words);
        updateBytes(t.matrix, t.rows, a, b, out, words, len);
    }

    static void updateWords(long[] mk, int rows, MemorySegment a, MemorySegment b, MemorySegment[] out, long from, long to) {
        for (long i = from; i < to; i += 8) {
            long x0 = a.get(WORD, i) ^ b.get(WORD, i);
            long x1 = xtime(x0), x2 = xtime(x1), x3 = xtime(x2), x4 = xtime(x3);
            long x5 = xtime(x4), x6 = xtime(x5), x7 = xtime(x6);
            for (int r = 0, m = 0; r < rows; r++, m += 8) {
                long p = (x0 & mk[m]) ^ (x1 & mk[m + 1]) ^ (x2 & mk[m + 2]) ^ (x3 & mk[m + 3])
                        ^ (x4 & mk[m + 4]) ^ (x5 & mk[m + 5]) ^ (x6 & mk[m + 6]) ^ (x7 & mk[m + 7]);
                out[r].set(WORD, i, out[r].get(WORD, i) ^ p);
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
