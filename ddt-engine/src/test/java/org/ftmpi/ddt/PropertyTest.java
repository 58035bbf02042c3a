package org.ftmpi.ddt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Random nested types against the element-by-element reference packer. */
class PropertyTest {
    private static final PackOptions[] ALL_OPTIONS;

    static {
        ALL_OPTIONS = new PackOptions[Padding.values().length * Encoding.values().length];
        int k = 0;
        for (Padding p : Padding.values()) {
            for (Encoding e : Encoding.values()) {
                ALL_OPTIONS[k++] = new PackOptions(p, e);
            }
        }
    }

    @Test
    @Timeout(value = 40, unit = TimeUnit.SECONDS)
    void randomTypesMatchReferenceInEveryModeAndSegmentation() {
        int checked = 0;
        for (long seed = 0; seed < 4000; seed++) {
            Random r = new Random(seed * 7919);
            Datatype t = new RandomTypes(seed).gen(1 + (int) (seed % 4)).commit();
            int count = 1 + r.nextInt(3);
            if (t.size() * count > 40_000 || Math.abs(t.extent()) * count + t.trueExtent() > 400_000) {
                continue;
            }
            PackOptions o = ALL_OPTIONS[(int) (seed % ALL_OPTIONS.length)];
            checkType(t, count, o, r);
            if (seed % 5 == 0) {
                checkType(t, count, PackOptions.NATIVE, r);
            }
            checked++;
        }
        assertTrue(checked > 2500, "checked " + checked);
    }

    static void checkType(Datatype t, int count, PackOptions o, Random r) {
        long span = (count - 1) * t.extent();
        long lo = t.trueLb() + Math.min(0, span), hi = t.trueLb() + t.trueExtent() + Math.max(0, span);
        int base0 = (int) (Math.max(0, -lo) + r.nextInt(8));
        int size0 = (int) (base0 + hi + r.nextInt(8));
        boolean align8 = r.nextBoolean(); // 8-aligned base and size: exercises the double[] kernels
        final int base = align8 ? (base0 + 7) & ~7 : base0;
        int memSize = align8 ? ((int) (base + hi) + 7) & ~7 : size0;
        byte[] mem = new byte[Math.max(memSize, 1)];
        r.nextBytes(mem);
        String what = t + " count=" + count + " " + o + " program=" + t.describeTypedProgram();
        byte[] expected = ReferencePacker.pack(t, count, mem, base, o);
        assertEquals(expected.length, t.packSize(count, o), what);
        // pack in one go and in segments of 1, a random size and the whole message
        int[] segs = {expected.length + 1, 1, 1 + r.nextInt(17), 3 + r.nextInt(64)};
        for (int seg : segs) {
            Convertor c = Convertor.forPack(t, count, mem, base, o);
            byte[] got = new byte[expected.length];
            int at = 0;
            while (!c.done()) {
                long k = c.packNext(got, at, Math.min(seg, got.length - at));
                assertTrue(k > 0, what);
                at += (int) k;
                assertEquals(at, c.position());
            }
            assertArrayEquals(expected, got, what + " seg=" + seg);
        }
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) { // native user buffer
            MemorySegment nat = arena.allocate(mem.length);
            MemorySegment.copy(MemorySegment.ofArray(mem), 0, nat, 0, mem.length);
            MemorySegment out = arena.allocate(Math.max(1, expected.length));
            Convertor c = Convertor.forPack(t, count, nat, base, o);
            long at = 0;
            while (!c.done()) {
                at += c.packNext(out, at, Math.min(segs[2], expected.length - at));
            }
            assertArrayEquals(expected, out.asSlice(0, expected.length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                    what + " native");
        }
        if (base % 8 == 0 && mem.length % 8 == 0) { // same through a double[] user buffer
            double[] dm = new double[mem.length / 8];
            java.nio.ByteBuffer.wrap(mem).order(java.nio.ByteOrder.nativeOrder()).asDoubleBuffer().get(dm);
            Convertor c = Convertor.forPack(t, count, dm, base / 8, o);
            byte[] got = new byte[expected.length];
            int at = 0;
            while (!c.done()) {
                at += (int) c.packNext(got, at, Math.min(segs[2], got.length - at));
            }
            assertArrayEquals(expected, got, what + " double[]");
            try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) { // double[] -> native (raw kernels)
                MemorySegment out = arena.allocate(Math.max(1, expected.length));
                Convertor n = Convertor.forPack(t, count, dm, base / 8, o);
                long pos = 0;
                while (!n.done()) {
                    pos += n.packNext(out, pos, Math.min(segs[2], expected.length - pos));
                }
                assertArrayEquals(expected, out.asSlice(0, expected.length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                        what + " double[] to native");
            }
        }
        // unpack
        byte[] refMem = new byte[mem.length];
        boolean ok = ReferencePacker.unpack(t, count, expected, refMem, base, o);
        if (!ok) {
            DatatypeException e = assertThrows(DatatypeException.class,
                    () -> Convertor.forUnpack(t, count, new byte[mem.length], base, o), what);
            assertEquals(DatatypeException.Kind.TYPE, e.kind());
            return;
        }
        for (int seg : segs) {
            byte[] out = new byte[mem.length];
            Convertor u = Convertor.forUnpack(t, count, MemorySegment.ofArray(out), base, o);
            int at = 0;
            while (!u.done()) {
                int k = (int) Math.min(seg, expected.length - at);
                assertEquals(k, u.unpackNext(expected, at, k));
                at += k;
            }
            assertArrayEquals(refMem, out, what + " unpack seg=" + seg);
        }
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            MemorySegment nat = arena.allocate(mem.length);
            MemorySegment src = arena.allocate(Math.max(1, expected.length));
            MemorySegment.copy(MemorySegment.ofArray(expected), 0, src, 0, expected.length);
            Convertor u = Convertor.forUnpack(t, count, nat, base, o);
            long at = 0;
            while (!u.done()) {
                long k = Math.min(segs[3], expected.length - at);
                at += u.unpackNext(src, at, k);
            }
            assertArrayEquals(refMem, nat.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), what + " unpack native");
        }
        if (base % 8 == 0 && mem.length % 8 == 0) {
            double[] dm = new double[mem.length / 8];
            Convertor u = Convertor.forUnpack(t, count, dm, base / 8, o);
            u.unpackNext(expected, 0, expected.length);
            byte[] out = new byte[mem.length];
            java.nio.ByteBuffer.wrap(out).order(java.nio.ByteOrder.nativeOrder()).asDoubleBuffer().put(dm);
            assertArrayEquals(refMem, out, what + " unpack double[]");
            try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) { // native -> double[] (raw kernels)
                MemorySegment src = arena.allocate(Math.max(1, expected.length));
                MemorySegment.copy(MemorySegment.ofArray(expected), 0, src, 0, expected.length);
                double[] dn = new double[mem.length / 8];
                Convertor n = Convertor.forUnpack(t, count, dn, base / 8, o);
                long pos = 0;
                while (!n.done()) {
                    long k = Math.min(segs[3], expected.length - pos);
                    pos += n.unpackNext(src, pos, k);
                }
                byte[] out2 = new byte[mem.length];
                java.nio.ByteBuffer.wrap(out2).order(java.nio.ByteOrder.nativeOrder()).asDoubleBuffer().put(dn);
                assertArrayEquals(refMem, out2, what + " unpack native to double[]");
            }
        }
    }

    @Test
    void byteSwapRoundTripRestoresValues() {
        Random r = new Random(42);
        for (int seed = 0; seed < 100; seed++) {
            Datatype t = new RandomTypes(1000 + seed).gen(3).commit();
            if (t.size() > 20_000 || t.trueExtent() > 100_000) {
                continue;
            }
            for (Encoding e : new Encoding[] {Encoding.BYTE_SWAP, Encoding.EXTERNAL32}) {
                PackOptions o = new PackOptions(Padding.NONE, e);
                byte[] mem = new byte[(int) (t.trueExtent() + 16)];
                r.nextBytes(mem);
                int base = (int) (Math.max(0, -t.trueLb()) + 8);
                mem = java.util.Arrays.copyOf(mem, (int) (base + t.trueLb() + t.trueExtent() + 8));
                byte[] packed = new byte[(int) t.packSize(1, o)];
                Convertor.forPack(t, 1, mem, base, o).packNext(packed, 0, packed.length);
                if (!ReferencePacker.unpack(t, 1, packed, new byte[mem.length], base, o)) {
                    continue; // overlapping receive type
                }
                byte[] back = mem.clone();
                java.util.Arrays.fill(back, (byte) 0);
                Convertor.forUnpack(t, 1, back, base, o).unpackNext(packed, 0, packed.length);
                for (ReferencePacker.Elem el : ReferencePacker.typeMap(t)) {
                    int at = (int) (base + el.offset());
                    for (int i = 0; i < el.type().size(); i++) {
                        assertEquals(mem[at + i], back[at + i], t + " " + e + " byte " + (at + i));
                    }
                }
                byte[] repacked = new byte[packed.length];
                Convertor.forPack(t, 1, back, base, o).packNext(repacked, 0, repacked.length);
                assertArrayEquals(packed, repacked, t + " " + e);
            }
        }
    }
}
