package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SpareTest {
    /**
     * A waiting spare brings about a collection before it reports ready (so that none runs in
     * the MPI_Init of the rank it takes over): the JVM's collectors count one more, or, with a
     * young generation larger than the bound, the bound's worth of garbage was made.
     */
    @Test
    void firstCollectionRunsACollectionOrMakesItsBound() {
        long before = Spare.collections();
        assertTrue(before >= 0, "the test JVM's collectors report counts");
        long made = Spare.firstCollection();
        assertTrue(Spare.collections() > before || made >= 64L << 20,
                "no collection after " + made + " bytes of garbage");
    }
}
