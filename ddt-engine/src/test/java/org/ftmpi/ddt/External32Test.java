package org.ftmpi.ddt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** external32 = big-endian two's complement / IEEE 754 big-endian, sizes per BasicType. */
class External32Test {
    private static byte[] pack(Datatype t, Object buf, int count) {
        byte[] out = new byte[(int) t.packSize(count, PackOptions.EXTERNAL32)];
        Convertor.forPack(t, count, buf, 0, PackOptions.EXTERNAL32).packNext(out, 0, out.length);
        return out;
    }

    private static ByteBuffer be(int n) {
        return ByteBuffer.allocate(n).order(ByteOrder.BIG_ENDIAN);
    }

    @Test
    void everyBasicTypeIsBigEndian() {
        double[] d = {1.5, -0.0, Double.MIN_VALUE, Double.NaN};
        ByteBuffer e = be(32);
        for (double v : d) {
            e.putDouble(v);
        }
        assertArrayEquals(e.array(), pack(Datatype.DOUBLE, d, 4));

        float[] f = {1.5f, -2.25f, Float.MAX_VALUE};
        e = be(12);
        for (float v : f) {
            e.putFloat(v);
        }
        assertArrayEquals(e.array(), pack(Datatype.FLOAT, f, 3));

        long[] l = {1L, -2L, Long.MIN_VALUE, 0x0102030405060708L};
        e = be(32);
        for (long v : l) {
            e.putLong(v);
        }
        assertArrayEquals(e.array(), pack(Datatype.LONG, l, 4));

        int[] i = {1, -2, Integer.MIN_VALUE, 0x01020304};
        e = be(16);
        for (int v : i) {
            e.putInt(v);
        }
        assertArrayEquals(e.array(), pack(Datatype.INT, i, 4));

        short[] s = {1, -2, Short.MIN_VALUE};
        e = be(6);
        for (short v : s) {
            e.putShort(v);
        }
        assertArrayEquals(e.array(), pack(Datatype.SHORT, s, 3));

        char[] c = {'A', '\u20ac', '\uffff'};
        e = be(6);
        for (char v : c) {
            e.putChar(v);
        }
        assertArrayEquals(e.array(), pack(Datatype.CHAR, c, 3));

        byte[] b = {1, -1, 0};
        assertArrayEquals(b, pack(Datatype.BYTE, b, 3));
        byte[] bool = {1, 0, 1};
        assertArrayEquals(bool, pack(Datatype.BOOLEAN, bool, 3));
        assertEquals(1, BasicType.BOOLEAN.external32Size());
    }

    @Test
    void pairTypeHasNoPaddingInExternal32() {
        ByteBuffer mem = ByteBuffer.allocate(16).order(ByteOrder.nativeOrder());
        mem.putDouble(0, 3.25).putInt(8, -7);
        byte[] got = pack(Datatype.DOUBLE_INT, mem, 1);
        assertArrayEquals(be(12).putDouble(3.25).putInt(-7).array(), got);
        assertEquals(16, Datatype.DOUBLE_INT.extent());
        assertEquals(12, Datatype.DOUBLE_INT.size());
    }

    @Test
    void externalRoundTripThroughSegments() {
        double[] src = new double[100];
        for (int k = 0; k < src.length; k++) {
            src[k] = k * 1.25 - 3;
        }
        Datatype col = Datatype.vector(10, 1, 10, Datatype.DOUBLE).commit();
        byte[] packed = new byte[(int) col.packSize(1, PackOptions.EXTERNAL32)];
        Convertor c = Convertor.forPack(col, 1, src, 3, PackOptions.EXTERNAL32);
        int at = 0;
        while (!c.done()) {
            at += (int) c.packNext(packed, at, 3); // splits elements across segments
        }
        ByteBuffer p = ByteBuffer.wrap(packed).order(ByteOrder.BIG_ENDIAN);
        for (int k = 0; k < 10; k++) {
            assertEquals(src[3 + 10 * k], p.getDouble(8 * k));
        }
        double[] dst = new double[100];
        Convertor u = Convertor.forUnpack(col, 1, dst, 3, PackOptions.EXTERNAL32);
        for (int k = 0; k < packed.length; k += 5) {
            u.unpackNext(packed, k, Math.min(5, packed.length - k));
        }
        for (int k = 0; k < 10; k++) {
            assertEquals(src[3 + 10 * k], dst[3 + 10 * k]);
        }
    }
}
