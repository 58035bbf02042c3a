package org.ftmpi.ft.detect;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.BitSet;
import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

class RingPlanTest {
    private static String[] oneHost(int n) {
        String[] h = new String[n];
        Arrays.fill(h, "a");
        return h;
    }

    @Test
    void theRingIsAPermutationFixedByTheJobId() {
        RingPlan a = RingPlan.of(42, oneHost(100));
        RingPlan b = RingPlan.of(42, oneHost(100));
        RingPlan c = RingPlan.of(43, oneHost(100));
        Set<Integer> seen = new HashSet<>();
        boolean differs = false;
        boolean shuffled = false;
        for (int p = 0; p < 100; p++) {
            seen.add(a.rankAt(p));
            assertEquals(a.rankAt(p), b.rankAt(p));
            assertEquals(p, a.positionOf(a.rankAt(p)));
            differs |= a.rankAt(p) != c.rankAt(p);
            shuffled |= a.rankAt(p) != p;
        }
        assertEquals(100, seen.size());
        assertTrue(differs, "another job id gives another ring");
        assertTrue(shuffled, "the ring is not the identity");
    }

    @Test
    void ranksOfOneHostAreNeverNeighboursWhenNoHostHasMoreThanHalf() {
        // 4 hosts, block placement (ranks 0-7 on h0, ...): the worst case for an unshuffled ring
        String[] hosts = new String[32];
        for (int r = 0; r < 32; r++) hosts[r] = "h" + r / 8;
        for (long job = 1; job < 50; job++) {
            RingPlan plan = RingPlan.of(job, hosts);
            for (int p = 0; p < 32; p++) {
                assertNotEquals(hosts[plan.rankAt(p)], hosts[plan.rankAt(p + 1)],
                        "job " + job + ": positions " + p + " and " + (p + 1) + " share a host");
            }
        }
    }

    @Test
    void predecessorAndSuccessorSkipGoneRanksAndTheRingRecloses() {
        RingPlan plan = RingPlan.of(7, oneHost(8));
        int r = plan.rankAt(3);
        BitSet gone = new BitSet();
        assertEquals(plan.rankAt(2), plan.predecessor(r, gone));
        assertEquals(plan.rankAt(4), plan.successor(r, gone));
        gone.set(plan.rankAt(2));
        gone.set(plan.rankAt(1));
        assertEquals(plan.rankAt(0), plan.predecessor(r, gone), "adopts the predecessor's predecessor");
        assertEquals(r, plan.successor(plan.rankAt(0), gone), "and that one now beats to r");
        for (int p = 0; p < 8; p++) if (p != 3) gone.set(plan.rankAt(p));
        assertEquals(-1, plan.predecessor(r, gone));
        assertEquals(-1, plan.successor(r, gone));
    }

    @Test
    void fingersArePowersOfTwoAlongTheLiveRing() {
        RingPlan plan = RingPlan.of(9, oneHost(16));
        int r = plan.rankAt(0);
        assertArrayEquals(new int[] {plan.rankAt(1), plan.rankAt(2), plan.rankAt(4), plan.rankAt(8)},
                plan.fingers(r, new BitSet()));
        BitSet gone = new BitSet();
        gone.set(plan.rankAt(1));
        assertArrayEquals(new int[] {plan.rankAt(2), plan.rankAt(3), plan.rankAt(5), plan.rankAt(9)},
                plan.fingers(r, gone));
        assertEquals(0, RingPlan.of(1, oneHost(1)).fingers(0, new BitSet()).length);
    }
}
