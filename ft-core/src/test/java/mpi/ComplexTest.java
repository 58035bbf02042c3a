package mpi;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import org.junit.jupiter.api.Test;

/** DoubleComplex and FloatComplex: views of (real, imaginary) pairs in arrays and buffers. */
class ComplexTest {

    @Test
    void doubleComplexReadsAndWritesItsStorage() {
        double[] a = {1, 2, 3, 4, 5, 6};
        DoubleComplex z = DoubleComplex.get(a, 1);
        assertEquals(3, z.getReal());
        assertEquals(4, z.getImag());
        z.putReal(-3);
        z.putImag(-4);
        assertArrayEquals(new double[] {1, 2, -3, -4, 5, 6}, a);
        assertEquals(1, DoubleComplex.get(a).getReal());
        DoubleBuffer rest = z.getBuffer();
        assertEquals(-3, rest.get(0));
        assertEquals(4, rest.capacity());

        ByteBuffer bytes = MPI.newByteBuffer(4 * 8);
        DoubleComplex w = DoubleComplex.get(bytes, 1);
        w.putReal(7.5);
        w.putImag(-0.25);
        DoubleBuffer view = bytes.asDoubleBuffer();
        assertEquals(7.5, view.get(2));
        assertEquals(-0.25, view.get(3));
        assertEquals(7.5, DoubleComplex.get(view, 1).getReal());
        assertSame(view, DoubleComplex.get(view).getBuffer());
        assertThrows(IndexOutOfBoundsException.class, () -> DoubleComplex.get(a, 3).getReal());
        assertThrows(IndexOutOfBoundsException.class, () -> DoubleComplex.get(a, -1));
    }

    @Test
    void floatComplexReadsAndWritesItsStorage() {
        float[] a = new float[4];
        FloatComplex z = FloatComplex.get(a, 1);
        z.putReal(1.5f);
        z.putImag(2.5f);
        assertArrayEquals(new float[] {0, 0, 1.5f, 2.5f}, a);
        assertEquals(2.5f, FloatComplex.get(FloatBuffer.wrap(a), 1).getImag());
        ByteBuffer bytes = MPI.newByteBuffer(2 * 4);
        FloatComplex.get(bytes).putImag(9f);
        assertEquals(9f, bytes.asFloatBuffer().get(1));
        assertEquals(9f, FloatComplex.get(bytes).getBuffer().get(1));
    }
}
