package mpi;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class DirectBuffersTest {

    @Test
    void smallBuffersArePlainDirectBuffers() {
        ByteBuffer b = MPI.newByteBuffer(1000);
        assertTrue(b.isDirect());
        assertEquals(1000, b.capacity());
        assertEquals(1000, b.limit());
        assertEquals(0, b.position());
        assertEquals(ByteOrder.nativeOrder(), b.order());
        assertThrows(IllegalArgumentException.class, () -> MPI.newByteBuffer(-1));
    }

    @Test
    void largeBuffersHaveTheRequestedShapeAndSurviveCollections() {
        int n = 3 * (1 << 20) + 17;
        ByteBuffer b = MPI.newByteBuffer(n);
        assertTrue(b.isDirect());
        assertEquals(n, b.capacity());
        assertEquals(n, b.limit());
        assertEquals(0, b.position());
        assertEquals(ByteOrder.nativeOrder(), b.order());
        assertThrows(IndexOutOfBoundsException.class, () -> b.get(n));
        for (int i = 0; i < n; i += 4096) b.put(i, (byte) i);
        b.putLong(n - 8, 0x0102030405060708L);
        // Only the buffer refers to the mapping now; collections must not unmap it under it.
        for (int i = 0; i < 5; i++) {
            System.gc();
            byte[] churn = new byte[1 << 20];
            assertEquals(0, churn[i]);
        }
        for (int i = 0; i < n - 8; i += 4096) assertEquals((byte) i, b.get(i), "byte " + i);
        assertEquals(0x0102030405060708L, b.getLong(n - 8));
        assertEquals(n, MemorySegment.ofBuffer(b).byteSize());
    }

    @Test
    void largeBuffersAreHugePageMappingsWhereTheKernelOffersThem() throws Exception {
        assumeTrue(DirectBuffers.HUGE, "transparent huge pages not offered here");
        ByteBuffer b = MPI.newByteBuffer(DirectBuffers.HUGE_MIN_BYTES);
        long address = MemorySegment.ofBuffer(b).address();
        assertEquals(0, address % DirectBuffers.HUGE_PAGE_BYTES, "2 MiB-aligned");
        // smaps: the mapping that holds the buffer carries the MADV_HUGEPAGE flag ("hg").
        List<String> smaps = Files.readAllLines(Path.of("/proc/self/smaps"));
        boolean inside = false;
        String flags = null;
        for (String line : smaps) {
            if (line.matches("^[0-9a-f]+-[0-9a-f]+ .*")) {
                String[] range = line.substring(0, line.indexOf(' ')).split("-");
                inside = Long.parseUnsignedLong(range[0], 16) <= address && address < Long.parseUnsignedLong(range[1], 16);
            } else if (inside && line.startsWith("VmFlags:")) {
                flags = line;
                break;
            }
        }
        assertNotNull(flags, "no mapping holds " + Long.toHexString(address));
        assertTrue(List.of(flags.substring(8).trim().split(" ")).contains("hg"), flags);
        b.put(0, (byte) 1); // keep b reachable to here
    }
}
