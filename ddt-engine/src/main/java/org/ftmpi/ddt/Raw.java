package org.ftmpi.ddt;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Copy kernels on absolute native addresses through one constant segment spanning all memory, for
 * native-to-native pack/unpack. Callers must have range-checked both sides against their real
 * segments; used only when {@link Convertor#RAW} (native access enabled). Stateless, thread-safe.
 */
final class Raw {
    private static final MemorySegment ALL = Convertor.RAW
            ? MemorySegment.NULL.reinterpret(Long.MAX_VALUE) : MemorySegment.NULL;
    private static final ValueLayout.OfLong L8 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt L4 = ValueLayout.JAVA_INT_UNALIGNED;

    private Raw() {
    }

    /**
     * Copies one block. Kept under C2's hot-inlining limit ({@code FreqInlineSize}, 325 bytecodes)
     * through the one-word helpers {@link #w8}/{@link #w4}: as one 538-bytecode method it was never
     * inlined into the gather/scatter loops, so every short block (the 36-byte blocks of a struct)
     * paid a call (docs/datatypes.md, session 7).
     */
    static void copy(long s, long d, long len) {
        if (len >= 8 && len <= 72) {
            switch ((int) (len >>> 3)) {
                case 9: w8(s + 64, d + 64); // fall through
                case 8: w8(s + 56, d + 56); // fall through
                case 7: w8(s + 48, d + 48); // fall through
                case 6: w8(s + 40, d + 40); // fall through
                case 5: w8(s + 32, d + 32); // fall through
                case 4: w8(s + 24, d + 24); // fall through
                case 3: w8(s + 16, d + 16); // fall through
                case 2: w8(s + 8, d + 8); // fall through
                default: w8(s, d);
            }
            w8(s + len - 8, d + len - 8);
        } else if (len > 72) {
            MemorySegment.copy(ALL, s, ALL, d, len);
        } else {
            copyShort(s, d, (int) len);
        }
    }

    /** A block of fewer than 8 bytes. */
    private static void copyShort(long s, long d, int len) {
        if (len >= 4) {
            w4(s, d);
            w4(s + len - 4, d + len - 4);
        } else {
            for (int i = 0; i < len; i++) {
                ALL.set(ValueLayout.JAVA_BYTE, d + i, ALL.get(ValueLayout.JAVA_BYTE, s + i));
            }
        }
    }

    /** One 8-byte word from absolute address {@code s} to {@code d}. */
    private static void w8(long s, long d) {
        ALL.set(L8, d, ALL.get(L8, s));
    }

    /** One 4-byte word from absolute address {@code s} to {@code d}. */
    private static void w4(long s, long d) {
        ALL.set(L4, d, ALL.get(L4, s));
    }

    static void gather(long s, long stride, long len, int n, long d, long[] spacer) {
        if (len == 8 && spacer != null && stride >= Spacer.MIN_STRIDE) {
            for (int i = 0; i < n; i++) {
                ALL.set(L8, d + 8L * i, ALL.get(L8, s + i * stride));
                Spacer.space(spacer, i);
            }
        } else if (len == 8) {
            for (int i = 0; i < n; i++) {
                ALL.set(L8, d + 8L * i, ALL.get(L8, s + i * stride));
            }
        } else {
            for (int i = 0; i < n; i++) {
                copy(s + i * stride, d + i * len, len);
            }
        }
    }

    static void scatter(long s, long d, long stride, long len, int n, long[] spacer) {
        if (len == 8 && spacer != null && stride >= Spacer.MIN_STRIDE) {
            for (int i = 0; i < n; i++) {
                ALL.set(L8, d + i * stride, ALL.get(L8, s + 8L * i));
                Spacer.space(spacer, i);
            }
        } else if (len == 8) {
            for (int i = 0; i < n; i++) {
                ALL.set(L8, d + i * stride, ALL.get(L8, s + 8L * i));
            }
        } else {
            for (int i = 0; i < n; i++) {
                copy(s + i * len, d + i * stride, len);
            }
        }
    }

    // ---- double[] user array <-> native transport at absolute address (array side bounds-checked)
    private static final ValueLayout.OfDouble D8 = ValueLayout.JAVA_DOUBLE_UNALIGNED;

    static void copyOutD(double[] a, long so, long d, long len) {
        int idx = (int) (so >>> 3), w = (int) (len >>> 3);
        if (w <= 8) {
            switch (w) { // straight-line for short blocks
                case 8: out(a, idx + 7, d + 56); // fall through
                case 7: out(a, idx + 6, d + 48); // fall through
                case 6: out(a, idx + 5, d + 40); // fall through
                case 5: out(a, idx + 4, d + 32); // fall through
                case 4: out(a, idx + 3, d + 24); // fall through
                case 3: out(a, idx + 2, d + 16); // fall through
                case 2: out(a, idx + 1, d + 8); // fall through
                case 1: out(a, idx, d); // fall through
                default: break;
            }
        } else if (w >= 16) {
            MemorySegment.copy(a, idx, ALL, D8, d, w);
        } else {
            for (int i = 0; i < w; i++) {
                out(a, idx + i, d + 8L * i);
            }
        }
    }

    static void copyInD(long s, double[] a, long d, long len) {
        int idx = (int) (d >>> 3), w = (int) (len >>> 3);
        if (w <= 8) {
            switch (w) {
                case 8: in(s + 56, a, idx + 7); // fall through
                case 7: in(s + 48, a, idx + 6); // fall through
                case 6: in(s + 40, a, idx + 5); // fall through
                case 5: in(s + 32, a, idx + 4); // fall through
                case 4: in(s + 24, a, idx + 3); // fall through
                case 3: in(s + 16, a, idx + 2); // fall through
                case 2: in(s + 8, a, idx + 1); // fall through
                case 1: in(s, a, idx); // fall through
                default: break;
            }
        } else if (w >= 16) {
            MemorySegment.copy(ALL, D8, s, a, idx, w);
        } else {
            for (int i = 0; i < w; i++) {
                in(s + 8L * i, a, idx + i);
            }
        }
    }

    /** Element {@code i} of {@code a} to absolute address {@code d}. */
    private static void out(double[] a, int i, long d) {
        ALL.set(D8, d, a[i]);
    }

    /** Absolute address {@code s} to element {@code i} of {@code a}. */
    private static void in(long s, double[] a, int i) {
        a[i] = ALL.get(D8, s);
    }

    static void gatherD(double[] a, long so, long stride, long len, int n, long d, long[] spacer) {
        int idx = (int) (so >>> 3);
        int st = (int) (stride / 8);
        if (len == 8 && spacer != null && stride >= Spacer.MIN_STRIDE) {
            for (int i = 0; i < n; i++) {
                ALL.set(D8, d + 8L * i, a[idx + i * st]);
                Spacer.space(spacer, i);
            }
        } else if (len == 8) {
            for (int i = 0; i < n; i++) {
                ALL.set(D8, d + 8L * i, a[idx + i * st]);
            }
        } else {
            for (int i = 0; i < n; i++) {
                copyOutD(a, so + i * stride, d + i * len, len);
            }
        }
    }

    static void scatterD(long s, double[] a, long d0, long stride, long len, int n, long[] spacer) {
        int idx = (int) (d0 >>> 3);
        int st = (int) (stride / 8);
        if (len == 8 && spacer != null && stride >= Spacer.MIN_STRIDE) {
            for (int i = 0; i < n; i++) {
                a[idx + i * st] = ALL.get(D8, s + 8L * i);
                Spacer.space(spacer, i);
            }
        } else if (len == 8) {
            long end = s + 8L * n;
            for (int j = idx; s < end; s += 8, j += st) {
                a[j] = ALL.get(D8, s);
            }
        } else {
            for (int i = 0; i < n; i++) {
                copyInD(s + i * len, a, d0 + i * stride, len);
            }
        }
    }

    // ---- flat word index ({@link WordIndex}): words [from, to) of one instance at user address/index at.
    // Pack: four loads, then four stores (measured 10-25 % faster than the one-word loop); unpack: the
    // one-word loop (the grouped form was 15 % slower).

    static void gatherWords(long at, int[] word, int from, int to, long d) {
        int i = from;
        for (; i + 3 < to; i += 4, d += 32) {
            long x0 = ALL.get(L8, at + 8L * word[i]), x1 = ALL.get(L8, at + 8L * word[i + 1]);
            long x2 = ALL.get(L8, at + 8L * word[i + 2]), x3 = ALL.get(L8, at + 8L * word[i + 3]);
            ALL.set(L8, d, x0);
            ALL.set(L8, d + 8, x1);
            ALL.set(L8, d + 16, x2);
            ALL.set(L8, d + 24, x3);
        }
        for (; i < to; i++, d += 8) {
            ALL.set(L8, d, ALL.get(L8, at + 8L * word[i]));
        }
    }

    static void scatterWords(long s, long at, int[] word, int from, int to) {
        for (int i = from; i < to; i++, s += 8) {
            ALL.set(L8, at + 8L * word[i], ALL.get(L8, s));
        }
    }

    static void gatherWordsD(double[] a, int at, int[] word, int from, int to, long d) {
        int i = from;
        for (; i + 3 < to; i += 4, d += 32) {
            double x0 = a[at + word[i]], x1 = a[at + word[i + 1]], x2 = a[at + word[i + 2]], x3 = a[at + word[i + 3]];
            ALL.set(D8, d, x0);
            ALL.set(D8, d + 8, x1);
            ALL.set(D8, d + 16, x2);
            ALL.set(D8, d + 24, x3);
        }
        for (; i < to; i++, d += 8) {
            ALL.set(D8, d, a[at + word[i]]);
        }
    }

    static void scatterWordsD(long s, double[] a, int at, int[] word, int from, int to) {
        for (int i = from; i < to; i++, s += 8) {
            a[at + word[i]] = ALL.get(D8, s);
        }
    }
}
