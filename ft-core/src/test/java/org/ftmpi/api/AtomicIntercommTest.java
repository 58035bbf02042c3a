package org.ftmpi.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.IntBuffer;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import mpi.Intercomm;
import mpi.Intracomm;
import mpi.MPI;
import org.ftmpi.LocalJob;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Intercommunicator collectives and constructors give the same results under FT-MPI's ATOMIC
 * collective mode as under NONATOMIC (fault-free; failures: {@code FtModesSystemTest}). Before,
 * a dup or merge of an intercommunicator under {@code --coll-mode atomic} hung: the leaders'
 * exchange waited in an agreement of all members.
 */
class AtomicIntercommTest {
    /** Group A: even ranks of 5 (0, 2, 4); group B: odd ones (1, 3). */
    @ParameterizedTest
    @ValueSource(strings = {"atomic", "nonatomic"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void collectivesAndConstructorsGiveThePlainResults(String mode) throws Exception {
        LocalJob.run(5, Map.of("coll-mode", mode), world -> {
            int me = world.getRank();
            int colour = me % 2;
            Intracomm half = world.split(colour, me);
            Intercomm ic = world.createIntercomm(half, 0, 1 - colour, 7);
            int[] remote = colour == 0 ? new int[] {1, 3} : new int[] {0, 2, 4};
            int n = remote.length;
            boolean aRoot = colour == 0 && half.getRank() == 0;
            int root = colour == 1 ? 0 : aRoot ? MPI.ROOT : MPI.PROC_NULL; // group A's rank 0 is the root

            int[] v = {colour == 0 ? 42 : -1};
            ic.bcast(v, 1, MPI.INT, root);
            if (colour == 1) assertEquals(42, v[0]);

            int[] red = {-1};
            ic.reduce(new int[] {me}, red, 1, MPI.INT, MPI.SUM, root);
            if (aRoot) assertEquals(1 + 3, red[0]);

            int[] all = {-1};
            ic.allReduce(new int[] {me}, all, 1, MPI.INT, MPI.SUM);
            assertEquals(colour == 0 ? 4 : 6, all[0]); // each group gets the other's sum

            int[] ag = filled(n);
            ic.allGather(new int[] {me + 10}, 1, MPI.INT, ag, 1, MPI.INT);
            int[] expect = new int[n];
            for (int j = 0; j < n; j++) expect[j] = remote[j] + 10;
            assertArrayEquals(expect, ag);

            int[] out = new int[n], a2a = filled(n);
            for (int j = 0; j < n; j++) out[j] = 100 * me + remote[j];
            ic.allToAll(out, 1, MPI.INT, a2a, 1, MPI.INT);
            for (int j = 0; j < n; j++) expect[j] = 100 * remote[j] + me;
            assertArrayEquals(expect, a2a);

            int[] g = filled(2);
            ic.gather(new int[] {me}, 1, MPI.INT, g, 1, MPI.INT, root);
            if (aRoot) assertArrayEquals(new int[] {1, 3}, g);

            int[] sc = {-1};
            ic.scatter(new int[] {50, 51}, 1, MPI.INT, sc, 1, MPI.INT, root);
            if (colour == 1) assertEquals(50 + me / 2, sc[0]);

            ic.barrier();

            IntBuffer nb = MPI.newIntBuffer(1).put(0, -1);
            ic.iAllReduce(MPI.newIntBuffer(1).put(0, me), nb, 1, MPI.INT, MPI.SUM).waitFor();
            assertEquals(colour == 0 ? 4 : 6, nb.get(0));
            IntBuffer nbc = MPI.newIntBuffer(1).put(0, colour == 0 ? 7 : -1);
            ic.iBcast(nbc, 1, MPI.INT, root).waitFor();
            if (colour == 1) assertEquals(7, nbc.get(0));
            ic.iBarrier().waitFor();

            Intercomm id = (Intercomm) ic.iDup();
            id.getRequest().waitFor();
            Intercomm d = ic.dup();
            Intracomm m = d.merge(colour == 1);
            assertEquals(colour == 0 ? me / 2 : 3 + me / 2, m.getRank());
            int[] s = {me};
            m.allReduce(s, 1, MPI.INT, MPI.SUM);
            assertEquals(10, s[0]);
            int[] t = {-1};
            id.allReduce(new int[] {1}, t, 1, MPI.INT, MPI.SUM);
            assertEquals(n, t[0]);
        });
    }

    private static int[] filled(int n) {
        int[] a = new int[n];
        java.util.Arrays.fill(a, -1);
        return a;
    }
}
