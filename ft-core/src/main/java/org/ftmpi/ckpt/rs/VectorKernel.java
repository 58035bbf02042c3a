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
 * registers), and two vectors are processed per iteration to hide shuffle latency. More than four
 * rows are done in passes of four. Bytes after the last whole vector go through the scalar kernel.
 *
 * <p>Only instantiate this class (reflectively, via {@link Kernels}) after checking that the
 * {@code jdk.incubator.vector} module is in the boot layer.
 */
final class VectorKernel extends Kernel {
    private static final ByteOrder NO = ByteOrder.nativeOrder();

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

    /** Per-kernel form: the nibble tables plus the scalar masks for the tail. */
    private record Expanded(byte[] nib, long[] masks) {}

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
        return new Tables(matrix.clone(), rows, cols, new Expanded(nib, ScalarKernel.masks(matrix, rows, cols)));
    }

    @Override
    void dot(Tables t, MemorySegment[] in, MemorySegment[] out, long len) {
        Expanded e = (Expanded) t.expanded;
        long vend = len - len % vl;
        int rows = t.rows;
        int r = 0;
        for (; rows - r >= 4; r += 4) dot4(e.nib, rows, r, in, out[r], out[r + 1], out[r + 2], out[r + 3], vend);
        switch (rows - r) {
            case 3 -> dot3(e.nib, rows, r, in, out[r], out[r + 1], out[r + 2], vend);
            case 2 -> dot2(e.nib, rows, r, in, out[r], out[r + 1], vend);
            case 1 -> dot1(e.nib, rows, r, in, out[r], vend);
            default -> { }
        }
        if (vend < len) {
            long wend = vend + ((len - vend) & ~7L);
            ScalarKernel.dotWords(e.masks, rows, t.cols, in, out, vend, wend);
            ScalarKernel.dotBytes(t.matrix, rows, t.cols, in, out, wend, len);
        }
    }

    private ByteVector load(MemorySegment s, long off) {
        return ByteVector.fromMemorySegment(species, s, off, NO);
    }

    private ByteVector tbl(byte[] nib, int off) {
        return ByteVector.fromArray(species, nib, off);
    }

    private static ByteVector x(ByteVector a, ByteVector b) {
        return a.lanewise(VectorOperators.XOR, b);
    }

    /** a * d for the coefficient whose tables start at {@code off}, given d's nibbles. */
    private ByteVector mul(byte[] nib, int off, ByteVector lo, ByteVector hi) {
        return lo.selectFrom(tbl(nib, off)).lanewise(VectorOperators.XOR, hi.selectFrom(tbl(nib, off + vl)));
    }

    private void dot4(byte[] nib, int rows, int r0, MemorySegment[] in,
                      MemorySegment o0, MemorySegment o1, MemorySegment o2, MemorySegment o3, long n) {
        final int cols = in.length, stride = rows * 2 * vl, first = r0 * 2 * vl;
        long i = 0;
        for (; i + 2L * vl <= n; i += 2L * vl) {
            ByteVector a0 = ByteVector.zero(species), a1 = a0, a2 = a0, a3 = a0;
            ByteVector b0 = a0, b1 = a0, b2 = a0, b3 = a0;
            for (int c = 0, t = first; c < cols; c++, t += stride) {
                MemorySegment s = in[c];
                ByteVector d = load(s, i), f = load(s, i + vl);
                ByteVector dl = d.and((byte) 0x0f), dh = d.lanewise(VectorOperators.LSHR, 4);
                ByteVector fl = f.and((byte) 0x0f), fh = f.lanewise(VectorOperators.LSHR, 4);
                a0 = x(a0, mul(nib, t, dl, dh));
                b0 = x(b0, mul(nib, t, fl, fh));
                a1 = x(a1, mul(nib, t + 2 * vl, dl, dh));
                b1 = x(b1, mul(nib, t + 2 * vl, fl, fh));
                a2 = x(a2, mul(nib, t + 4 * vl, dl, dh));
                b2 = x(b2, mul(nib, t + 4 * vl, fl, fh));
                a3 = x(a3, mul(nib, t + 6 * vl, dl, dh));
                b3 = x(b3, mul(nib, t + 6 * vl, fl, fh));
            }
            a0.intoMemorySegment(o0, i, NO); b0.intoMemorySegment(o0, i + vl, NO);
            a1.intoMemorySegment(o1, i, NO); b1.intoMemorySegment(o1, i + vl, NO);
            a2.intoMemorySegment(o2, i, NO); b2.intoMemorySegment(o2, i + vl, NO);
            a3.intoMemorySegment(o3, i, NO); b3.intoMemorySegment(o3, i + vl, NO);
        }
        for (; i < n; i += vl) {
            ByteVector a0 = ByteVector.zero(species), a1 = a0, a2 = a0, a3 = a0;
            for (int c = 0, t = first; c < cols; c++, t += stride) {
                ByteVector d = load(in[c], i);
                ByteVector dl = d.and((byte) 0x0f), dh = d.lanewise(VectorOperators.LSHR, 4);
                a0 = x(a0, mul(nib, t, dl, dh));
                a1 = x(a1, mul(nib, t + 2 * vl, dl, dh));
                a2 = x(a2, mul(nib, t + 4 * vl, dl, dh));
                a3 = x(a3, mul(nib, t + 6 * vl, dl, dh));
            }
            a0.intoMemorySegment(o0, i, NO);
            a1.intoMemorySegment(o1, i, NO);
            a2.intoMemorySegment(o2, i, NO);
            a3.intoMemorySegment(o3, i, NO);
        }
    }

    private void dot3(byte[] nib, int rows, int r0, MemorySegment[] in,
                      MemorySegment o0, MemorySegment o1, MemorySegment o2, long n) {
        final int cols = in.length, stride = rows * 2 * vl, first = r0 * 2 * vl;
        long i = 0;
        for (; i + 2L * vl <= n; i += 2L * vl) {
            ByteVector a0 = ByteVector.zero(species), a1 = a0, a2 = a0;
            ByteVector b0 = a0, b1 = a0, b2 = a0;
            for (int c = 0, t = first; c < cols; c++, t += stride) {
                MemorySegment s = in[c];
                ByteVector d = load(s, i), f = load(s, i + vl);
                ByteVector dl = d.and((byte) 0x0f), dh = d.lanewise(VectorOperators.LSHR, 4);
                ByteVector fl = f.and((byte) 0x0f), fh = f.lanewise(VectorOperators.LSHR, 4);
                a0 = x(a0, mul(nib, t, dl, dh));
                b0 = x(b0, mul(nib, t, fl, fh));
                a1 = x(a1, mul(nib, t + 2 * vl, dl, dh));
                b1 = x(b1, mul(nib, t + 2 * vl, fl, fh));
                a2 = x(a2, mul(nib, t + 4 * vl, dl, dh));
                b2 = x(b2, mul(nib, t + 4 * vl, fl, fh));
            }
            a0.intoMemorySegment(o0, i, NO); b0.intoMemorySegment(o0, i + vl, NO);
            a1.intoMemorySegment(o1, i, NO); b1.intoMemorySegment(o1, i + vl, NO);
            a2.intoMemorySegment(o2, i, NO); b2.intoMemorySegment(o2, i + vl, NO);
        }
        for (; i < n; i += vl) {
            ByteVector a0 = ByteVector.zero(species), a1 = a0, a2 = a0;
            for (int c = 0, t = first; c < cols; c++, t += stride) {
                ByteVector d = load(in[c], i);
                ByteVector dl = d.and((byte) 0x0f), dh = d.lanewise(VectorOperators.LSHR, 4);
                a0 = x(a0, mul(nib, t, dl, dh));
                a1 = x(a1, mul(nib, t + 2 * vl, dl, dh));
                a2 = x(a2, mul(nib, t + 4 * vl, dl, dh));
            }
            a0.intoMemorySegment(o0, i, NO);
            a1.intoMemorySegment(o1, i, NO);
            a2.intoMemorySegment(o2, i, NO);
        }
    }

    private void dot2(byte[] nib, int rows, int r0, MemorySegment[] in,
                      MemorySegment o0, MemorySegment o1, long n) {
        final int cols = in.length, stride = rows * 2 * vl, first = r0 * 2 * vl;
        long i = 0;
        for (; i + 2L * vl <= n; i += 2L * vl) {
            ByteVector a0 = ByteVector.zero(species), a1 = a0, b0 = a0, b1 = a0;
            for (int c = 0, t = first; c < cols; c++, t += stride) {
                MemorySegment s = in[c];
                ByteVector d = load(s, i), f = load(s, i + vl);
                ByteVector dl = d.and((byte) 0x0f), dh = d.lanewise(VectorOperators.LSHR, 4);
                ByteVector fl = f.and((byte) 0x0f), fh = f.lanewise(VectorOperators.LSHR, 4);
                a0 = x(a0, mul(nib, t, dl, dh));
                b0 = x(b0, mul(nib, t, fl, fh));
                a1 = x(a1, mul(nib, t + 2 * vl, dl, dh));
                b1 = x(b1, mul(nib, t + 2 * vl, fl, fh));
            }
            a0.intoMemorySegment(o0, i, NO); b0.intoMemorySegment(o0, i + vl, NO);
            a1.intoMemorySegment(o1, i, NO); b1.intoMemorySegment(o1, i + vl, NO);
        }
        for (; i < n; i += vl) {
            ByteVector a0 = ByteVector.zero(species), a1 = a0;
            for (int c = 0, t = first; c < cols; c++, t += stride) {
                ByteVector d = load(in[c], i);
                ByteVector dl = d.and((byte) 0x0f), dh = d.lanewise(VectorOperators.LSHR, 4);
                a0 = x(a0, mul(nib, t, dl, dh));
                a1 = x(a1, mul(nib, t + 2 * vl, dl, dh));
            }
            a0.intoMemorySegment(o0, i, NO);
            a1.intoMemorySegment(o1, i, NO);
        }
    }

    private void dot1(byte[] nib, int rows, int r0, MemorySegment[] in, MemorySegment o0, long n) {
        final int cols = in.length, stride = rows * 2 * vl, first = r0 * 2 * vl;
        long i = 0;
        for (; i + 2L * vl <= n; i += 2L * vl) {
            ByteVector a0 = ByteVector.zero(species), b0 = a0;
            for (int c = 0, t = first; c < cols; c++, t += stride) {
                MemorySegment s = in[c];
                ByteVector d = load(s, i), f = load(s, i + vl);
                a0 = x(a0, mul(nib, t, d.and((byte) 0x0f), d.lanewise(VectorOperators.LSHR, 4)));
                b0 = x(b0, mul(nib, t, f.and((byte) 0x0f), f.lanewise(VectorOperators.LSHR, 4)));
            }
            a0.intoMemorySegment(o0, i, NO);
            b0.intoMemorySegment(o0, i + vl, NO);
        }
        for (; i < n; i += vl) {
            ByteVector a0 = ByteVector.zero(species);
            for (int c = 0, t = first; c < cols; c++, t += stride) {
                ByteVector d = load(in[c], i);
                a0 = x(a0, mul(nib, t, d.and((byte) 0x0f), d.lanewise(VectorOperators.LSHR, 4)));
            }
            a0.intoMemorySegment(o0, i, NO);
        }
    }

    @Override
    void update(Tables t, MemorySegment a, MemorySegment b, MemorySegment[] out, long len) {
        Expanded e = (Expanded) t.expanded;
        byte[] nib = e.nib;
        int rows = t.rows;
        long vend = len - len % vl;
        for (long i = 0; i < vend; i += vl) {
            ByteVector d = x(load(a, i), load(b, i));
            ByteVector dl = d.and((byte) 0x0f), dh = d.lanewise(VectorOperators.LSHR, 4);
            for (int r = 0; r < rows; r++) {
                MemorySegment o = out[r];
                x(load(o, i), mul(nib, r * 2 * vl, dl, dh)).intoMemorySegment(o, i, NO);
            }
        }
        if (vend < len) {
            long wend = vend + ((len - vend) & ~7L);
            ScalarKernel.updateWords(e.masks, rows, a, b, out, vend, wend);
            ScalarKernel.updateBytes(t.matrix, rows, a, b, out, wend, len);
        }
    }
}
