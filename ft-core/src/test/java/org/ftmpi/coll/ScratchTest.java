package org.ftmpi.coll;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/**
 * The scratch region a thread keeps between small reductions ({@link DefaultCollectives#takeScratch}):
 * reused only after it was given back, only for the same size, never shared by a nested call,
 * and never kept when large.
 */
class ScratchTest {
    @Test
    void aGivenBackRegionIsReusedForTheSameSizeOnly() {
        MemorySegment a = DefaultCollectives.takeScratch(8);
        assertEquals(8, a.byteSize());
        DefaultCollectives.giveBackScratch(a);
        assertSame(a, DefaultCollectives.takeScratch(8), "the region given back is taken again");
        DefaultCollectives.giveBackScratch(a);
        MemorySegment b = DefaultCollectives.takeScratch(16);
        assertNotSame(a, b);
        assertEquals(16, b.byteSize());
    }

    @Test
    void aRegionStillTakenIsNeverHandedOutAgain() {
        MemorySegment outer = DefaultCollectives.takeScratch(24);
        MemorySegment nested = DefaultCollectives.takeScratch(24); // a user op calling a reduction
        assertNotSame(outer, nested);
        // a call that failed never gives its region back: the next call gets another one
        MemorySegment next = DefaultCollectives.takeScratch(24);
        assertNotSame(outer, next);
        assertNotSame(nested, next);
    }

    @Test
    void largeRegionsAreNotKept() {
        long big = DefaultCollectives.SCRATCH_KEPT + 8;
        MemorySegment a = DefaultCollectives.takeScratch(big);
        DefaultCollectives.giveBackScratch(a);
        assertNotSame(a, DefaultCollectives.takeScratch(big));
    }

    @Test
    void eachThreadKeepsItsOwn() throws Exception {
        MemorySegment mine = DefaultCollectives.takeScratch(32);
        DefaultCollectives.giveBackScratch(mine);
        MemorySegment[] other = new MemorySegment[1];
        Thread t = Thread.ofPlatform().start(() -> other[0] = DefaultCollectives.takeScratch(32));
        t.join();
        assertNotSame(mine, other[0]);
        assertSame(mine, DefaultCollectives.takeScratch(32));
    }
}
