package org.ftmpi.api;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import mpi.*;
import org.ftmpi.LocalJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Collectives called again and again on the same buffers, as a solver's loop does: the block
 * arrays a communicator keeps for a buffer (gather, scatter, all-gather, all-to-all and their
 * v forms) and the scratch a call keeps for the next (sendRecvReplace, scan, exScan) must
 * never carry one call's layout or data into the next, when the layout changes in place, the
 * block size changes, or another buffer comes in between.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CollectiveBufferReuseTest {

    private static final int SENTINEL = -777;

    @Test
    void gathervFollowsDisplacementsEditedInPlace() throws Exception {
        LocalJob.run(3, world -> {
            int rank = world.getRank(), n = world.getSize();
            int[] counts = new int[n], displs = new int[n];
            int[] recv = new int[4 * n + 4];
            for (int round = 0; round < 6; round++) {
                // the same counts/displs arrays, edited between calls; the same receive buffer
                for (int i = 0; i < n; i++) {
                    counts[i] = 1 + (round / 2) % 3; // kept for two rounds, while the blocks change places
                    displs[i] = ((i + round) % n) * 4;
                }
                int[] send = new int[counts[rank]];
                for (int k = 0; k < send.length; k++) send[k] = round * 100 + rank * 10 + k;
                Arrays.fill(recv, SENTINEL);
                world.gatherv(send, send.length, MPI.INT, recv, counts, displs, MPI.INT, 0);
                if (rank == 0) {
                    int[] expected = new int[recv.length];
                    Arrays.fill(expected, SENTINEL);
                    for (int i = 0; i < n; i++) {
                        for (int k = 0; k < counts[i]; k++) expected[displs[i] + k] = round * 100 + i * 10 + k;
                    }
                    assertArrayEquals(expected, recv, "round " + round);
                }
            }
        });
    }

    @Test
    void gatherAndScatterFollowTheBlockSizeOnOneBuffer() throws Exception {
        LocalJob.run(4, world -> {
            int rank = world.getRank(), n = world.getSize();
            double[] all = new double[3 * n];
            for (int round = 0; round < 6; round++) {
                int count = 1 + round % 3; // the same buffer with blocks of 1, 2, 3 elements
                double[] mine = new double[count];
                for (int k = 0; k < count; k++) mine[k] = round * 1000 + rank * 10 + k;
                Arrays.fill(all, SENTINEL);
                world.gather(mine, count, MPI.DOUBLE, all, count, MPI.DOUBLE, 1);
                if (rank == 1) {
                    for (int i = 0; i < n; i++) {
                        for (int k = 0; k < count; k++) assertEquals(round * 1000 + i * 10 + k, all[i * count + k], 0.0);
                    }
                    for (int j = count * n; j < all.length; j++) assertEquals(SENTINEL, all[j], 0.0, "past the blocks");
                    for (int j = 0; j < count * n; j++) all[j] = -all[j];
                }
                double[] back = new double[count];
                world.scatter(all, count, MPI.DOUBLE, back, count, MPI.DOUBLE, 1);
                for (int k = 0; k < count; k++) assertEquals(-(round * 1000 + rank * 10 + k), back[k], 0.0);
            }
        });
    }

    @Test
    void allToAllvAndAllGathervFollowCountsEditedInPlaceAndAlternatingBuffers() throws Exception {
        LocalJob.run(3, world -> {
            int rank = world.getRank(), n = world.getSize();
            int[] sc = new int[n], sd = new int[n], rc = new int[n], rd = new int[n];
            long[][] sends = {new long[3 * n], new long[3 * n]}, recvs = {new long[3 * n], new long[3 * n]};
            for (int round = 0; round < 8; round++) {
                long[] send = sends[round % 2], recv = recvs[(round / 2) % 2];
                // rank r sends (r + j + round) % 3 + 1 elements to rank j
                for (int j = 0, at = 0; j < n; j++) {
                    sc[j] = (rank + j + round) % 3 + 1;
                    sd[j] = at;
                    at += sc[j];
                }
                for (int j = 0, at = 0; j < n; j++) {
                    rc[j] = (j + rank + round) % 3 + 1;
                    rd[j] = at;
                    at += rc[j];
                }
                for (int j = 0; j < n; j++) {
                    for (int k = 0; k < sc[j]; k++) send[sd[j] + k] = round * 10_000L + rank * 100 + j * 10 + k;
                }
                Arrays.fill(recv, SENTINEL);
                world.allToAllv(send, sc, sd, MPI.LONG, recv, rc, rd, MPI.LONG);
                for (int j = 0; j < n; j++) {
                    for (int k = 0; k < rc[j]; k++) {
                        assertEquals(round * 10_000L + j * 100 + rank * 10 + k, recv[rd[j] + k], "round " + round);
                    }
                }
                // all-gather of a block whose size depends on the round and the rank
                int[] gc = new int[n], gd = new int[n];
                for (int j = 0, at = 0; j < n; j++) {
                    gc[j] = (j + round) % 2 + 1;
                    gd[j] = at;
                    at += gc[j];
                }
                long[] mine = new long[gc[rank]];
                Arrays.fill(mine, round * 10L + rank);
                Arrays.fill(recv, SENTINEL);
                world.allGatherv(mine, mine.length, MPI.LONG, recv, gc, gd, MPI.LONG);
                for (int j = 0; j < n; j++) {
                    for (int k = 0; k < gc[j]; k++) assertEquals(round * 10L + j, recv[gd[j] + k], "round " + round);
                }
            }
        });
    }

    @Test
    void sendRecvReplaceScanAndExScanKeepNothingOfTheCallBefore() throws Exception {
        LocalJob.run(3, world -> {
            int rank = world.getRank(), n = world.getSize();
            int right = (rank + 1) % n, left = (rank + n - 1) % n;
            // sizes below and above the native scratch threshold (32 KiB), and back
            for (int count : new int[] {1, 1000, 9000, 3, 9000, 1000}) {
                int[] buf = new int[count];
                for (int k = 0; k < count; k++) buf[k] = rank * 1_000_000 + count + k;
                Status st = world.sendRecvReplace(buf, count, MPI.INT, right, 3, left, 3);
                assertEquals(count, st.getCount(MPI.INT));
                for (int k = 0; k < count; k++) assertEquals(left * 1_000_000 + count + k, buf[k], "count " + count);
            }
            for (int round = 0; round < 5; round++) {
                int count = 1 + round;
                long[] mine = new long[count], inclusive = new long[count], exclusive = new long[count];
                for (int k = 0; k < count; k++) mine[k] = (rank + 1) * (round + 1) + k;
                world.scan(mine, inclusive, count, MPI.LONG, MPI.SUM);
                world.exScan(mine, exclusive, count, MPI.LONG, MPI.SUM);
                for (int k = 0; k < count; k++) {
                    long before = 0;
                    for (int r = 0; r < rank; r++) before += (r + 1) * (round + 1) + k;
                    assertEquals(before + mine[k], inclusive[k], "scan, round " + round);
                    if (rank > 0) assertEquals(before, exclusive[k], "exScan, round " + round);
                }
            }
        });
    }

    @Test
    void gathervWithoutDisplacementsIsAnArgumentError() throws Exception {
        LocalJob.run(2, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int[] one = {world.getRank()};
            if (world.getRank() == 0) {
                MPIException e = assertThrows(MPIException.class,
                        () -> world.gatherv(one, 1, MPI.INT, new int[2], new int[] {1, 1}, null, MPI.INT, 0));
                assertEquals(MPI.ERR_ARG, e.getErrorClass());
                assertTrue(e.getMessage().contains("displs"), e.getMessage());
                // the other rank's block is still on its way: take it, so that nothing is left over
                world.recv(new int[1], 1, MPI.INT, 1, 99);
            } else {
                world.send(one, 1, MPI.INT, 0, 99);
            }
            world.barrier();
        });
    }
}
