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

    static void gather(long s, long stride, long len, int n, long d) {
        if (len == 8) {
            for (int i = 0; i < n; i++) {
                ALL.set(L8, d + 8L * i, ALL.get(L8, s + i * stride));
            }
        } else {
            for (int i = 0; i < n; i++) {
                copy(s + i * stride, d + i * len, len);
            }
        }
    }

    static void scatter(long s, long d, long stride, long len, int n) {
        if (len == 8) {
            for (int i = 0; i < n; i++) {
                ALL.set(L8, d + i * stride, ALL.get(L8, s + 8L * i));
            }
        } else {
            for (int i = 0; i < n; i++) {
                copy(s + i * len, d + i * stride, len);
            }
        }
    }
}
