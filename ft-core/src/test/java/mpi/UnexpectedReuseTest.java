package mpi;

import static org.junit.jupiter.api.Assertions.*;

import java.util.concurrent.TimeUnit;
import org.ftmpi.LocalJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Messages that arrive before their receive is posted are copied into entries and regions the
 * engine reuses once a receive has taken them: every message is still delivered whole and
 * in order, whatever mix of sizes (kept ones, zero bytes, one larger than any kept region),
 * probes, matched probes and receives takes them, round after round.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UnexpectedReuseTest {
    private static final int ROUNDS = 40;
    private static final int[] SIZES = {8, 8, 1024, 0, 16 * 1024 + 1, 3000, 8, 1024};

    private static byte[] content(int round, int i, int size) {
        byte[] b = new byte[size];
        for (int k = 0; k < size; k++) b[k] = (byte) (round * 31 + i * 7 + k);
        return b;
    }

    @Test
    void unexpectedMessagesStayIntactWhenTheirEntriesAndRegionsAreReused() throws Exception {
        LocalJob.run(2, world -> {
            int rank = world.getRank();
            for (int round = 0; round < ROUNDS; round++) {
                if (rank == 0) {
                    for (int i = 0; i < SIZES.length; i++) {
                        byte[] b = content(round, i, SIZES[i]);
                        world.send(b, b.length, MPI.BYTE, 1, i);
                    }
                    world.barrier();
                } else {
                    world.barrier(); // the sends above are (almost always) there before the receives below
                    for (int i = 0; i < SIZES.length; i++) {
                        byte[] got = new byte[SIZES[i] + 1];
                        got[SIZES[i]] = 99;
                        Status s;
                        if (i % 3 == 1) {
                            Message m = new Message();
                            Status ps = m.mProbe(0, i, world);
                            assertEquals(SIZES[i], ps.getCount(MPI.BYTE));
                            s = m.mRecv(got, SIZES[i], MPI.BYTE);
                        } else {
                            if (i % 3 == 2) {
                                Status ps = world.probe(0, i);
                                assertEquals(SIZES[i], ps.getCount(MPI.BYTE));
                            }
                            s = world.recv(got, got.length, MPI.BYTE, 0, i);
                        }
                        assertEquals(SIZES[i], s.getCount(MPI.BYTE), "round " + round + " message " + i);
                        assertEquals(i, s.getTag());
                        byte[] want = content(round, i, SIZES[i]);
                        for (int k = 0; k < SIZES[i]; k++) {
                            if (got[k] != want[k]) fail("round " + round + " message " + i + ": byte " + k + " differs");
                        }
                        assertEquals(99, got[SIZES[i]], "written beyond the message");
                    }
                }
            }
        });
    }
}
