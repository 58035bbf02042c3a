package mpi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The staged loops of the predefined operations ({@link ReduceKernels#apply}) give the bits of
 * the element-by-element definition ({@link ReduceKernels#elementwise}) for every operation and
 * base type it applies to, at lengths around the staging chunk, over every kind of segment a
 * reduction meets (heap {@code byte[]} at an unaligned offset, native memory, the caller's typed
 * array), with the special values of each type (NaN, signed zeros, infinities, subnormals, the
 * integer extremes).
 */
class ReduceKernelsTest {
    private static final int[] KINDS = {Datatype.K_BYTE, Datatype.K_BOOLEAN, Datatype.K_CHAR, Datatype.K_SHORT,
            Datatype.K_INT, Datatype.K_LONG, Datatype.K_FLOAT, Datatype.K_DOUBLE};
    private static final int[] CODES = {Op.MAX, Op.MIN, Op.SUM, Op.PROD, Op.LAND, Op.LOR, Op.LXOR, Op.BAND, Op.BOR, Op.BXOR};
    private static final int[] COUNTS = {0, 1, 2, ReduceKernels.ELEMENTWISE_MAX, ReduceKernels.ELEMENTWISE_MAX + 1, 100,
            ReduceKernels.CHUNK - 1, ReduceKernels.CHUNK, ReduceKernels.CHUNK + 1, 2 * ReduceKernels.CHUNK + 905};

    @Test
    void everyOperationOnEveryTypeGivesTheBitsOfTheDefinition() {
        Random rnd = new Random(20261129);
        for (int kind : KINDS) {
            int width = width(kind);
            for (int code : CODES) {
                if (!Op.applies(code, kind)) continue;
                for (int count : COUNTS) {
                    byte[] in = values(rnd, kind, count), io = values(rnd, kind, count);
                    byte[] expected = io.clone();
                    ReduceKernels.elementwise(code, kind, MemorySegment.ofArray(in.clone()), MemorySegment.ofArray(expected), count);
                    for (int shape = 0; shape < 6; shape++) { // shapes 3-5: the scratch path (both staged and not)
                        MemorySegment a = segment(shape % 3, kind, in), b = segment(2 - shape % 3, kind, io);
                        if (shape < 3) ReduceKernels.apply(code, kind, a, b, count);
                        else ReduceKernels.applyScratch(code, kind, a, b, count);
                        byte[] got = new byte[count * width];
                        MemorySegment.copy(b, 0, MemorySegment.ofArray(got), 0, got.length);
                        assertArrayEquals(expected, got, "op " + code + ", kind " + kind + ", count " + count + ", shape " + shape);
                        byte[] untouched = new byte[count * width];
                        MemorySegment.copy(a, 0, MemorySegment.ofArray(untouched), 0, untouched.length);
                        assertArrayEquals(in, untouched, "the input changed: op " + code + ", kind " + kind + ", count " + count);
                    }
                }
            }
        }
    }

    /**
     * The same once the JIT has compiled the loops (C2 vectorises them, with its own code for
     * NaN and signed zeros in MAX and MIN): thousands of calls with special values throughout.
     */
    @Test
    void theCompiledLoopsGiveTheSameBits() {
        Random rnd = new Random(7);
        int count = ReduceKernels.CHUNK + 33;
        for (int kind : new int[] {Datatype.K_FLOAT, Datatype.K_DOUBLE, Datatype.K_INT, Datatype.K_LONG}) {
            byte[] in = values(rnd, kind, count), io = values(rnd, kind, count);
            for (int code : new int[] {Op.MAX, Op.MIN, Op.SUM, Op.PROD}) {
                byte[] expected = io.clone();
                ReduceKernels.elementwise(code, kind, MemorySegment.ofArray(in.clone()), MemorySegment.ofArray(expected), count);
                MemorySegment a = segment(1, kind, in);
                for (int round = 0; round < 1500; round++) {
                    MemorySegment b = segment(round % 3, kind, io);
                    ReduceKernels.apply(code, kind, a, b, count);
                    if (round % 100 == 99) {
                        assertArrayEquals(expected, b.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                                "op " + code + ", kind " + kind + ", round " + round);
                    }
                }
            }
        }
    }

    private static int width(int kind) {
        return switch (kind) {
            case Datatype.K_BYTE, Datatype.K_BOOLEAN -> 1;
            case Datatype.K_CHAR, Datatype.K_SHORT -> 2;
            case Datatype.K_INT, Datatype.K_FLOAT -> 4;
            default -> 8;
        };
    }

    /** {@code data} in shape 0: a heap byte[] at offset 3; 1: native memory; 2: an array of the kind's own type. */
    private static MemorySegment segment(int shape, int kind, byte[] data) {
        MemorySegment src = MemorySegment.ofArray(data);
        MemorySegment s = switch (shape) {
            case 0 -> MemorySegment.ofArray(new byte[data.length + 3]).asSlice(3, data.length);
            case 1 -> Arena.ofAuto().allocate(Math.max(1, data.length), 8).asSlice(0, data.length);
            default -> switch (kind) {
                case Datatype.K_CHAR -> MemorySegment.ofArray(new char[data.length / 2]);
                case Datatype.K_SHORT -> MemorySegment.ofArray(new short[data.length / 2]);
                case Datatype.K_INT -> MemorySegment.ofArray(new int[data.length / 4]);
                case Datatype.K_FLOAT -> MemorySegment.ofArray(new float[data.length / 4]);
                case Datatype.K_LONG -> MemorySegment.ofArray(new long[data.length / 8]);
                case Datatype.K_DOUBLE -> MemorySegment.ofArray(new double[data.length / 8]);
                default -> MemorySegment.ofArray(new byte[data.length]);
            };
        };
        MemorySegment.copy(src, 0, s, 0, data.length);
        return s;
    }

    /** {@code count} elements of {@code kind}: random, with the type's special values mixed in. */
    private static byte[] values(Random rnd, int kind, int count) {
        MemorySegment s = MemorySegment.ofArray(new byte[count * width(kind)]);
        float[] specialF = {Float.NaN, -0f, 0f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.MIN_VALUE,
                -Float.MIN_VALUE, Float.MAX_VALUE, 1e-40f, 1f};
        double[] specialD = {Double.NaN, -0d, 0d, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.MIN_VALUE,
                -Double.MIN_VALUE, Double.MAX_VALUE, 1e-310, 1d};
        long[] specialI = {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE, Integer.MIN_VALUE, Integer.MAX_VALUE, 0xFFFF, 0x8000, 127, -128};
        for (int i = 0; i < count; i++) {
            boolean special = rnd.nextInt(4) == 0;
            switch (kind) {
                case Datatype.K_FLOAT -> s.setAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED, i,
                        special ? specialF[rnd.nextInt(specialF.length)] : (float) (rnd.nextGaussian() * Math.pow(10, rnd.nextInt(20) - 10)));
                case Datatype.K_DOUBLE -> s.setAtIndex(java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED, i,
                        special ? specialD[rnd.nextInt(specialD.length)] : rnd.nextGaussian() * Math.pow(10, rnd.nextInt(40) - 20));
                case Datatype.K_BOOLEAN -> s.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (rnd.nextBoolean() ? 1 : 0));
                default -> {
                    long v = special ? specialI[rnd.nextInt(specialI.length)] : rnd.nextLong() >> rnd.nextInt(64);
                    switch (kind) {
                        case Datatype.K_BYTE -> s.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) v);
                        case Datatype.K_CHAR -> s.setAtIndex(java.lang.foreign.ValueLayout.JAVA_CHAR_UNALIGNED, i, (char) v);
                        case Datatype.K_SHORT -> s.setAtIndex(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED, i, (short) v);
                        case Datatype.K_INT -> s.setAtIndex(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, i, (int) v);
                        default -> s.setAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, i, v);
                    }
                }
            }
        }
        return s.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    }
}
