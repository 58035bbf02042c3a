package mpi;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.ftmpi.LocalJob;
import org.ftmpi.p2p.Engine;
import org.ftmpi.runtime.LocalJobRuntime;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * After an FT-MPI recovery, COMM_WORLD of the new generation runs on the fault-free paths again
 * (a blocking eager send is written at once and returns the engine's shared completed request),
 * while everything the recovery made invalid stays so: a communicator made before it fails with
 * {@code ERR_COMM} in the engine too (sends, receives, probes), and a revoke or a second failure
 * turns the checks back on.
 * Ranks are threads ({@link LocalJob}); the failure is {@link LocalJobRuntime#kill}.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RecoveredFastPathTest {

    private interface Survivor {
        void run(Intracomm world, Intracomm stale, LocalJobRuntime job) throws Exception;
    }

    /**
     * Three ranks in {@code commMode} with recovery mode AUTO: rank 2 dies during an
     * {@code allReduce}; the survivors' failing call recovers COMM_WORLD; then {@code body}.
     */
    private static void afterRecovery(String commMode, Survivor body) throws Exception {
        AtomicReference<LocalJobRuntime> job = new AtomicReference<>();
        CyclicBarrier entered = new CyclicBarrier(3);
        LocalJob.run(3, Map.of("comm-mode", commMode, "recovery-mode", "auto"), job::set, w -> {
            w.setErrhandler(MPI.ERRORS_RETURN);
            Intracomm stale = w.dup();
            int[] one = {1}, sum = new int[1];
            w.allReduce(one, sum, 1, MPI.INT, MPI.SUM);
            entered.await(30, TimeUnit.SECONDS);
            if (w.getRank() == 2) {
                job.get().kill(2, "was killed by the test");
                return;
            }
            assertThrows(ProcFailedException.class, () -> {
                while (true) w.allReduce(one, sum, 1, MPI.INT, MPI.SUM); // until the death is known
            });
            w.allReduce(one, sum, 1, MPI.INT, MPI.SUM); // on the recovered COMM_WORLD
            assertEquals(2, sum[0]);
            body.run(w, stale, job.get());
        });
    }

    /** A blocking eager send of 4 bytes through the engine, as {@code Comm.send} makes it. */
    private static org.ftmpi.p2p.Request sendInt(Comm c, int dest, int tag, MemorySegment value) {
        return c.engine.sendAndForget(c.context, c.epoch, c.rank, dest, c.peers[dest], tag, value, 0, 4,
                org.ftmpi.p2p.Request.STANDARD);
    }

    @ParameterizedTest
    @ValueSource(strings = {"shrink", "blank"})
    void theRecoveredCommWorldSendsOnTheFastPathAndAStaleCommunicatorStillFails(String commMode) throws Exception {
        afterRecovery(commMode, (w, stale, job) -> {
            int me = w.getRank(), peer = 1 - me;
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment v = arena.allocate(4);
                if (me == 0) {
                    v.set(ValueLayout.JAVA_INT, 0, 41);
                    org.ftmpi.p2p.Request a = sendInt(w, peer, 5, v);
                    v.set(ValueLayout.JAVA_INT, 0, 42);
                    org.ftmpi.p2p.Request b = sendInt(w, peer, 5, v);
                    assertTrue(a.isComplete() && b.isComplete(), "eager sends complete when written");
                    assertSame(a, b, "after the recovery a blocking eager send is written at once again,"
                            + " with no operation of its own");
                } else {
                    int[] got = new int[1];
                    w.recv(got, 1, MPI.INT, peer, 5);
                    assertEquals(41, got[0]);
                    w.recv(got, 1, MPI.INT, peer, 5);
                    assertEquals(42, got[0]);
                }
                // The communicator made before the failure: refused by the API and by the engine.
                MPIException e = assertThrows(MPIException.class, () -> stale.send(new int[1], 1, MPI.INT, peer, 6));
                assertEquals(MPI.ERR_COMM, e.getErrorClass(), e.getMessage());
                org.ftmpi.p2p.Request r = stale.engine.sendAndForget(stale.context, stale.epoch, stale.rank, peer,
                        w.peers[peer], 6, v, 0, 4, org.ftmpi.p2p.Request.STANDARD);
                assertTrue(r.isComplete());
                assertEquals(MPI.ERR_COMM, r.errorClass(), "a stale communicator's send in the engine");
                org.ftmpi.p2p.Request q = stale.engine.receive(stale.context, stale.epoch, peer, w.peers[peer], 6,
                        v, 0, 4);
                assertTrue(q.isComplete());
                assertEquals(MPI.ERR_COMM, q.errorClass(), "a stale communicator's receive in the engine");
            }
            w.barrier();
        });
    }

    @ParameterizedTest
    @ValueSource(strings = {"shrink", "blank"})
    void aProbeFindsMessagesOnTheRecoveredCommWorldAndFailsOnAStaleCommunicator(String commMode) throws Exception {
        afterRecovery(commMode, (w, stale, job) -> {
            int me = w.getRank(), peer = 1 - me;
            MPIException e = assertThrows(MPIException.class, () -> stale.iProbe(peer, 9));
            assertEquals(MPI.ERR_COMM, e.getErrorClass(), e.getMessage());
            org.ftmpi.p2p.P2pException p = assertThrows(org.ftmpi.p2p.P2pException.class,
                    () -> stale.engine.probe(stale.context, stale.epoch, peer, w.peers[peer], 9, false));
            assertEquals(MPI.ERR_COMM, p.errorClass(), "a stale communicator's probe in the engine");
            if (me == 0) {
                w.send(new int[] {7}, 1, MPI.INT, peer, 9);
            } else {
                Status st = w.probe(peer, 9);
                assertEquals(peer, st.getSource());
                int[] got = new int[1];
                w.recv(got, 1, MPI.INT, peer, 9);
                assertEquals(7, got[0]);
            }
            w.barrier();
        });
    }

    @ParameterizedTest
    @ValueSource(strings = {"shrink", "blank"})
    void aRevokeAfterTheRecoveryStillStopsBlockingSends(String commMode) throws Exception {
        afterRecovery(commMode, (w, stale, job) -> {
            w.barrier();
            if (w.getRank() == 0) w.revoke();
            while (!w.isRevoked()) Thread.onSpinWait();
            MPIException e = assertThrows(MPIException.class, () -> w.send(new int[1], 1, MPI.INT, 1 - w.getRank(), 7));
            assertEquals(MPI.ERR_REVOKED, e.getErrorClass(), e.getMessage());
        });
    }

    @ParameterizedTest
    @ValueSource(strings = {"shrink", "blank"})
    void aSecondFailureAfterTheRecoveryFailsSendsToTheDeadRankAgain(String commMode) throws Exception {
        CyclicBarrier both = new CyclicBarrier(2);
        afterRecovery(commMode, (w, stale, job) -> {
            w.barrier();
            both.await(30, TimeUnit.SECONDS); // nobody is still inside the barrier when rank 1 dies
            if (w.getRank() == 1) {
                job.kill(1, "was killed by the test");
                return;
            }
            Engine engine = w.engine;
            while (!engine.isFailed(w.peers[1])) Thread.onSpinWait();
            assertThrows(ProcFailedException.class, () -> w.send(new int[1], 1, MPI.INT, 1, 8));
        });
    }
}
