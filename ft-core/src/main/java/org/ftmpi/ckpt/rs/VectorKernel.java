package org.ftmpi.ckpt.rs;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Vector API kernel (jdk.incubator.vector). A product {@code a * x} is split on the nibbles of x:
 * {@code a*x = LO_a[x & 15] ^ HI_a[x >>> 4]} with two 16-entry tables per coefficient; the 16-entry
 * lookups are {@link ByteVector#selectFrom} byte shuffles of a vector whose every 128-bit lane holds
 * the table (C2 emits {@code pshufb}/{@code vpshufb} for 128-bit species and, on AVX-512 VBMI
 * hardware, {@code vpermb} for wider ones; see docs/erasure-coding.md).
 *
 * <p>Each data vector is loaded once and used for up to four output rows (the accumulators stay in
 * registers), and several vectors are processed per iteration (4 for one or two rows, 2 for three or
 * four rows, which keeps 8 accumulators + nibbles + tables within the 32 AVX-512 registers) to hide
 * shuffle latency and amortise the per-segment bounds/liveness checks. More than four
 * rows are done in passes of four. Bytes after the last whole vector go through a byte loop.
 *
 * <p>Only instantiate this class (reflectively, via {@link Kernels}) after checking that the
 * {@code jdk.incubator.vector} module is in the boot layer.
 */
final class VectorKernel extends Kernel {
    private static final ByteOrder NO = ByteOrder.nativeOrder();
    private static final byte LOW = 0x0f;
    /** Bytes per shard processed by one kernel call (a multiple of 2 * 64). */
    static final long CHUNK = 16 * 1024;
    private static final VectorOperators.Associative XOR = VectorOperators.XOR;

    /**
     * The species must be a compile-time constant for C2 to intrinsify the Vector API (an instance
     * field is not), so the width is fixed per JVM by {@code -Dftmpi.rs.vectorBits=0|128|256|512}
     * (0, the default, = {@code SPECIES_PREFERRED}).
     */
    private static final VectorSpecies<Byte> species = pick(Integer.getInteger("ftmpi.rs.vectorBits", 0));
    private static final int vl = species.length();

    private static VectorSpecies<Byte> pick(int bits) {
        VectorSpecies<Byte> s = switch (bits) {
            case 128 -> ByteVector.SPECIES_128;
            case 256 -> ByteVector.SPECIES_256;
            case 512 -> ByteVector.SPECIES_512;
            default -> ByteVector.SPECIES_PREFERRED;
        };
        // A width above the hardware's would run on the Java fallback (very slow): cap it.
        if (s.vectorBitSize() > ByteVector.SPECIES_PREFERRED.vectorBitSize()) s = ByteVector.SPECIES_PREFERRED;
        if (s.length() < 16) throw new IllegalStateException("vector species too small for 16-entry tables: " + s);
        return s;
    }

    VectorKernel() {}

    int vectorBytes() {
        return vl;
    }

    @Override
    String name() {
        return "vector-" + (vl * 8);
    }


    /**
     * Table layout: for column c and row r the low-nibble table starts at {@code ((c*rows + r)*2)*vl}
     * and the high-nibble table {@code vl} bytes later; each table is 16 bytes repeated vl/16 times.
     */
    @Override
    Tables prepare(byte[] matrix, int rows, int cols) {
        byte[] nib = new byte[rows * cols * 2 * vl];
        for (int c = 0; c < cols; c++) {
            for (int r = 0; r < rows; r++) {
                int a = matrix[r * cols + c] & 0xff;
                int base = ((c * rows + r) * 2) * vl;
                for (int x = 0; x < vl; x++) {
                    nib[base + x] = (byte) GF256.mul(a, x & 15);
                    nib[base + vl + x] = (byte) GF256.mul(a, (x & 15) << 4);
                }
            }
        }
        return new Tables(matrix.clone(), rows, cols, nib);
    }

    @Override
    void dot(Tables t, MemorySegment[] in, MemorySegment[] out, long len) {
        byte[] nib = (byte[]) t.expanded;
        long vend = len - len % vl;
        int rows = t.rows;
        // Chunks bound the work per kernel call: the data of a chunk stays in L1/L2 across row groups,
        // and the JIT sees many short calls (fast C2 compilation, a deoptimisation costs one chunk).
        for (long from = 0; from < vend; from += CHUNK) {
            long to = Math.min(vend, from + CHUNK);
            int r = 0;
            for (; rows - r >= 4; r += 4) dot4(nib, rows, r, in, out[r], out[r + 1], out[r + 2], out[r + 3], from, to);
            switch (rows - r) {
                case 3 -> dot3(nib, rows, r, in, out[r], out[r + 1], out[r + 2], from, to);
                case 2 -> dot2(nib, rows, r, in, out[r], out[r + 1], from, to);
                case 1 -> dot1(nib, rows, r, in, out[r], from, to);
                default -> { }
            }
        }
        // the last len mod vl (< 64) bytes: byte loop, no extra tables to keep per decode plan
        if (vend < len) ScalarKernel.dotBytes(t.matrix, rows, t.cols, in, out, vend, len);
    }

    // dot1..dot4 are written out by hand on purpose: C2 must see the whole loop body in one
    // compilation unit (small helper methods get compiled on their own first and are then not
    // inlined, which boxes every vector), and the accumulators must be locals to stay in registers.

    private static void dot4(byte[] nib, int rows, int r0, MemorySegment[] in, MemorySegment o0, MemorySegment o1, MemorySegment o2, MemorySegment o3, long from, long to) {
        final int stride = rows * 2 * vl, first = r0 * 2 * vl;
        long i = from;
        for (; i + 2L * vl <= to; i += 2L * vl) {
            ByteVector y00 = ByteVector.zero(species), y10 = y00, y01 = y00, y11 = y00, y02 = y00, y12 = y00, y03 = y00, y13 = y00;
            for (int c = 0; c < in.length; c++) {
                int t = first + c * stride;
                MemorySegment s = in[c];
                ByteVector d0 = ByteVector.fromMemorySegment(species, s, i, NO);
                ByteVector l0 = d0.and(LOW);
                ByteVector h0 = d0.reinterpretAsInts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW);
                ByteVector d1 = ByteVector.fromMemorySegment(species, s, i + vl, NO);
                ByteVector l1 = d1.and(LOW);
                ByteVector h1 = d1.reinterpretAsInts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW);
                ByteVector tl = ByteVector.fromArray(species, nib, t);
                ByteVector th = ByteVector.fromArray(species, nib, t + vl);
                y00 = y00.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
                y10 = y10.lanewise(XOR, l1.selectFrom(tl)).lanewise(XOR, h1.selectFrom(th));
                tl = ByteVector.fromArray(species, nib, t + 2 * vl);
                th = ByteVector.fromArray(species, nib, t + 2 * vl + vl);
                y01 = y01.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
                y11 = y11.lanewise(XOR, l1.selectFrom(tl)).lanewise(XOR, h1.selectFrom(th));
                tl = ByteVector.fromArray(species, nib, t + 4 * vl);
                th = ByteVector.fromArray(species, nib, t + 4 * vl + vl);
                y02 = y02.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
                y12 = y12.lanewise(XOR, l1.selectFrom(tl)).lanewise(XOR, h1.selectFrom(th));
                tl = ByteVector.fromArray(species, nib, t + 6 * vl);
                th = ByteVector.fromArray(species, nib, t + 6 * vl + vl);
                y03 = y03.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
                y13 = y13.lanewise(XOR, l1.selectFrom(tl)).lanewise(XOR, h1.selectFrom(th));
            }
            y00.intoMemorySegment(o0, i, NO);
            y10.intoMemorySegment(o0, i + vl, NO);
            y01.intoMemorySegment(o1, i, NO);
            y11.intoMemorySegment(o1, i + vl, NO);
            y02.intoMemorySegment(o2, i, NO);
            y12.intoMemorySegment(o2, i + vl, NO);
            y03.intoMemorySegment(o3, i, NO);
            y13.intoMemorySegment(o3, i + vl, NO);
        }
        for (; i < to; i += vl) {
            ByteVector y00 = ByteVector.zero(species), y01 = y00, y02 = y00, y03 = y00;
            for (int c = 0; c < in.length; c++) {
                int t = first + c * stride;
                MemorySegment s = in[c];
                ByteVector d0 = ByteVector.fromMemorySegment(species, s, i, NO);
                ByteVector l0 = d0.and(LOW);
                ByteVector h0 = d0.reinterpretAsInts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW);
                ByteVector tl = ByteVector.fromArray(species, nib, t);
                ByteVector th = ByteVector.fromArray(species, nib, t + vl);
                y00 = y00.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
                tl = ByteVector.fromArray(species, nib, t + 2 * vl);
                th = ByteVector.fromArray(species, nib, t + 2 * vl + vl);
                y01 = y01.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
                tl = ByteVector.fromArray(species, nib, t + 4 * vl);
                th = ByteVector.fromArray(species, nib, t + 4 * vl + vl);
                y02 = y02.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
                tl = ByteVector.fromArray(species, nib, t + 6 * vl);
                th = ByteVector.fromArray(species, nib, t + 6 * vl + vl);
                y03 = y03.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
            }
            y00.intoMemorySegment(o0, i, NO);
            y01.intoMemorySegment(o1, i, NO);
            y02.intoMemorySegment(o2, i, NO);
            y03.intoMemorySegment(o3, i, NO);
        }
    }

    private static void dot3(byte[] nib, int rows, int r0, MemorySegment[] in, MemorySegment o0, MemorySegment o1, MemorySegment o2, long from, long to) {
        final int stride = rows * 2 * vl, first = r0 * 2 * vl;
        long i = from;
        for (; i + 2L * vl <= to; i += 2L * vl) {
            ByteVector y00 = ByteVector.zero(species), y10 = y00, y01 = y00, y11 = y00, y02 = y00, y12 = y00;
            for (int c = 0; c < in.length; c++) {
                int t = first + c * stride;
                MemorySegment s = in[c];
                ByteVector d0 = ByteVector.fromMemorySegment(species, s, i, NO);
                ByteVector l0 = d0.and(LOW);
                ByteVector h0 = d0.reinterpretAsInts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW);
                ByteVector d1 = ByteVector.fromMemorySegment(species, s, i + vl, NO);
                ByteVector l1 = d1.and(LOW);
                ByteVector h1 = d1.reinterpretAsInts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW);
                ByteVector tl = ByteVector.fromArray(species, nib, t);
                ByteVector th = ByteVector.fromArray(species, nib, t + vl);
                y00 = y00.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
                y10 = y10.lanewise(XOR, l1.selectFrom(tl)).lanewise(XOR, h1.selectFrom(th));
                tl = ByteVector.fromArray(species, nib, t + 2 * vl);
                th = ByteVector.fromArray(species, nib, t + 2 * vl + vl);
                y01 = y01.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
                y11 = y11.lanewise(XOR, l1.selectFrom(tl)).lanewise(XOR, h1.selectFrom(th));
                tl = ByteVector.fromArray(species, nib, t + 4 * vl);
                th = ByteVector.fromArray(species, nib, t + 4 * vl + vl);
                y02 = y02.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
                y12 = y12.lanewise(XOR, l1.selectFrom(tl)).lanewise(XOR, h1.selectFrom(th));
            }
            y00.intoMemorySegment(o0, i, NO);
            y10.intoMemorySegment(o0, i + vl, NO);
            y01.intoMemorySegment(o1, i, NO);
            y11.intoMemorySegment(o1, i + vl, NO);
            y02.intoMemorySegment(o2, i, NO);
            y12.intoMemorySegment(o2, i + vl, NO);
        }
        for (; i < to; i += vl) {
            ByteVector y00 = ByteVector.zero(species), y01 = y00, y02 = y00;
            for (int c = 0; c < in.length; c++) {
                int t = first + c * stride;
                MemorySegment s = in[c];
                ByteVector d0 = ByteVector.fromMemorySegment(species, s, i, NO);
                ByteVector l0 = d0.and(LOW);
                ByteVector h0 = d0.reinterpretAsInts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW);
                ByteVector tl = ByteVector.fromArray(species, nib, t);
                ByteVector th = ByteVector.fromArray(species, nib, t + vl);
                y00 = y00.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
                tl = ByteVector.fromArray(species, nib, t + 2 * vl);
                th = ByteVector.fromArray(species, nib, t + 2 * vl + vl);
                y01 = y01.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
                tl = ByteVector.fromArray(species, nib, t + 4 * vl);
                th = ByteVector.fromArray(species, nib, t + 4 * vl + vl);
                y02 = y02.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
            }
            y00.intoMemorySegment(o0, i, NO);
            y01.intoMemorySegment(o1, i, NO);
            y02.intoMemorySegment(o2, i, NO);
        }
    }

    private static void dot2(byte[] nib, int rows, int r0, MemorySegment[] in, MemorySegment o0, MemorySegment o1, long from, long to) {
        final int stride = rows * 2 * vl, first = r0 * 2 * vl;
        long i = from;
        for (; i + 4L * vl <= to; i += 4L * vl) {
            ByteVector y00 = ByteVector.zero(species), y10 = y00, y20 = y00, y30 = y00, y01 = y00, y11 = y00, y21 = y00, y31 = y00;
            for (int c = 0; c < in.length; c++) {
                int t = first + c * stride;
                MemorySegment s = in[c];
                ByteVector d0 = ByteVector.fromMemorySegment(species, s, i, NO);
                ByteVector l0 = d0.and(LOW);
                ByteVector h0 = d0.reinterpretAsInts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW);
                ByteVector d1 = ByteVector.fromMemorySegment(species, s, i + vl, NO);
                ByteVector l1 = d1.and(LOW);
                ByteVector h1 = d1.reinterpretAsInts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW);
                ByteVector d2 = ByteVector.fromMemorySegment(species, s, i + 2 * vl, NO);
                ByteVector l2 = d2.and(LOW);
                ByteVector h2 = d2.reinterpretAsInts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW);
                ByteVector d3 = ByteVector.fromMemorySegment(species, s, i + 3 * vl, NO);
                ByteVector l3 = d3.and(LOW);
                ByteVector h3 = d3.reinterpretAsInts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW);
                ByteVector tl = ByteVector.fromArray(species, nib, t);
                ByteVector th = ByteVector.fromArray(species, nib, t + vl);
                y00 = y00.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
                y10 = y10.lanewise(XOR, l1.selectFrom(tl)).lanewise(XOR, h1.selectFrom(th));
                y20 = y20.lanewise(XOR, l2.selectFrom(tl)).lanewise(XOR, h2.selectFrom(th));
                y30 = y30.lanewise(XOR, l3.selectFrom(tl)).lanewise(XOR, h3.selectFrom(th));
                tl = ByteVector.fromArray(species, nib, t + 2 * vl);
                th = ByteVector.fromArray(species, nib, t + 2 * vl + vl);
                y01 = y01.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
                y11 = y11.lanewise(XOR, l1.selectFrom(tl)).lanewise(XOR, h1.selectFrom(th));
                y21 = y21.lanewise(XOR, l2.selectFrom(tl)).lanewise(XOR, h2.selectFrom(th));
                y31 = y31.lanewise(XOR, l3.selectFrom(tl)).lanewise(XOR, h3.selectFrom(th));
            }
            y00.intoMemorySegment(o0, i, NO);
            y10.intoMemorySegment(o0, i + vl, NO);
            y20.intoMemorySegment(o0, i + 2 * vl, NO);
            y30.intoMemorySegment(o0, i + 3 * vl, NO);
            y01.intoMemorySegment(o1, i, NO);
            y11.intoMemorySegment(o1, i + vl, NO);
            y21.intoMemorySegment(o1, i + 2 * vl, NO);
            y31.intoMemorySegment(o1, i + 3 * vl, NO);
        }
        for (; i < to; i += vl) {
            ByteVector y00 = ByteVector.zero(species), y01 = y00;
            for (int c = 0; c < in.length; c++) {
                int t = first + c * stride;
                MemorySegment s = in[c];
                ByteVector d0 = ByteVector.fromMemorySegment(species, s, i, NO);
                ByteVector l0 = d0.and(LOW);
                ByteVector h0 = d0.reinterpretAsInts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW);
                ByteVector tl = ByteVector.fromArray(species, nib, t);
                ByteVector th = ByteVector.fromArray(species, nib, t + vl);
                y00 = y00.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
                tl = ByteVector.fromArray(species, nib, t + 2 * vl);
                th = ByteVector.fromArray(species, nib, t + 2 * vl + vl);
                y01 = y01.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
            }
            y00.intoMemorySegment(o0, i, NO);
            y01.intoMemorySegment(o1, i, NO);
        }
    }

    private static void dot1(byte[] nib, int rows, int r0, MemorySegment[] in, MemorySegment o0, long from, long to) {
        final int stride = rows * 2 * vl, first = r0 * 2 * vl;
        long i = from;
        for (; i + 4L * vl <= to; i += 4L * vl) {
            ByteVector y00 = ByteVector.zero(species), y10 = y00, y20 = y00, y30 = y00;
            for (int c = 0; c < in.length; c++) {
                int t = first + c * stride;
                MemorySegment s = in[c];
                ByteVector d0 = ByteVector.fromMemorySegment(species, s, i, NO);
                ByteVector l0 = d0.and(LOW);
                ByteVector h0 = d0.reinterpretAsInts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW);
                ByteVector d1 = ByteVector.fromMemorySegment(species, s, i + vl, NO);
                ByteVector l1 = d1.and(LOW);
                ByteVector h1 = d1.reinterpretAsInts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW);
                ByteVector d2 = ByteVector.fromMemorySegment(species, s, i + 2 * vl, NO);
                ByteVector l2 = d2.and(LOW);
                ByteVector h2 = d2.reinterpretAsInts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW);
                ByteVector d3 = ByteVector.fromMemorySegment(species, s, i + 3 * vl, NO);
                ByteVector l3 = d3.and(LOW);
                ByteVector h3 = d3.reinterpretAsInts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW);
                ByteVector tl = ByteVector.fromArray(species, nib, t);
                ByteVector th = ByteVector.fromArray(species, nib, t + vl);
                y00 = y00.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
                y10 = y10.lanewise(XOR, l1.selectFrom(tl)).lanewise(XOR, h1.selectFrom(th));
                y20 = y20.lanewise(XOR, l2.selectFrom(tl)).lanewise(XOR, h2.selectFrom(th));
                y30 = y30.lanewise(XOR, l3.selectFrom(tl)).lanewise(XOR, h3.selectFrom(th));
            }
            y00.intoMemorySegment(o0, i, NO);
            y10.intoMemorySegment(o0, i + vl, NO);
            y20.intoMemorySegment(o0, i + 2 * vl, NO);
            y30.intoMemorySegment(o0, i + 3 * vl, NO);
        }
        for (; i < to; i += vl) {
            ByteVector y00 = ByteVector.zero(species);
            for (int c = 0; c < in.length; c++) {
                int t = first + c * stride;
                MemorySegment s = in[c];
                ByteVector d0 = ByteVector.fromMemorySegment(species, s, i, NO);
                ByteVector l0 = d0.and(LOW);
                ByteVector h0 = d0.reinterpretAsInts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW);
                ByteVector tl = ByteVector.fromArray(species, nib, t);
                ByteVector th = ByteVector.fromArray(species, nib, t + vl);
                y00 = y00.lanewise(XOR, l0.selectFrom(tl)).lanewise(XOR, h0.selectFrom(th));
            }
            y00.intoMemorySegment(o0, i, NO);
        }
    }

    @Override
    void update(Tables t, MemorySegment a, MemorySegment b, MemorySegment[] out, long len) {
        byte[] nib = (byte[]) t.expanded;
        int rows = t.rows;
        long vend = len - len % vl;
        for (long i = 0; i < vend; i += vl) {
            ByteVector d = ByteVector.fromMemorySegment(species, a, i, NO)
                    .lanewise(XOR, ByteVector.fromMemorySegment(species, b, i, NO));
            ByteVector l = d.and(LOW);
            ByteVector h = d.reinterpretAsInts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW);
            for (int r = 0; r < rows; r++) {
                MemorySegment o = out[r];
                ByteVector tl = ByteVector.fromArray(species, nib, r * 2 * vl);
                ByteVector th = ByteVector.fromArray(species, nib, r * 2 * vl + vl);
                ByteVector.fromMemorySegment(species, o, i, NO)
                        .lanewise(XOR, l.selectFrom(tl)).lanewise(XOR, h.selectFrom(th))
                        .intoMemorySegment(o, i, NO);
            }
        }
        if (vend < len) ScalarKernel.updateBytes(t.matrix, rows, a, b, out, vend, len);
    }
}
