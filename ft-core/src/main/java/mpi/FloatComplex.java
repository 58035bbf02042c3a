package mpi;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;

/**
 * A view of one complex number (real part, then imaginary part) stored in a {@code float[]} or a
 * buffer, as the data of {@link MPI#FLOAT_COMPLEX} is laid out. The view reads and writes the
 * storage itself; {@code index} counts complex numbers (two floats each).
 */
public final class FloatComplex {
    private final FloatBuffer buffer;
    private final int offset;

    private FloatComplex(FloatBuffer buffer, int index) {
        if (buffer == null) throw new IllegalArgumentException("FloatComplex: buffer is null");
        if (index < 0) throw new IndexOutOfBoundsException("FloatComplex: index " + index + " is negative");
        this.buffer = buffer;
        this.offset = 2 * index;
    }

    /** The complex number at the start of {@code buffer}. */
    public static FloatComplex get(FloatBuffer buffer) {
        return new FloatComplex(buffer, 0);
    }

    /** Complex number {@code index} of the complex numbers stored in {@code buffer}. */
    public static FloatComplex get(FloatBuffer buffer, int index) {
        return new FloatComplex(buffer, index);
    }

    /** The complex number in the first two values of {@code array}. */
    public static FloatComplex get(float[] array) {
        return new FloatComplex(FloatBuffer.wrap(array), 0);
    }

    /** Complex number {@code index} of the complex numbers stored in {@code array}. */
    public static FloatComplex get(float[] array, int index) {
        return new FloatComplex(FloatBuffer.wrap(array), index);
    }

    /** The complex number at the start of {@code buffer} (in the buffer's byte order). */
    public static FloatComplex get(ByteBuffer buffer) {
        return new FloatComplex(buffer.asFloatBuffer(), 0);
    }

    /** Complex number {@code index} of the complex numbers stored in {@code buffer}. */
    public static FloatComplex get(ByteBuffer buffer, int index) {
        return new FloatComplex(buffer.asFloatBuffer(), index);
    }

    public float getReal() {
        return buffer.get(offset);
    }

    public float getImag() {
        return buffer.get(offset + 1);
    }

    public void putReal(float real) {
        buffer.put(offset, real);
    }

    public void putImag(float imag) {
        buffer.put(offset + 1, imag);
    }

    /** The storage from this complex number on (the buffer itself for the first one). */
    public FloatBuffer getBuffer() {
        return offset == 0 ? buffer : MPI.slice(buffer, offset);
    }
}
