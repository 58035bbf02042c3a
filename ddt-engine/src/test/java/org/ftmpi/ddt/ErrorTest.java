package org.ftmpi.ddt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Every error case maps to its Kind and names the offending argument. */
class ErrorTest {
    private static void expect(DatatypeException.Kind kind, String inMessage, Executable x) {
        DatatypeException e = assertThrows(DatatypeException.class, x);
        assertEquals(kind, e.kind(), e.getMessage());
        assertTrue(e.getMessage().contains(inMessage), e.getMessage());
    }

    @Test
    void negativeCounts() {
        expect(DatatypeException.Kind.COUNT, "count", () -> Datatype.contiguous(-1, Datatype.INT));
        expect(DatatypeException.Kind.COUNT, "blockLength", () -> Datatype.vector(2, -1, 3, Datatype.INT));
        expect(DatatypeException.Kind.COUNT, "blockLengths[1]",
                () -> Datatype.indexed(new int[] {1, -2}, new int[] {0, 4}, Datatype.INT));
        expect(DatatypeException.Kind.COUNT, "count", () -> Datatype.INT.packSize(-3));
        expect(DatatypeException.Kind.COUNT, "count", () -> Convertor.forPack(Datatype.INT, -1, new int[4], 0));
    }

    @Test
    void badConstructorArguments() {
        expect(DatatypeException.Kind.ARG, "displacements length",
                () -> Datatype.indexed(new int[] {1, 2}, new int[] {0}, Datatype.INT));
        expect(DatatypeException.Kind.ARG, "types",
                () -> Datatype.struct(new int[] {1}, new long[] {0}, new Datatype[0]));
        expect(DatatypeException.Kind.ARG, "subsizes[0]", () -> Datatype.subarray(new int[] {4}, new int[] {5},
                new int[] {0}, Datatype.Order.C, Datatype.INT));
        expect(DatatypeException.Kind.ARG, "starts[0]", () -> Datatype.subarray(new int[] {4}, new int[] {2},
                new int[] {3}, Datatype.Order.C, Datatype.INT));
        expect(DatatypeException.Kind.ARG, "psizes", () -> Datatype.darray(4, 0, new int[] {8},
                new Datatype.Distribution[] {Datatype.Distribution.BLOCK}, new int[] {Datatype.DFLT_DARG},
                new int[] {2}, Datatype.Order.C, Datatype.INT));
        expect(DatatypeException.Kind.ARG, "dargs[0] * psizes[0]", () -> Datatype.darray(2, 0, new int[] {8},
                new Datatype.Distribution[] {Datatype.Distribution.BLOCK}, new int[] {3},
                new int[] {2}, Datatype.Order.C, Datatype.INT));
        expect(DatatypeException.Kind.ARG, "rank", () -> Datatype.darray(2, 2, new int[] {8},
                new Datatype.Distribution[] {Datatype.Distribution.CYCLIC}, new int[] {1},
                new int[] {2}, Datatype.Order.C, Datatype.INT));
        expect(DatatypeException.Kind.ARG, "DISTRIBUTE_NONE", () -> Datatype.darray(2, 0, new int[] {8},
                new Datatype.Distribution[] {Datatype.Distribution.NONE}, new int[] {1},
                new int[] {2}, Datatype.Order.C, Datatype.INT));
        expect(DatatypeException.Kind.ARG, "padding", () -> new PackOptions(null, Encoding.NATIVE));
        expect(DatatypeException.Kind.TYPE, "oldType", () -> Datatype.contiguous(2, null));
    }

    @Test
    void typeUsedBeforeCommit() {
        Datatype t = Datatype.contiguous(2, Datatype.INT);
        expect(DatatypeException.Kind.TYPE, "not committed", () -> Convertor.forPack(t, 1, new int[2], 0));
        expect(DatatypeException.Kind.TYPE, "not committed", () -> t.packSize(1));
        t.commit();
        assertEquals(8, t.packSize(1));
    }

    @Test
    void overlappingTypeIsAnErrorOnlyForReceive() {
        Datatype t = Datatype.indexed(new int[] {2, 2}, new int[] {0, 1}, Datatype.INT).commit();
        int[] src = {1, 2, 3};
        int[] packed = new int[4];
        Convertor.forPack(t, 1, src, 0).packNext(java.lang.foreign.MemorySegment.ofArray(packed), 0, 16);
        assertEquals(java.util.List.of(1, 2, 2, 3), java.util.Arrays.stream(packed).boxed().toList());
        expect(DatatypeException.Kind.TYPE, "overlapping", () -> Convertor.forUnpack(t, 1, new int[3], 0));
        // non-overlapping per instance, but instances overlap for count 2
        Datatype r = Datatype.resized(Datatype.contiguous(2, Datatype.INT), 0, 4).commit();
        Convertor.forUnpack(r, 1, new int[3], 0);
        expect(DatatypeException.Kind.TYPE, "instances 1 apart", () -> Convertor.forUnpack(r, 2, new int[3], 0));
    }

    @Test
    void overrunsAndTruncation() {
        Datatype v = Datatype.vector(4, 1, 4, Datatype.DOUBLE).commit();
        expect(DatatypeException.Kind.BUFFER, "send buffer too small", () -> Convertor.forPack(v, 1, new double[12], 0));
        expect(DatatypeException.Kind.BUFFER, "receive buffer too small",
                () -> Convertor.forUnpack(v, 2, new double[16], 0));
        Convertor c = Convertor.forPack(v, 1, new double[13], 0);
        expect(DatatypeException.Kind.BUFFER, "destination range", () -> c.packNext(new byte[16], 0, 32));
        assertEquals(32, Convertor.forPack(v, 1, new double[13], 0).packNext(new byte[32], 0, 1000));
        Convertor u = Convertor.forUnpack(v, 1, new double[13], 0);
        expect(DatatypeException.Kind.TRUNCATE, "truncated", () -> u.unpackNext(new byte[40], 0, 40));
        assertTrue(u.done());
        expect(DatatypeException.Kind.BUFFER, "read-only",
                () -> Convertor.forUnpack(v, 1, ByteBuffer.allocate(200).asReadOnlyBuffer(), 0));
        expect(DatatypeException.Kind.BUFFER, "null", () -> Convertor.forPack(v, 1, null, 0));
        expect(DatatypeException.Kind.OTHER, "created for pack", () -> c.unpackNext(new byte[8], 0, 8));
    }
}
