package org.ftmpi.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import mpi.Group;
import mpi.Intracomm;
import mpi.MPI;
import org.ftmpi.LocalJob;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code createGroup} is collective over the group's members only, also under FT-MPI's ATOMIC
 * collective mode (failures: {@code FtModesSystemTest}). Before, under {@code --coll-mode atomic}
 * it hung: its agreement waited for every member of the parent communicator, and the members of
 * the group numbered the parent's later agreements differently from the others.
 */
class AtomicCreateGroupTest {
    /** Evens and odds of 7 build their communicators at the same time; then the parent is used again. */
    @ParameterizedTest
    @ValueSource(strings = {"atomic", "nonatomic"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void createGroupAgreesOverTheGroupOnly(String mode) throws Exception {
        LocalJob.run(7, Map.of("coll-mode", mode), world -> {
            int me = world.getRank();
            Group all = world.getGroup();
            Group evens = all.incl(new int[] {0, 2, 4, 6});
            Group odds = all.incl(new int[] {5, 3, 1});
            int[] expect = me % 2 == 0 ? new int[] {0, 2, 4, 6} : new int[] {5, 3, 1};
            for (int round = 0; round < 3; round++) { // same group and tag again: a distinct communicator
                Intracomm c = world.createGroup(me % 2 == 0 ? evens : odds, me % 2 == 0 ? 0 : 9);
                assertEquals(expect.length, c.getSize());
                int[] members = new int[c.getSize()];
                c.allGather(new int[] {me}, 1, MPI.INT, members, 1, MPI.INT);
                assertArrayEquals(expect, members);
                // Only the evens take part in this one; the parent's collectives stay in step.
                if (me % 2 == 0) {
                    Intracomm e = world.createGroup(evens, 5);
                    int[] s = {-1};
                    e.allReduce(new int[] {me}, s, 1, MPI.INT, MPI.SUM);
                    assertEquals(12, s[0]);
                    e.free();
                } else {
                    assertNull(world.createGroup(evens, 5));
                }
                int[] sum = {-1};
                world.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
                assertEquals(21, sum[0]);
                c.free();
            }
        });
    }
}
