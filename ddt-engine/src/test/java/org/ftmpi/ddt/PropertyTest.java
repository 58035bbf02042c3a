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

    /**
     * Types that reach each specialised kernel of the raw paths, through every buffer kind and
     * segmentation of {@link #checkType}: far-strided 8-byte runs (spacer stores; vector, hvector,
     * folded resized instances, two-int blocks) and the flat word index (indexed blocks of 1-20
     * words, so every remainder of the four-word pack loop, negative displacements, all-8-byte
     * structs, several instances, a negative extent). Segments of 1 byte and 1-17 bytes stop mid-word and mid-block.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void specialisedKernelsMatchReference() {
        int[] bl = new int[60], disp = new int[60], neg = new int[60], far = new int[60];
        int at = 0;
        for (int i = 0; i < bl.length; i++) {
            at += 1 + (i * 5) % 7;
            bl[i] = 1 + (i * 7) % 20;
            disp[i] = at;
            neg[i] = at - 400;
            far[i] = at + 3000;
            at += bl[i];
        }
        Datatype farVector = Datatype.vector(40, 1, 512, Datatype.DOUBLE).commit();
        Datatype farH = Datatype.hvector(33, 1, 4100, Datatype.LONG).commit();
        Datatype farResized = Datatype.resized(Datatype.DOUBLE, 0, 8192).commit();
        Datatype farInts = Datatype.hvector(20, 1, 6000, Datatype.contiguous(2, Datatype.INT)).commit();
        Datatype indexed = Datatype.indexed(bl, disp, Datatype.DOUBLE).commit();
        Datatype negative = Datatype.indexed(bl, neg, Datatype.DOUBLE).commit();
        Datatype longs = Datatype.struct(new int[] {1, 3, 2}, new long[] {8, 40, 96},
                new Datatype[] {Datatype.LONG, Datatype.DOUBLE, Datatype.LONG}).commit();
        Random r = new Random(2026);
        for (Datatype t : new Datatype[] {farVector, farH, farResized, farInts}) {
            for (int count = 1; count <= 3; count++) {
                if (Convertor.RAW && (t != farResized || count > 1)) {
                    assertTrue(Convertor.forPack(t, count, new byte[(int) (count * t.extent() + 8)], 0).usesSpacer(),
                            t + " x " + count);
                }
                checkType(t, count, PackOptions.NATIVE, r);
                checkRawSegments(t, count, r);
            }
        }
        // negative extent larger than the true extent: instance k > 0 starts below the buffer
        // offset (before the buffer), its blocks 24 KB after that start do not
        Datatype backwards = Datatype.resized(Datatype.indexed(bl, far, Datatype.DOUBLE), 0, -9000).commit();
        for (Datatype t : new Datatype[] {indexed, negative, longs, backwards}) {
            if (Convertor.RAW) {
                assertTrue(Convertor.forPack(t, 1, new double[(int) ((Math.abs(t.trueLb()) + t.trueExtent()) / 8) + 1000], 500)
                        .usesWordIndex(),
                        t.toString());
            }
            for (int count = 1; count <= 3; count++) {
                checkType(t, count, PackOptions.NATIVE, r);
                checkRawSegments(t, count, r);
            }
        }
    }

    /**
     * Every block length of the raw block copy ({@code Raw.copy}: bytes 1-3, two 4-byte words,
     * 8-72 bytes as straight-line words with an overlapping last word, bulk above) and of the
     * {@code double[]} block copies (1-20 words), as single blocks and as strided runs of 1-3
     * blocks at odd gaps, plus the benchmark's 93-field struct (4- and 8-byte fields), packed and
     * unpacked whole and in segments against the reference packer.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void everyBlockLengthMatchesReference() {
        Random r = new Random(77);
        for (int len = 1; len <= 90; len++) {
            for (int n = 1; n <= 3; n++) {
                Datatype strided = Datatype.hvector(n, len, len + 3 + len % 5, Datatype.BYTE).commit();
                checkType(strided, 1 + len % 3, PackOptions.NATIVE, r);
                checkRawSegments(strided, 1 + len % 3, r);
            }
            Datatype single = Datatype.hindexed(new int[] {len, 1}, new long[] {5, len + 9L}, Datatype.BYTE).commit();
            checkType(single, 2, PackOptions.NATIVE, r);
            checkRawSegments(single, 2, r);
        }
        for (int words = 1; words <= 20; words++) {
            Datatype d = Datatype.vector(3, words, words + 1 + words % 3, Datatype.DOUBLE).commit();
            checkType(d, 2, PackOptions.NATIVE, r);
            checkRawSegments(d, 2, r);
        }
        Datatype[] cycle = {Datatype.DOUBLE, Datatype.INT, Datatype.DOUBLE, Datatype.DOUBLE, Datatype.FLOAT,
                Datatype.INT};
        int[] bl = new int[93];
        long[] d = new long[93];
        Datatype[] ts = new Datatype[93];
        long off = 0;
        for (int i = 0; i < 93; i++) {
            ts[i] = cycle[i % 6];
            off = (off + ts[i].size() - 1) / ts[i].size() * ts[i].size();
            bl[i] = 1;
            d[i] = off;
            off += ts[i].size();
        }
        Datatype struct93 = Datatype.struct(bl, d, ts).commit();
        for (int count = 1; count <= 3; count++) {
            checkType(struct93, count, PackOptions.NATIVE, r);
            checkRawSegments(struct93, count, r);
        }
    }

    /**
     * Packs from and unpacks into a double[] and a native user buffer through a native stream (the
     * raw kernels) in the whole message, in segments of whole words (the specialised loops run many
     * words per call and stop at a block boundary or inside a block) and in segments of words + 3
     * bytes (partial words), against the reference packer.
     */
    private static void checkRawSegments(Datatype t, int count, Random r) {
        long span = (count - 1) * t.extent();
        long lo = t.trueLb() + Math.min(0, span), hi = t.trueLb() + t.trueExtent() + Math.max(0, span);
        int base = (int) ((Math.max(0, -lo) + 7) & ~7);
        double[] doubles = new double[(int) ((base + hi + 7) / 8)];
        for (int i = 0; i < doubles.length; i++) {
            doubles[i] = r.nextDouble();
        }
        byte[] mem = new byte[doubles.length * 8];
        java.nio.ByteBuffer.wrap(mem).order(java.nio.ByteOrder.nativeOrder()).asDoubleBuffer().put(doubles);
        byte[] expected = ReferencePacker.pack(t, count, mem, base, PackOptions.NATIVE);
        byte[] refMem = new byte[mem.length];
        assertTrue(ReferencePacker.unpack(t, count, expected, refMem, base, PackOptions.NATIVE));
        String what = t + " count=" + count + " program=" + t.describeTypedProgram();
        int[] segs = {expected.length, 8 * (1 + r.nextInt(40)), 8 * (1 + r.nextInt(40)) + 3};
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            MemorySegment nat = arena.allocate(mem.length, 8);
            MemorySegment.copy(MemorySegment.ofArray(mem), 0, nat, 0, mem.length);
            MemorySegment stream = arena.allocate(Math.max(1, expected.length));
            for (int seg : segs) {
                for (boolean heap : new boolean[] {true, false}) {
                    Object user = heap ? doubles : nat;
                    long off = heap ? base / 8 : base;
                    Convertor c = Convertor.forPack(t, count, user, off);
                    long at = 0;
                    while (!c.done()) {
                        at += c.packNext(stream, at, Math.min(seg, expected.length - at));
                    }
                    assertArrayEquals(expected, stream.asSlice(0, expected.length)
                            .toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), what + " pack seg=" + seg + " heap=" + heap);
                    double[] backD = new double[doubles.length];
                    MemorySegment backN = arena.allocate(mem.length, 8);
                    Convertor u = Convertor.forUnpack(t, count, heap ? backD : backN, off);
                    at = 0;
                    while (!u.done()) {
                        at += u.unpackNext(stream, at, Math.min(seg, expected.length - at));
                    }
                    byte[] got = heap ? new byte[mem.length] : backN.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
                    if (heap) {
                        java.nio.ByteBuffer.wrap(got).order(java.nio.ByteOrder.nativeOrder()).asDoubleBuffer().put(backD);
                    }
                    assertArrayEquals(refMem, got, what + " unpack seg=" + seg + " heap=" + heap);
                }
            }
        }
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
