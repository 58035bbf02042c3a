package mpi;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_CHAR_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The loops of the predefined operations ({@code MAX MIN SUM PROD LAND LOR LXOR BAND BOR BXOR})
 * on the predefined integer, boolean and floating-point types: {@code io[i] = in[i] op io[i]}
 * over packed elements in native byte order.
 *
 * <p><b>Why staged.</b> A reduction gets heap segments of {@code byte[]} (the collectives'
 * scratch), of every primitive array type (the caller's buffers) and native segments (direct
 * buffers, shared memory). A loop that reads and writes {@code MemorySegment}s element by
 * element is compiled for the segment classes it has seen: after a few kinds C2 compiles it
 * megamorphic and unvectorised, some 4 ns per element (1 MiB of floats: 1.1 ms on the 2-vCPU
 * test machine, where the same sum over two {@code float[]} took 20 us; docs/benchmarks.md,
 * "Session 30"; with the profiles the AOT cache replays, 17 ns per element: "Session 31"). So
 * a reduction ({@link #apply}; on the collectives' own scratch regions {@link #applyScratch}
 * only above {@link #ELEMENTWISE_MAX} elements) copies a chunk of
 * each operand into this thread's primitive arrays ({@code MemorySegment.copy}: a bulk copy,
 * as fast whatever the segments), combines the arrays in a plain loop that C2 vectorises, and
 * copies the result back: 1 MiB in 40-50 us for any mix of segments. {@code byte}, {@code
 * boolean}, {@code char} and {@code short} elements are widened to {@code int} for the
 * combination and narrowed back, which gives the same bits as combining them in their own
 * width (Java's arithmetic on them is {@code int} arithmetic anyway).
 *
 * <p>Results are those of the element-by-element definition ({@link #elementwise}, kept for
 * short vectors in scratch regions, where staging costs more than it saves): for {@code float} the combination in
 * {@code float} equals the former one in {@code double} rounded to {@code float} (a single
 * addition or multiplication rounded twice, first to 53 then to 24 bits, is rounded correctly),
 * {@code Math.max}/{@code min} keep NaN and order -0.0 below +0.0, and integer arithmetic wraps.
 *
 * <p><b>Note:</b> thread-safe; each thread stages through arrays of its own ({@link Stage}),
 * made when it first reduces a kind, {@link #CHUNK} elements each (at most 16 KiB per array).
 * One chunk loop ({@link #staged}) serves every kind; only the combination of a chunk
 * ({@link Chunk}) is the kind's own, so the per-element loops stay monomorphic.
 */
final class ReduceKernels {
    /** Elements per staged chunk: two chunks of {@code long}s or {@code double}s stay within L1. */
    static final int CHUNK = 2048;
    /** Scratch vectors of up to this many elements are combined element by element, without staging. */
    static final int ELEMENTWISE_MAX = 16;

    private static final ThreadLocal<Stage> STAGE = ThreadLocal.withInitial(Stage::new);

    /** One thread's staging arrays: two per base kind (the operands), made on first use. */
    private static final class Stage {
        private final Object[][] pairs = new Object[Datatype.K_DOUBLE + 1][];

        /** The two chunk arrays of {@code kind}'s carrier type. */
        Object[] pair(int kind) {
            Object[] p = pairs[kind];
            if (p == null) pairs[kind] = p = new Object[] {array(kind), array(kind)};
            return p;
        }

        private static Object array(int kind) {
            return switch (kind) {
                case Datatype.K_INT -> new int[CHUNK];
                case Datatype.K_LONG -> new long[CHUNK];
                case Datatype.K_FLOAT -> new float[CHUNK];
                case Datatype.K_DOUBLE -> new double[CHUNK];
                case Datatype.K_SHORT, Datatype.K_CHAR -> new short[CHUNK];
                default -> new byte[CHUNK]; // BYTE, BOOLEAN
            };
        }
    }

    /** Combines the first {@code k} elements of two staged chunks: {@code b = a op b}. */
    private interface Chunk {
        void combine(Stage s, int code, Object a, Object b, int k);
    }

    private static final Chunk INTS = (s, code, a, b, k) -> combine(code, (int[]) a, (int[]) b, k);
    private static final Chunk LONGS = (s, code, a, b, k) -> combine(code, (long[]) a, (long[]) b, k);
    private static final Chunk FLOATS = (s, code, a, b, k) -> combine(code, (float[]) a, (float[]) b, k);
    private static final Chunk DOUBLES = (s, code, a, b, k) -> combine(code, (double[]) a, (double[]) b, k);
    private static final Chunk SHORTS = (s, code, a, b, k) -> combineShorts(s, code, (short[]) a, (short[]) b, k, -1);
    /** Java's {@code char}: unsigned 16 bits, staged as {@code short}s and widened without sign (MAX and MIN compare unsigned). */
    private static final Chunk CHARS = (s, code, a, b, k) -> combineShorts(s, code, (short[]) a, (short[]) b, k, 0xFFFF);
    private static final Chunk BYTES = (s, code, a, b, k) -> combineBytes(s, code, (byte[]) a, (byte[]) b, k);

    private ReduceKernels() {}

    /**
     * {@code io[i] = in[i] op io[i]} for {@code count} elements of base kind {@code kind} ({@link
     * Op#applies}), on segments of any kind: always staged. The element-by-element loop would
     * be compiled for every segment class the program passes here (and that the AOT cache's
     * training passed), some 17 ns per element once it has seen several (docs/benchmarks.md,
     * "Session 31").
     */
    static void apply(int code, int kind, MemorySegment in, MemorySegment io, int count) {
        staged(code, kind, in, io, count);
    }

    /**
     * {@link #apply} on two of the collectives' scratch regions ({@code org.ftmpi.coll.Scratch}):
     * short vectors element by element, a loop that sees one segment class (heap below 32 KiB),
     * 1-2 ns per element; longer ones staged.
     */
    static void applyScratch(int code, int kind, MemorySegment in, MemorySegment io, int count) {
        if (count <= ELEMENTWISE_MAX) elementwise(code, kind, in, io, count);
        else staged(code, kind, in, io, count);
    }

    private static void staged(int code, int kind, MemorySegment in, MemorySegment io, int count) {
        Stage s = STAGE.get();
        switch (kind) {
            case Datatype.K_INT -> staged(s, code, kind, in, io, count, JAVA_INT_UNALIGNED, INTS);
            case Datatype.K_LONG -> staged(s, code, kind, in, io, count, JAVA_LONG_UNALIGNED, LONGS);
            case Datatype.K_FLOAT -> staged(s, code, kind, in, io, count, JAVA_FLOAT_UNALIGNED, FLOATS);
            case Datatype.K_DOUBLE -> staged(s, code, kind, in, io, count, JAVA_DOUBLE_UNALIGNED, DOUBLES);
            case Datatype.K_SHORT -> staged(s, code, kind, in, io, count, JAVA_SHORT_UNALIGNED, SHORTS);
            case Datatype.K_CHAR -> staged(s, code, kind, in, io, count, JAVA_SHORT_UNALIGNED, CHARS);
            default -> staged(s, code, kind, in, io, count, JAVA_BYTE, BYTES); // BYTE, BOOLEAN
        }
    }

    /** Copies chunks of both operands into {@code kind}'s staging arrays, combines them, copies the result back. */
    private static void staged(Stage s, int code, int kind, MemorySegment in, MemorySegment io, int count,
                               ValueLayout layout, Chunk chunk) {
        Object[] p = s.pair(kind);
        long width = layout.byteSize();
        for (int at = 0; at < count; at += CHUNK) {
            int k = Math.min(CHUNK, count - at);
            long off = width * at;
            MemorySegment.copy(in, layout, off, p[0], 0, k);
            MemorySegment.copy(io, layout, off, p[1], 0, k);
            chunk.combine(s, code, p[0], p[1], k);
            MemorySegment.copy(p[1], 0, io, layout, off, k);
        }
    }

    /** {@code short}s ({@code mask} -1) or {@code char}s ({@code mask} 0xFFFF), combined as {@code int}s. */
    private static void combineShorts(Stage s, int code, short[] na, short[] nb, int k, int mask) {
        Object[] w = s.pair(Datatype.K_INT);
        int[] a = (int[]) w[0], b = (int[]) w[1];
        for (int i = 0; i < k; i++) {
            a[i] = na[i] & mask;
            b[i] = nb[i] & mask;
        }
        combine(code, a, b, k);
        for (int i = 0; i < k; i++) nb[i] = (short) b[i];
    }

    /** {@code byte}s and {@code boolean}s (one byte, 0 or 1), combined as {@code int}s. */
    private static void combineBytes(Stage s, int code, byte[] na, byte[] nb, int k) {
        Object[] w = s.pair(Datatype.K_INT);
        int[] a = (int[]) w[0], b = (int[]) w[1];
        for (int i = 0; i < k; i++) {
            a[i] = na[i];
            b[i] = nb[i];
        }
        combine(code, a, b, k);
        for (int i = 0; i < k; i++) nb[i] = (byte) b[i];
    }

    /** {@code b[i] = a[i] op b[i]} for the first {@code k} elements (MAX, MIN, SUM, PROD). */
    private static void combine(int code, float[] a, float[] b, int k) {
        switch (code) {
            case Op.MAX -> { for (int i = 0; i < k; i++) b[i] = Math.max(a[i], b[i]); }
            case Op.MIN -> { for (int i = 0; i < k; i++) b[i] = Math.min(a[i], b[i]); }
            case Op.SUM -> { for (int i = 0; i < k; i++) b[i] = a[i] + b[i]; }
            default -> { for (int i = 0; i < k; i++) b[i] = a[i] * b[i]; } // PROD
        }
    }

    /** {@code b[i] = a[i] op b[i]} for the first {@code k} elements (MAX, MIN, SUM, PROD). */
    private static void combine(int code, double[] a, double[] b, int k) {
        switch (code) {
            case Op.MAX -> { for (int i = 0; i < k; i++) b[i] = Math.max(a[i], b[i]); }
            case Op.MIN -> { for (int i = 0; i < k; i++) b[i] = Math.min(a[i], b[i]); }
            case Op.SUM -> { for (int i = 0; i < k; i++) b[i] = a[i] + b[i]; }
            default -> { for (int i = 0; i < k; i++) b[i] = a[i] * b[i]; } // PROD
        }
    }

    /** {@code b[i] = a[i] op b[i]} for the first {@code k} elements. */
    private static void combine(int code, int[] a, int[] b, int k) {
        switch (code) {
            case Op.MAX -> { for (int i = 0; i < k; i++) b[i] = Math.max(a[i], b[i]); }
            case Op.MIN -> { for (int i = 0; i < k; i++) b[i] = Math.min(a[i], b[i]); }
            case Op.SUM -> { for (int i = 0; i < k; i++) b[i] = a[i] + b[i]; }
            case Op.PROD -> { for (int i = 0; i < k; i++) b[i] = a[i] * b[i]; }
            case Op.LAND -> { for (int i = 0; i < k; i++) b[i] = a[i] != 0 && b[i] != 0 ? 1 : 0; }
            case Op.LOR -> { for (int i = 0; i < k; i++) b[i] = (a[i] | b[i]) != 0 ? 1 : 0; }
            case Op.LXOR -> { for (int i = 0; i < k; i++) b[i] = (a[i] != 0) != (b[i] != 0) ? 1 : 0; }
            case Op.BAND -> { for (int i = 0; i < k; i++) b[i] = a[i] & b[i]; }
            case Op.BOR -> { for (int i = 0; i < k; i++) b[i] = a[i] | b[i]; }
            default -> { for (int i = 0; i < k; i++) b[i] = a[i] ^ b[i]; } // BXOR
        }
    }

    /** {@code b[i] = a[i] op b[i]} for the first {@code k} elements. */
    private static void combine(int code, long[] a, long[] b, int k) {
        switch (code) {
            case Op.MAX -> { for (int i = 0; i < k; i++) b[i] = Math.max(a[i], b[i]); }
            case Op.MIN -> { for (int i = 0; i < k; i++) b[i] = Math.min(a[i], b[i]); }
            case Op.SUM -> { for (int i = 0; i < k; i++) b[i] = a[i] + b[i]; }
            case Op.PROD -> { for (int i = 0; i < k; i++) b[i] = a[i] * b[i]; }
            case Op.LAND -> { for (int i = 0; i < k; i++) b[i] = a[i] != 0 && b[i] != 0 ? 1 : 0; }
            case Op.LOR -> { for (int i = 0; i < k; i++) b[i] = (a[i] | b[i]) != 0 ? 1 : 0; }
            case Op.LXOR -> { for (int i = 0; i < k; i++) b[i] = (a[i] != 0) != (b[i] != 0) ? 1 : 0; }
            case Op.BAND -> { for (int i = 0; i < k; i++) b[i] = a[i] & b[i]; }
            case Op.BOR -> { for (int i = 0; i < k; i++) b[i] = a[i] | b[i]; }
            default -> { for (int i = 0; i < k; i++) b[i] = a[i] ^ b[i]; } // BXOR
        }
    }

    /** The definition, element by element over the segments (short vectors, and the reference). */
    static void elementwise(int code, int kind, MemorySegment in, MemorySegment io, int count) {
        if (kind == Datatype.K_FLOAT || kind == Datatype.K_DOUBLE) {
            for (int i = 0; i < count; i++) {
                double a = kind == Datatype.K_FLOAT ? in.getAtIndex(JAVA_FLOAT_UNALIGNED, i)
                        : in.getAtIndex(JAVA_DOUBLE_UNALIGNED, i);
                double b = kind == Datatype.K_FLOAT ? io.getAtIndex(JAVA_FLOAT_UNALIGNED, i)
                        : io.getAtIndex(JAVA_DOUBLE_UNALIGNED, i);
                double r = switch (code) {
                    case Op.MAX -> Math.max(a, b);
                    case Op.MIN -> Math.min(a, b);
                    case Op.SUM -> a + b;
                    default -> a * b;
                };
                if (kind == Datatype.K_FLOAT) io.setAtIndex(JAVA_FLOAT_UNALIGNED, i, (float) r);
                else io.setAtIndex(JAVA_DOUBLE_UNALIGNED, i, r);
            }
            return;
        }
        for (int i = 0; i < count; i++) {
            long a = getInt(kind, in, i), b = getInt(kind, io, i);
            long r = switch (code) {
                case Op.MAX -> Math.max(a, b);
                case Op.MIN -> Math.min(a, b);
                case Op.SUM -> a + b;
                case Op.PROD -> a * b;
                case Op.LAND -> (a != 0 && b != 0) ? 1 : 0;
                case Op.LOR -> (a != 0 || b != 0) ? 1 : 0;
                case Op.LXOR -> ((a != 0) != (b != 0)) ? 1 : 0;
                case Op.BAND -> a & b;
                case Op.BOR -> a | b;
                default -> a ^ b;
            };
            setInt(kind, io, i, r);
        }
    }

    private static long getInt(int kind, MemorySegment s, long i) {
        return switch (kind) {
            case Datatype.K_BYTE, Datatype.K_BOOLEAN -> s.get(JAVA_BYTE, i);
            case Datatype.K_CHAR -> s.getAtIndex(JAVA_CHAR_UNALIGNED, i);
            case Datatype.K_SHORT -> s.getAtIndex(JAVA_SHORT_UNALIGNED, i);
            case Datatype.K_INT -> s.getAtIndex(JAVA_INT_UNALIGNED, i);
            default -> s.getAtIndex(JAVA_LONG_UNALIGNED, i);
        };
    }

    private static void setInt(int kind, MemorySegment s, long i, long v) {
        switch (kind) {
            case Datatype.K_BYTE, Datatype.K_BOOLEAN -> s.set(JAVA_BYTE, i, (byte) v);
            case Datatype.K_CHAR -> s.setAtIndex(JAVA_CHAR_UNALIGNED, i, (char) v);
            case Datatype.K_SHORT -> s.setAtIndex(JAVA_SHORT_UNALIGNED, i, (short) v);
            case Datatype.K_INT -> s.setAtIndex(JAVA_INT_UNALIGNED, i, (int) v);
            default -> s.setAtIndex(JAVA_LONG_UNALIGNED, i, v);
        }
    }
}
