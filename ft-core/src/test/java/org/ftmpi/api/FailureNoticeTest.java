package org.ftmpi.api;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import mpi.*;
import org.ftmpi.LocalJob;
import org.ftmpi.runtime.LocalJobRuntime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Runtime notices: a process-failure notice completes what depends on the failed rank with
 * {@link ProcFailedException} while the survivors keep communicating; an abort notice completes
 * every pending request with an error.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FailureNoticeTest {
    private static final int READY = 50;

    private interface Call {
        void run() throws MPIException;
    }

    private static void assertProcFailed(int clazz, Call call) {
        ProcFailedException e = assertThrows(ProcFailedException.class, call::run);
        assertEquals(clazz, e.getErrorClass(), e.getMessage());
        assertEquals(2, e.getFailedRank(), e.getMessage());
    }

    /** The survivors exchange eager and rendezvous messages, and a synchronous one. */
    private static void survivorsTalk(Intracomm world) throws MPIException {
        int peer = 1 - world.getRank();
        int[] small = {world.getRank()};
        int[] got = new int[1];
        world.sendRecv(small, 1, MPI.INT, peer, 60, got, 1, MPI.INT, peer, 60);
        assertEquals(peer, got[0]);
        double[] big = new double[80_000];
        Arrays.fill(big, world.getRank());
        world.sendRecvReplace(big, big.length, MPI.DOUBLE, peer, 61, peer, 61);
        assertEquals(peer, big[79_999]);
        if (world.getRank() == 0) {
            world.sSend(small, 1, MPI.INT, 1, 62);
        } else {
            world.recv(got, 1, MPI.INT, MPI.ANY_SOURCE, 62);
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void failureNoticeCompletesWhatDependsOnTheFailedRank(boolean ulfm) throws Exception {
        int clazz = ulfm ? MPI.ERR_PROC_FAILED : MPI.ERR_OTHER;
        AtomicReference<LocalJobRuntime> job = new AtomicReference<>();
        LocalJob.run(3, Map.of("ulfm-error-classes", String.valueOf(ulfm)), job::set, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            switch (world.getRank()) {
                case 0 -> {
                    ByteBuffer big = MPI.newByteBuffer(1_000_000);
                    Request send = world.iSend(big, 1_000_000, MPI.BYTE, 2, 1); // rendezvous; never received
                    Request recv = world.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, 2, 2);
                    world.send(new int[1], 1, MPI.INT, 1, READY);
                    // Blocked in a receive from rank 2 until the notice arrives (or failing at once
                    // if it came first).
                    assertProcFailed(clazz, () -> world.recv(new int[1], 1, MPI.INT, 2, 3));
                    assertProcFailed(clazz, recv::waitFor);
                    assertProcFailed(clazz, send::waitFor);
                    // New operations with the failed rank fail at once.
                    assertProcFailed(clazz, () -> world.send(new int[1], 1, MPI.INT, 2, 4));
                    assertProcFailed(clazz, () -> world.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, 2, 4).waitFor());
                    survivorsTalk(world);
                }
                case 1 -> {
                    Request pending = world.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, 2, 5);
                    Request ssend = world.isSend(MPI.newIntBuffer(1), 1, MPI.INT, 2, 6); // never matched
                    world.recv(new int[1], 1, MPI.INT, 0, READY);
                    job.get().notifyFailed(2, "was killed by the test");
                    assertProcFailed(clazz, pending::waitFor);
                    assertProcFailed(clazz, ssend::waitFor);
                    survivorsTalk(world);
                }
                default -> {
                    // The "failed" rank stays silent; it is not told about its own failure.
                }
            }
        });
    }

    @Test
    void abortNoticeCompletesEveryPendingRequestWithAnError() throws Exception {
        AtomicReference<LocalJobRuntime> job = new AtomicReference<>();
        LocalJob.run(3, Map.of(), job::set, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int rank = world.getRank();
            Request[] pending;
            if (rank == 0) {
                pending = new Request[] {
                    world.iSend(MPI.newByteBuffer(500_000), 500_000, MPI.BYTE, 1, 1), // RTS, never matched
                    world.isSend(MPI.newIntBuffer(1), 1, MPI.INT, 2, 2),              // awaits a SYNC_ACK
                    world.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, 1, 3),
                    world.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, MPI.ANY_SOURCE, MPI.ANY_TAG),
                };
            } else if (rank == 1) {
                pending = new Request[] {
                    world.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, MPI.ANY_SOURCE, 9),
                    world.iSend(MPI.newByteBuffer(300_000), 300_000, MPI.BYTE, 2, 10),
                };
            } else {
                pending = new Request[] {world.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, 0, 11)};
            }
            if (rank != 2) {
                world.send(new int[1], 1, MPI.INT, 2, READY);
            } else {
                world.recv(new int[1], 1, MPI.INT, 0, READY);
                world.recv(new int[1], 1, MPI.INT, 1, READY);
                job.get().abortAll(1, "aborted by the test");
            }
            for (Request r : pending) {
                MPIException e = assertThrows(MPIException.class, r::waitFor);
                assertEquals(MPI.ERR_OTHER, e.getErrorClass(), e.getMessage());
                // Either cause may come first: the abort notice, or a peer that already ended after
                // the abort closing its connections. Both must complete the request with an error.
                assertTrue(e.getMessage().contains("aborted by the test")
                        || e.getMessage().contains("process failure"), e.getMessage());
            }
            // And nothing new can start.
            MPIException e = assertThrows(MPIException.class,
                    () -> world.recv(new int[1], 1, MPI.INT, (rank + 1) % 3, 12));
            assertEquals(MPI.ERR_OTHER, e.getErrorClass());
            assertThrows(MPIException.class, () -> world.send(new int[1], 1, MPI.INT, (rank + 1) % 3, 12));
        });
    }
}
