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

    static void copy(long s, long d, long len) {
        if (len >= 8 && len <= 72) {
            switch ((int) (len >>> 3)) {
                case 9: ALL.set(L8, d + 64, ALL.get(L8, s + 64)); // fall through
                case 8: ALL.set(L8, d + 56, ALL.get(L8, s + 56)); // fall through
                case 7: ALL.set(L8, d + 48, ALL.get(L8, s + 48)); // fall through
                case 6: ALL.set(L8, d + 40, ALL.get(L8, s + 40)); // fall through
                case 5: ALL.set(L8, d + 32, ALL.get(L8, s + 32)); // fall through
                case 4: ALL.set(L8, d + 24, ALL.get(L8, s + 24)); // fall through
                case 3: ALL.set(L8, d + 16, ALL.get(L8, s + 16)); // fall through
                case 2: ALL.set(L8, d + 8, ALL.get(L8, s + 8)); // fall through
                default: ALL.set(L8, d, ALL.get(L8, s));
            }
            ALL.set(L8, d + len - 8, ALL.get(L8, s + len - 8));
        } else if (len > 72) {
            MemorySegment.copy(ALL, s, ALL, d, len);
        } else if (len >= 4) {
            ALL.set(L4, d, ALL.get(L4, s));
            ALL.set(L4, d + len - 4, ALL.get(L4, s + len - 4));
        } else {
            for (int i = 0; i < (int) len; i++) {
                ALL.set(ValueLayout.JAVA_BYTE, d + i, ALL.get(ValueLayout.JAVA_BYTE, s + i));
            }
        }
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
                case 8: ALL.set(D8, d + 56, a[idx + 7]); // fall through
                case 7: ALL.set(D8, d + 48, a[idx + 6]); // fall through
                case 6: ALL.set(D8, d + 40, a[idx + 5]); // fall through
                case 5: ALL.set(D8, d + 32, a[idx + 4]); // fall through
                case 4: ALL.set(D8, d + 24, a[idx + 3]); // fall through
                case 3: ALL.set(D8, d + 16, a[idx + 2]); // fall through
                case 2: ALL.set(D8, d + 8, a[idx + 1]); // fall through
                case 1: ALL.set(D8, d, a[idx]); // fall through
                default: break;
            }
        } else if (w >= 16) {
            MemorySegment.copy(a, idx, ALL, D8, d, w);
        } else {
            for (int i = 0; i < w; i++) {
                ALL.set(D8, d + 8L * i, a[idx + i]);
            }
        }
    }

    static void copyInD(long s, double[] a, long d, long len) {
        int idx = (int) (d >>> 3), w = (int) (len >>> 3);
        if (w <= 8) {
            switch (w) {
                case 8: a[idx + 7] = ALL.get(D8, s + 56); // fall through
                case 7: a[idx + 6] = ALL.get(D8, s + 48); // fall through
                case 6: a[idx + 5] = ALL.get(D8, s + 40); // fall through
                case 5: a[idx + 4] = ALL.get(D8, s + 32); // fall through
                case 4: a[idx + 3] = ALL.get(D8, s + 24); // fall through
                case 3: a[idx + 2] = ALL.get(D8, s + 16); // fall through
                case 2: a[idx + 1] = ALL.get(D8, s + 8); // fall through
                case 1: a[idx] = ALL.get(D8, s); // fall through
                default: break;
            }
        } else if (w >= 16) {
            MemorySegment.copy(ALL, D8, s, a, idx, w);
        } else {
            for (int i = 0; i < w; i++) {
                a[idx + i] = ALL.get(D8, s + 8L * i);
            }
        }
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
