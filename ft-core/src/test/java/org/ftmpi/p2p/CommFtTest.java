package org.ftmpi.p2p;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The kept agreements of a communicator: lookup, order, and which go when all slots are used. */
class CommFtTest {
    private static int[] kept(CommFt f) {
        return Arrays.stream(f.keptAgreements()).mapToInt(g -> g.k).toArray();
    }

    @Test
    void anInstanceIsMadeOnceAndFoundAgain() {
        CommFt f = new CommFt(4);
        Agreement a = f.agreement(64);
        assertSame(a, f.agreement(64));
        assertSame(a, f.agreementIfKept(64));
        assertNull(f.agreementIfKept(128));
    }

    @Test
    void instancesAreKeptInIncreasingOrderWhateverOrderTheyArriveIn() {
        CommFt f = new CommFt(4);
        for (int k : new int[] {192, 64, 320, 128, 256}) f.agreement(k);
        assertEquals(Arrays.toString(new int[] {64, 128, 192, 256, 320}), Arrays.toString(kept(f)));
    }

    @Test
    void theOldestGoesWhenAllSlotsAreUsed() {
        CommFt f = new CommFt(4);
        int n = CommFt.KEPT_AGREEMENTS;
        for (int i = 1; i <= n; i++) f.agreement(64 * i);
        Agreement second = f.agreementIfKept(128);
        f.agreement(64 * (n + 1));
        assertEquals(n, kept(f).length);
        assertNull(f.agreementIfKept(64), "the oldest instance went");
        assertSame(second, f.agreementIfKept(128));
        assertEquals(64 * (n + 1), kept(f)[n - 1]);
        // one between kept ones replaces the oldest and keeps the order
        f.agreement(64 * 5 + 1);
        assertNull(f.agreementIfKept(128));
        int[] k = kept(f);
        for (int i = 1; i < k.length; i++) assertEquals(true, k[i - 1] < k[i], Arrays.toString(k));
        assertSame(f.agreementIfKept(64 * 5 + 1), f.agreement(64 * 5 + 1));
    }

    @Test
    void anInstanceOlderThanEveryKeptOneIsNotKeptWhenAllSlotsAreUsed() {
        CommFt f = new CommFt(4);
        int n = CommFt.KEPT_AGREEMENTS;
        for (int i = 1; i <= n; i++) f.agreement(64 * (i + 1));
        int[] before = kept(f);
        Agreement old = f.agreement(64);
        assertEquals(64, old.k);
        assertNull(f.agreementIfKept(64));
        assertNotSame(old, f.agreement(64), "made afresh each time, as the sorted map pruned it at once");
        assertEquals(Arrays.toString(before), Arrays.toString(kept(f)));
    }
}
