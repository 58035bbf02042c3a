package org.ftmpi.ckpt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import org.ftmpi.LocalJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The library's diskless checkpoints with threads as ranks: save and restore bit for bit, under a
 * new layout, with lost processes (the restore runs over a communicator without them, as after a
 * SHRINK), with a replacement that holds nothing (as after a REBUILD), and more losses than the
 * redundancy covers. Killed processes: FtExamplesSystemTest (module examples).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DisklessCheckpointTest {
    private static final int N = 5, LENGTH = 23, VECTORS = 2;

    /** kind: "buddy", or "rs:M". */
    private static DisklessCheckpoint make(String kind) throws MPIException {
        return kind.equals("buddy") ? DisklessCheckpoint.buddy(VECTORS, LENGTH, 2)
                : DisklessCheckpoint.reedSolomon(VECTORS, LENGTH, 2, Integer.parseInt(kind.substring(3)));
    }

    /** Element i of vector v of version {@code version}: odd bit patterns included (NaN payloads, -0.0). */
    private static double value(int version, int v, int i) {
        if (i == 3) return -0.0;
        if (i == 7) return Double.longBitsToDouble(0x7ff8_0000_dead_beefL + version + v);
        return version * 1000 + v * 100 + i + 0.25;
    }

    /** Uneven blocks: rank r holds [start(r), start(r + 1)). */
    private static int start(int r, int n) {
        return r * LENGTH / n + (r > 0 ? 1 : 0) - (r == n ? 1 : 0);
    }

    private static void save(DisklessCheckpoint c, Intracomm comm, int version) throws MPIException {
        int r = comm.getRank(), n = comm.getSize();
        int lo = start(r, n), len = start(r + 1, n) - lo;
        double[][] blocks = new double[VECTORS][len];
        for (int v = 0; v < VECTORS; v++) for (int i = 0; i < len; i++) blocks[v][i] = value(version, v, lo + i);
        c.save(comm, blocks, lo, len, new double[] {version, -version});
    }

    private static void assertVersion(int version, DisklessCheckpoint.State s) {
        for (int v = 0; v < VECTORS; v++) {
            long[] want = new long[LENGTH], got = new long[LENGTH];
            for (int i = 0; i < LENGTH; i++) {
                want[i] = Double.doubleToRawLongBits(value(version, v, i));
                got[i] = Double.doubleToRawLongBits(s.vectors()[v][i]);
            }
            assertArrayEquals(want, got, "vector " + v);
        }
        assertArrayEquals(new double[] {version, -version}, s.scalars());
    }

    /** The survivors' communicator: every rank but {@code lost} (null at the lost ones). */
    private static Intracomm without(Intracomm world, int... lost) throws MPIException {
        boolean gone = false;
        for (int l : lost) gone |= l == world.getRank();
        return world.split(gone ? MPI.UNDEFINED : 0, world.getRank());
    }

    @ParameterizedTest
    @ValueSource(strings = {"buddy", "rs:1", "rs:2"})
    void restoreGivesTheLastCommittedVersionBitForBit(String kind) throws Exception {
        LocalJob.run(N, world -> {
            DisklessCheckpoint c = make(kind);
            assertNull(c.restore(world), "nothing saved yet");
            save(c, world, 1);
            save(c, world, 2);
            assertVersion(2, c.restore(world));
            assertTrue(c.mpiCalls() > 0);
        });
    }

    @ParameterizedTest
    @ValueSource(strings = {"buddy", "rs:1", "rs:2"})
    void survivorsRebuildWhatOneLostProcessHeld(String kind) throws Exception {
        LocalJob.run(N, world -> {
            DisklessCheckpoint c = make(kind);
            save(c, world, 1);
            save(c, world, 2);
            Intracomm survivors = without(world, 2);
            if (survivors == null) return;
            assertVersion(2, c.restore(survivors));
            save(c, survivors, 3); // and on, under the new layout (4 ranks)
            assertVersion(3, c.restore(survivors));
        });
    }

    @Test
    void twoAdjacentLossesAreRebuiltWithTwoParityShards() throws Exception {
        LocalJob.run(N, world -> {
            DisklessCheckpoint c = make("rs:2");
            save(c, world, 4);
            Intracomm survivors = without(world, 1, 2);
            if (survivors != null) assertVersion(4, c.restore(survivors));
        });
    }

    @ParameterizedTest
    @ValueSource(strings = {"buddy", "rs:1"})
    void moreLossesThanTheRedundancyCoversRaiseAtEverySurvivor(String kind) throws Exception {
        LocalJob.run(N, world -> {
            DisklessCheckpoint c = make(kind);
            save(c, world, 1);
            Intracomm survivors = without(world, 1, 2); // a rank and its buddy (the next rank)
            if (survivors == null) return;
            CheckpointException e = assertThrows(CheckpointException.class, () -> c.restore(survivors));
            assertEquals(MPI.ERR_OTHER, e.getErrorClass());
            assertTrue(e.getMessage().startsWith("the checkpoint cannot be rebuilt: "), e.getMessage());
        });
    }

    @Test
    void aReplacementThatHoldsNothingGetsTheStateBack() throws Exception {
        LocalJob.run(N, world -> {
            DisklessCheckpoint c = make("rs:1");
            save(c, world, 1);
            save(c, world, 2);
            // rank 3 is replaced (REBUILD): the new process has a checkpoint object that holds nothing
            DisklessCheckpoint mine = world.getRank() == 3 ? make("rs:1") : c;
            assertVersion(2, mine.restore(world));
            save(mine, world, 3);
            assertVersion(3, mine.restore(world));
        });
    }

    @Test
    void badArgumentsRaiseErrArgNamingTheArgument() throws Exception {
        assertEquals(MPI.ERR_ARG, assertThrows(CheckpointException.class,
                () -> DisklessCheckpoint.reedSolomon(1, 10, 0, 0)).getErrorClass());
        assertTrue(assertThrows(CheckpointException.class, () -> DisklessCheckpoint.buddy(0, 10, 0))
                .getMessage().startsWith("vectors:"));
        assertTrue(assertThrows(CheckpointException.class, () -> DisklessCheckpoint.buddy(1, -1, 0))
                .getMessage().startsWith("length:"));
        LocalJob.run(1, world -> {
            DisklessCheckpoint c = DisklessCheckpoint.buddy(2, 4, 1);
            double[] four = new double[4];
            String m = assertThrows(CheckpointException.class,
                    () -> c.save(world, new double[][] {four}, 0, 4, new double[1])).getMessage();
            assertTrue(m.contains("blocks must hold 2 arrays"), m);
            m = assertThrows(CheckpointException.class,
                    () -> c.save(world, new double[][] {four, four}, 2, 3, new double[1])).getMessage();
            assertTrue(m.contains("lo 2 and len 3"), m);
            m = assertThrows(CheckpointException.class,
                    () -> c.save(world, new double[][] {four, new double[2]}, 0, 4, new double[1])).getMessage();
            assertTrue(m.contains("blocks[1] has 2 elements"), m);
            m = assertThrows(CheckpointException.class,
                    () -> c.save(world, new double[][] {four, four}, 0, 4, new double[3])).getMessage();
            assertTrue(m.contains("scalars must hold 1 values"), m);
            assertNull(c.restore(world));
        });
    }
}
