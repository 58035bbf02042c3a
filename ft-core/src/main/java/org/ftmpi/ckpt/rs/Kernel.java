package org.ftmpi.ckpt.rs;

import java.lang.foreign.MemorySegment;

/**
 * A GF(2^8) "dot product" engine: {@code out[r] = XOR_c M[r][c] * in[c]} over byte streams. Two
 * implementations produce bit-identical output: {@link ScalarKernel} (portable, 64-bit SWAR) and
 * {@code VectorKernel} (jdk.incubator.vector nibble-table shuffles), which is only ever loaded
 * reflectively when the incubator module is in the boot layer.
 */
abstract class Kernel {

    /** A coefficient matrix plus whatever pre-expanded lookup tables the kernel wants. Immutable. */
    static final class Tables {
        final byte[] matrix; // rows x cols, row-major
        final int rows;
        final int cols;
        final Object expanded;

        Tables(byte[] matrix, int rows, int cols, Object expanded) {
            this.matrix = matrix;
            this.rows = rows;
            this.cols = cols;
            this.expanded = expanded;
        }
    }

    abstract String name();

    /** Expands a {@code rows x cols} coefficient matrix (copied, not retained). */
    abstract Tables prepare(byte[] matrix, int rows, int cols);

    /**
     * {@code out[r][0, len) = XOR over c of M[r][c] * in[c][0, len)} for {@code in.length == cols},
     * {@code out.length == rows}. Outputs must not alias inputs.
     */
    abstract void dot(Tables t, MemorySegment[] in, MemorySegment[] out, long len);

    /**
     * {@code out[r][0, len) ^= M[r][0] * (a ^ b)} for a {@code rows x 1} matrix: the parity delta of
     * one changed data shard.
     */
    abstract void update(Tables t, MemorySegment a, MemorySegment b, MemorySegment[] out, long len);
}
