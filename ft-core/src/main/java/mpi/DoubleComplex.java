package mpi;

import java.nio.ByteBuffer;
import java.nio.DoubleBuffer;

/**
 * A view of one complex number (real part, then imaginary part) stored in a {@code double[]} or a
 * buffer, as the data of {@link MPI#DOUBLE_COMPLEX} is laid out. The view reads and writes the
 * storage itself; {@code index} counts complex numbers (two doubles each).
 */
public final class DoubleComplex {
    private final DoubleBuffer buffer;
    private final int offset;

    private DoubleComplex(DoubleBuffer buffer, int index) {
        if (buffer == null) throw new IllegalArgumentException("DoubleComplex: buffer is null");
        if (index < 0) throw new IndexOutOfBoundsException("DoubleComplex: index " + index + " is negative");
        this.buffer = buffer;
        this.offset = 2 * index;
    }

    /** The complex number at the start of {@code buffer}. */
    public static DoubleComplex get(DoubleBuffer buffer) {
        return new DoubleComplex(buffer, 0);
    }

    /** Complex number {@code index} of the complex numbers stored in {@code buffer}. */
    public static DoubleComplex get(DoubleBuffer buffer, int index) {
        return new DoubleComplex(buffer, index);
    }

    /** The complex number in the first two values of {@code array}. */
    public static DoubleComplex get(double[] array) {
        return new DoubleComplex(DoubleBuffer.wrap(array), 0);
    }

    /** Complex number {@code index} of the complex numbers stored in {@code array}. */
    public static DoubleComplex get(double[] array, int index) {
        return new DoubleComplex(DoubleBuffer.wrap(array), index);
    }

    /** The complex number at the start of {@code buffer} (in the buffer's byte order). */
    public static DoubleComplex get(ByteBuffer buffer) {
        return new DoubleComplex(buffer.asDoubleBuffer(), 0);
    }

    /** Complex number {@code index} of the complex numbers stored in {@code buffer}. */
    public static DoubleComplex get(ByteBuffer buffer, int index) {
        return new DoubleComplex(buffer.asDoubleBuffer(), index);
    }

    public double getReal() {
        return buffer.get(offset);
    }

    public double getImag() {
        return buffer.get(offset + 1);
    }

    public void putReal(double real) {
        buffer.put(offset, real);
    }

    public void putImag(double imag) {
        buffer.put(offset + 1, imag);
    }

    /** The storage from this complex number on (the buffer itself for the first one). */
    public DoubleBuffer getBuffer() {
        return offset == 0 ? buffer : MPI.slice(buffer, offset);
    }
}
