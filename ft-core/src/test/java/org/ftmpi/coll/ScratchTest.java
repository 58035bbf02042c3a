package org.ftmpi.coll;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/**
 * The scratch regions a thread keeps between small collective calls ({@link Scratch}): reused
 * only after they were given back, only for the same size, never shared by a nested call or
 * handed out twice, never kept when large, and kept per thread.
 */
class ScratchTest {
    @Test
    void aGivenBackRegionIsReusedForTheSameSizeOnly() {
        MemorySegment a = Scratch.take(8);
        assertEquals(8, a.byteSize());
        Scratch.giveBack(a);
        assertSame(a, Scratch.take(8), "the region given back is taken again");
        Scratch.giveBack(a);
        MemorySegment b = Scratch.take(16);
        assertNotSame(a, b);
        assertEquals(16, b.byteSize());
        assertSame(a, Scratch.take(8), "a region of another size taken meanwhile leaves it kept");
    }

    @Test
    void aRegionStillTakenIsNeverHandedOutAgain() {
        MemorySegment outer = Scratch.take(24);
        MemorySegment nested = Scratch.take(24); // a user op calling a reduction
        assertNotSame(outer, nested);
        // a call that failed never gives its region back: the next call gets another one
        MemorySegment next = Scratch.take(24);
        assertNotSame(outer, next);
        assertNotSame(nested, next);
    }

    @Test
    void aRegionGivenBackTwiceIsKeptOnce() {
        MemorySegment a = Scratch.take(40);
        Scratch.giveBack(a);
        Scratch.giveBack(a); // a zero-byte reduction's two partial results are one region
        MemorySegment x = Scratch.take(40), y = Scratch.take(40);
        assertNotSame(x, y);
    }

    @Test
    void aReductionsRegionsOfOneSizeAreAllKept() {
        MemorySegment[] r = new MemorySegment[Scratch.SLOTS];
        for (int i = 0; i < r.length; i++) r[i] = Scratch.take(48);
        for (MemorySegment m : r) Scratch.giveBack(m);
        for (int i = 0; i < r.length; i++) {
            MemorySegment m = Scratch.take(48);
            boolean kept = false;
            for (MemorySegment k : r) kept |= k == m;
            assertTrue(kept, "region " + i + " was not kept");
        }
    }

    /** A loop of 1 MiB reductions reuses its regions; those of a large message are native (single copy into them). */
    @Test
    void megabyteRegionsAreKeptAndNative() {
        MemorySegment a = Scratch.take(1 << 20), b = Scratch.take(1 << 20);
        assertTrue(a.isNative() && b.isNative());
        assertFalse(Scratch.take(Scratch.NATIVE_BYTES - 1).isNative());
        Scratch.giveBack(a);
        Scratch.giveBack(b);
        MemorySegment x = Scratch.take(1 << 20), y = Scratch.take(1 << 20);
        assertTrue((x == a && y == b) || (x == b && y == a), "both regions were kept");
    }

    @Test
    void largeRegionsAreNotKept() {
        long big = Scratch.KEPT_BYTES + 8;
        MemorySegment a = Scratch.take(big);
        Scratch.giveBack(a);
        assertNotSame(a, Scratch.take(big));
    }

    @Test
    void eachThreadKeepsItsOwn() throws Exception {
        MemorySegment mine = Scratch.take(32);
        Scratch.giveBack(mine);
        MemorySegment[] other = new MemorySegment[1];
        Thread t = Thread.ofPlatform().start(() -> other[0] = Scratch.take(32));
        t.join();
        assertNotSame(mine, other[0]);
        assertSame(mine, Scratch.take(32));
    }
}
