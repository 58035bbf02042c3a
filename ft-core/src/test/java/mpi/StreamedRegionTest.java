package mpi;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** Which point-to-point regions stream through the engine (no staging copy) and which stage. */
class StreamedRegionTest {

    @Test
    void largeNonDenseTypesStreamOthersStageOrViewTheUserMemory() throws MPIException {
        Datatype big = Datatype.createVector(10_000, 1, 2, MPI.DOUBLE); // 80 000 packed bytes
        big.commit();
        Datatype small = Datatype.createVector(100, 1, 2, MPI.DOUBLE);
        small.commit();
        Datatype dense = Datatype.createContiguous(20_000, MPI.DOUBLE);
        dense.commit();
        double[] a = new double[20_000];

        Buffers.Region s = Buffers.region(a, 1, big, "send", Buffers.STREAM_SEND);
        assertTrue(s.streamed);
        assertEquals(MemorySegment.NULL, s.seg); // nothing staged
        assertEquals(80_000, s.bytes);
        assertTrue(Buffers.region(a, 1, big, "recv", Buffers.STREAM_RECV).streamed);
        // collectives, buffered sends and the like keep the packed staging copy
        assertFalse(Buffers.region(a, 1, big, "bSend", Buffers.SEND).streamed);
        assertEquals(80_000, Buffers.region(a, 1, big, "bSend", Buffers.SEND).seg.byteSize());
        assertFalse(Buffers.region(a, 1, small, "send", Buffers.STREAM_SEND).streamed); // below 64 KiB
        assertFalse(Buffers.region(a, 1, dense, "send", Buffers.STREAM_SEND).streamed); // a view, no copy
        assertFalse(Buffers.region(a, 20_000, MPI.DOUBLE, "send", Buffers.STREAM_SEND).streamed);

        // the stream packs what a staging copy holds, in any segment sizes
        Buffers.Region staged = Buffers.region(a, 1, big, "x", Buffers.SEND);
        for (int i = 0; i < a.length; i++) a[i] = i;
        staged.refill();
        org.ftmpi.p2p.PackedPayload p = s.payload(false);
        byte[] got = new byte[80_000];
        MemorySegment g = MemorySegment.ofArray(got);
        p.pack(g, 0, 1);
        p.pack(g, 1, 40_000);
        p.pack(g, 40_001, 39_999);
        assertArrayEquals(staged.seg.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), got);

        // a too-small buffer fails when the region is made, not inside the engine
        MPIException e = assertThrows(MPIException.class,
                () -> Buffers.region(new double[100], 1, big, "send", Buffers.STREAM_SEND));
        assertEquals(MPI.ERR_BUFFER, e.getErrorClass());
    }
}
