package org.ftmpi.ddt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** Arrays in element offsets; ByteBuffers and segments in bytes; all padding modes on structs. */
class BufferTest {
    @Test
    void arrayOffsetsAreElementsBufferOffsetsAreBytes() {
        double[] a = new double[64];
        for (int i = 0; i < a.length; i++) {
            a[i] = i;
        }
        Datatype col = Datatype.vector(8, 1, 8, Datatype.DOUBLE).commit();
        ByteBuffer direct = ByteBuffer.allocateDirect(64 * 8).order(ByteOrder.nativeOrder());
        direct.asDoubleBuffer().put(a);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(64 * 8);
            MemorySegment.copy(a, 0, seg, ValueLayout.JAVA_DOUBLE, 0, 64);
            for (Object buf : new Object[] {a, direct, seg, ByteBuffer.wrap(new byte[512])}) {
                if (buf instanceof ByteBuffer bb && !bb.isDirect()) {
                    bb.order(ByteOrder.nativeOrder()).asDoubleBuffer().put(a);
                }
                long off = buf instanceof double[] ? 3 : 24;
                ByteBuffer out = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
                Convertor c = Convertor.forPack(col, 1, buf, off);
                while (!c.done()) {
                    c.packNext(out, 24);
                }
                assertEquals(64, out.position());
                for (int k = 0; k < 8; k++) {
                    assertEquals(3 + 8 * k, out.getDouble(8 * k), buf.getClass().getSimpleName());
                }
                out.flip();
                double[] back = new double[64];
                Convertor.forUnpack(col, 1, back, 3).unpackNext(out, 64);
                for (int k = 0; k < 8; k++) {
                    assertEquals(3 + 8 * k, back[3 + 8 * k]);
                }
            }
        }
    }

    @Test
    void alignedAndReorderedLayoutsOfAStruct() {
        // {byte at 0, double at 8, short at 16} -> extent 24
        Datatype s = Datatype.struct(new int[] {1, 1, 1}, new long[] {0, 8, 16},
                new Datatype[] {Datatype.BYTE, Datatype.DOUBLE, Datatype.SHORT}).commit();
        assertEquals(11, s.packSize(1));
        assertEquals(24, s.packSize(1, new PackOptions(Padding.ALIGNED, Encoding.NATIVE)));
        assertEquals(22, s.packSize(2, new PackOptions(Padding.REORDERED, Encoding.NATIVE)));
        ByteBuffer mem = ByteBuffer.allocate(48).order(ByteOrder.nativeOrder());
        mem.put(0, (byte) 1).putDouble(8, 2.0).putShort(16, (short) 3);
        mem.put(24, (byte) 4).putDouble(32, 5.0).putShort(40, (short) 6);
        byte[] out = new byte[22];
        Convertor.forPack(s, 2, mem, 0, new PackOptions(Padding.REORDERED, Encoding.NATIVE)).packNext(out, 0, 22);
        ByteBuffer o = ByteBuffer.wrap(out).order(ByteOrder.nativeOrder());
        assertEquals(2.0, o.getDouble(0));
        assertEquals(5.0, o.getDouble(8));
        assertEquals(3, o.getShort(16));
        assertEquals(6, o.getShort(18));
        assertEquals(1, o.get(20));
        assertEquals(4, o.get(21));
        byte[] al = new byte[48];
        Convertor.forPack(s, 2, mem, 0, new PackOptions(Padding.ALIGNED, Encoding.NATIVE)).packNext(al, 0, 48);
        assertArrayEquals(java.util.Arrays.copyOfRange(mem.array(), 0, 1), java.util.Arrays.copyOfRange(al, 0, 1));
        assertEquals(2.0, ByteBuffer.wrap(al).order(ByteOrder.nativeOrder()).getDouble(8));
        assertEquals(5.0, ByteBuffer.wrap(al).order(ByteOrder.nativeOrder()).getDouble(32));
    }

    @Test
    void signatureMatching() {
        Datatype pair = Datatype.contiguous(2, Datatype.INT).commit();
        assertEquals(true, TypeSignature.matches(pair.signature(), 3, Datatype.INT.signature(), 6));
        assertEquals(true, TypeSignature.matches(pair.signature(), 2, Datatype.INT.signature(), 6));
        assertEquals(false, TypeSignature.matches(pair.signature(), 4, Datatype.INT.signature(), 6));
        assertEquals(false, TypeSignature.matches(Datatype.FLOAT.signature(), 1, Datatype.INT.signature(), 1));
        Datatype di = Datatype.DOUBLE_INT;
        Datatype s = Datatype.struct(new int[] {1, 1}, new long[] {0, 8},
                new Datatype[] {Datatype.DOUBLE, Datatype.INT}).commit();
        assertEquals(true, TypeSignature.matches(di.signature(), 5, s.signature(), 5));
    }

    @Test
    void doubleArrayKernelsMatchTheGenericPath() {
        // irregular blocks of 1..20 doubles (word loops and bulk array copies), strided 2-double blocks
        int[] bl = new int[40], disp = new int[40];
        int at = 0;
        for (int i = 0; i < bl.length; i++) {
            at += 1 + i % 3;
            bl[i] = 1 + (i * 7) % 20;
            disp[i] = at;
            at += bl[i];
        }
        for (Datatype t : new Datatype[] {Datatype.indexed(bl, disp, Datatype.DOUBLE).commit(),
                Datatype.vector(50, 2, 5, Datatype.DOUBLE).commit()}) {
            int n = (int) (t.trueExtent() / 8) + 8;
            double[] a = new double[n];
            for (int i = 0; i < n; i++) {
                a[i] = i + 0.5;
            }
            ByteBuffer bytes = ByteBuffer.allocate(n * 8).order(ByteOrder.nativeOrder());
            bytes.asDoubleBuffer().put(a);
            byte[] viaDoubles = new byte[(int) t.packSize(1)];
            byte[] viaBytes = new byte[viaDoubles.length];
            Convertor.forPack(t, 1, a, 2).packNext(viaDoubles, 0, viaDoubles.length);
            Convertor.forPack(t, 1, bytes, 16).packNext(viaBytes, 0, viaBytes.length);
            assertArrayEquals(viaBytes, viaDoubles);
            double[] back = new double[n];
            Convertor.forUnpack(t, 1, back, 2).unpackNext(viaDoubles, 0, viaDoubles.length);
            for (ReferencePacker.Elem e : ReferencePacker.typeMap(t)) {
                int i = 2 + (int) (e.offset() / 8);
                assertEquals(a[i], back[i]);
            }
        }
    }

    /**
     * Every primitive array kind (sized from the array, its memory segment made only when a path
     * needs it): a strided type packs native and byte-swapped into a heap stream and unpacks back,
     * equal to the same bytes in a ByteBuffer; an array one element short of the type map and a
     * {@code boolean[]} are BUFFER errors naming the sizes / the kind.
     */
    @Test
    void everyPrimitiveArrayKind() {
        PackOptions swapped = new PackOptions(Padding.NONE, Encoding.BYTE_SWAP);
        Object[] arrays = {new byte[64], new short[64], new char[64], new int[64], new long[64], new float[64],
                new double[64]};
        for (Object arr : arrays) {
            int unit = Buffers.unit(arr);
            ByteBuffer bytes = ByteBuffer.allocate(64 * unit).order(ByteOrder.nativeOrder());
            for (int i = 0; i < bytes.capacity(); i++) {
                bytes.put(i, (byte) (i * 7 + 1));
            }
            MemorySegment.copy(MemorySegment.ofBuffer(bytes), 0, Buffers.segment(arr), 0, bytes.capacity());
            // 7 blocks of 2 elements, stride 9 elements, at element offset 3
            Datatype t = Datatype.hvector(7, 2 * unit, 9L * unit, Datatype.BYTE).commit();
            for (PackOptions o : new PackOptions[] {PackOptions.NATIVE, swapped}) {
                byte[] fromArray = new byte[(int) t.packSize(1)];
                byte[] fromBytes = new byte[fromArray.length];
                Convertor c = Convertor.forPack(t, 1, arr, 3, o);
                c.packNext(fromArray, 0, 5); // ends inside a block
                c.packNext(fromArray, 5, fromArray.length - 5);
                Convertor.forPack(t, 1, bytes, 3L * unit, o).packNext(fromBytes, 0, fromBytes.length);
                assertArrayEquals(fromBytes, fromArray, arr.getClass().getSimpleName() + " " + o);
                Object back = java.lang.reflect.Array.newInstance(arr.getClass().getComponentType(), 64);
                Convertor.forUnpack(t, 1, back, 3, o).unpackNext(fromArray, 0, fromArray.length);
                byte[] again = new byte[fromArray.length];
                Convertor.forPack(t, 1, back, 3, o).packNext(again, 0, again.length);
                assertArrayEquals(fromArray, again, arr.getClass().getSimpleName() + " " + o);
            }
            Object shortArr = java.lang.reflect.Array.newInstance(arr.getClass().getComponentType(), 3 + 6 * 9 + 1);
            DatatypeException e = assertThrows(DatatypeException.class, () -> Convertor.forUnpack(t, 1, shortArr, 3));
            assertEquals(DatatypeException.Kind.BUFFER, e.kind());
            assertTrue(e.getMessage().contains("of a " + (3 + 6 * 9 + 1) * unit + "-byte buffer"), e.getMessage());
        }
        DatatypeException e = assertThrows(DatatypeException.class,
                () -> Convertor.forPack(Datatype.BYTE, 1, new boolean[4], 0));
        assertEquals(DatatypeException.Kind.BUFFER, e.kind());
        assertTrue(e.getMessage().contains("boolean[]"), e.getMessage());
    }
}
