package mpi;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.IntBuffer;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.ftmpi.LocalJob;
import org.ftmpi.runtime.LocalJobRuntime;
import org.ftmpi.testutil.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The engine's pool of completed requests (Engine.recycle): an operation released by a wait,
 * a test or a blocking call is reused by a later one, never while an {@link Request} that the
 * application holds still refers to it, and a reused operation reports its own status and
 * failures. {@code Request.op} is the engine operation behind an API request.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RequestPoolTest {
    private static final int ROUNDS = 50, WINDOW = 8;

    private static Set<org.ftmpi.p2p.Request> identitySet() {
        return Collections.newSetFromMap(new IdentityHashMap<>());
    }

    /** One window of receives and sends between ranks 0 and 1 on {@code tag}; the values are checked. */
    private static void window(Intracomm world, int tag, int round, Set<org.ftmpi.p2p.Request> live,
                               Set<org.ftmpi.p2p.Request> seen, int[] reused) throws MPIException {
        int peer = 1 - world.getRank();
        IntBuffer[] in = new IntBuffer[WINDOW];
        IntBuffer[] out = new IntBuffer[WINDOW];
        Request[] rs = new Request[2 * WINDOW];
        Set<org.ftmpi.p2p.Request> mine = identitySet();
        for (int i = 0; i < WINDOW; i++) {
            in[i] = MPI.newIntBuffer(1);
            rs[i] = world.iRecv(in[i], 1, MPI.INT, peer, tag);
        }
        for (int i = 0; i < WINDOW; i++) {
            out[i] = MPI.newIntBuffer(1).put(0, round * 1000 + i);
            rs[WINDOW + i] = world.iSend(out[i], 1, MPI.INT, peer, tag);
        }
        for (Request r : rs) {
            org.ftmpi.p2p.Request o = r.op;
            assertNotNull(o);
            assertFalse(live.contains(o), "an operation still held by a live request was handed out again");
            assertTrue(mine.add(o), "two requests of one window share an operation");
            if (!seen.add(o)) reused[0]++;
        }
        Status[] st = Request.waitAllStatus(rs);
        for (int i = 0; i < WINDOW; i++) {
            assertEquals(round * 1000 + i, in[i].get(0), "message " + i + " of round " + round);
            assertEquals(peer, st[i].getSource());
            assertEquals(tag, st[i].getTag());
            assertEquals(1, st[i].getCount(MPI.INT));
            assertFalse(st[i].isCancelled());
            assertEquals(MPI.SUCCESS, st[i].getError());
        }
    }

    @Test
    void releasedOperationsAreReusedButNeverWhileARequestHoldsThem() throws Exception {
        LocalJob.run(2, world -> {
            int peer = 1 - world.getRank();
            // Pending for the whole test: its operation must never be handed out again.
            IntBuffer late = MPI.newIntBuffer(1);
            Request pending = world.iRecv(late, 1, MPI.INT, peer, 99);
            Set<org.ftmpi.p2p.Request> live = identitySet();
            live.add(pending.op);
            Set<org.ftmpi.p2p.Request> seen = identitySet();
            int[] reused = {0};
            for (int round = 0; round < ROUNDS; round++) {
                window(world, 1, round, live, seen, reused);
                // blocking calls go through the pool too
                int[] v = {world.getRank() * 7 + round};
                int[] got = new int[1];
                Status s = world.sendRecv(v, 1, MPI.INT, peer, 2, got, 1, MPI.INT, peer, 2);
                assertEquals(peer * 7 + round, got[0]);
                assertEquals(2, s.getTag());
            }
            assertTrue(reused[0] > 0, "no operation was reused in " + ROUNDS + " windows");
            world.send(new int[] {42}, 1, MPI.INT, peer, 99);
            Status s = pending.waitStatus();
            assertEquals(42, late.get(0));
            assertEquals(99, s.getTag());
        });
    }

    @Test
    void threadsOfOneRankReuseOperationsWithoutMixingUpMessages() throws Exception {
        LocalJob.run(2, world -> {
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread[] threads = new Thread[2];
            for (int t = 0; t < threads.length; t++) {
                int tag = 100 + t;
                threads[t] = Thread.ofPlatform().name("rank-" + world.getRank() + "-thread-" + t).start(() -> {
                    try {
                        Set<org.ftmpi.p2p.Request> seen = identitySet();
                        int[] reused = {0};
                        for (int round = 0; round < ROUNDS; round++) window(world, tag, round, identitySet(), seen, reused);
                    } catch (Throwable e) {
                        failed.compareAndSet(null, e);
                    }
                });
            }
            for (Thread t : threads) t.join();
            if (failed.get() != null) throw new AssertionError("a thread failed", failed.get());
        });
    }

    @Test
    void aReusedOperationReportsItsOwnStatusAfterACancelAndATruncation() throws Exception {
        LocalJob.run(2, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int peer = 1 - world.getRank();
            Set<org.ftmpi.p2p.Request> seen = identitySet();
            int reused = 0;
            for (int round = 0; round < ROUNDS; round++) {
                // a receive that is cancelled, then released: its status says cancelled
                Request c = world.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, peer, 500 + round);
                if (!seen.add(c.op)) reused++;
                c.cancel();
                Status cs = c.waitStatus();
                assertTrue(cs.isCancelled());
                // a truncated receive completes with ERR_TRUNCATE (and stays out of the pool)
                IntBuffer small = MPI.newIntBuffer(1);
                IntBuffer two = MPI.newIntBuffer(2).put(0, round).put(1, -round);
                Request t = world.iRecv(small, 1, MPI.INT, peer, 3);
                Request ts = world.iSend(two, 2, MPI.INT, peer, 3);
                if (!seen.add(t.op)) reused++;
                if (!seen.add(ts.op)) reused++;
                ts.waitFor();
                MPIException e = assertThrows(MPIException.class, t::waitFor);
                assertEquals(MPI.ERR_TRUNCATE, e.getErrorClass(), e.getMessage());
                // the next operations, likely the cancelled one reused, report their own status
                IntBuffer in = MPI.newIntBuffer(1);
                Request r = world.iRecv(in, 1, MPI.INT, peer, 4);
                Request s = world.iSend(MPI.newIntBuffer(1).put(0, round + 1), 1, MPI.INT, peer, 4);
                if (!seen.add(r.op)) reused++;
                if (!seen.add(s.op)) reused++;
                Status ss = s.waitStatus();
                assertFalse(ss.isCancelled());
                Status rs = r.waitStatus();
                assertFalse(rs.isCancelled(), "a reused operation kept the cancel of its previous use");
                assertEquals(MPI.SUCCESS, rs.getError());
                assertEquals(peer, rs.getSource());
                assertEquals(4, rs.getTag());
                assertEquals(1, rs.getCount(MPI.INT));
                assertEquals(round + 1, in.get(0));
                assertTrue(r.isNull());
            }
            assertTrue(reused > 0, "no operation was reused in " + ROUNDS + " rounds");
        });
    }

    @Test
    void aFreedPendingReceiveStillCompletesAndIsNeverHandedOutAgain() throws Exception {
        LocalJob.run(2, world -> {
            int peer = 1 - world.getRank();
            if (world.getRank() == 0) {
                IntBuffer freedInto = MPI.newIntBuffer(1);
                Request f = world.iRecv(freedInto, 1, MPI.INT, 1, 9);
                org.ftmpi.p2p.Request fo = f.op;
                f.free();
                assertTrue(f.isNull());
                Set<org.ftmpi.p2p.Request> live = identitySet();
                live.add(fo);
                Set<org.ftmpi.p2p.Request> seen = identitySet();
                int[] reused = {0};
                for (int round = 0; round < ROUNDS; round++) window(world, 10, round, live, seen, reused);
                world.send(new int[1], 1, MPI.INT, 1, 11); // now send the freed receive's message
                Await.until("the freed receive completes", Duration.ofSeconds(30), () -> {
                    try { // keep calling into MPI: the freed operation progresses on any call
                        world.iProbe(1, 12);
                    } catch (MPIException e) {
                        throw new IllegalStateException(e);
                    }
                    return fo.isComplete();
                });
                assertEquals(77, freedInto.get(0));
                for (int round = 0; round < ROUNDS; round++) window(world, 13, round, live, seen, reused);
            } else {
                Set<org.ftmpi.p2p.Request> seen = identitySet();
                int[] reused = {0};
                for (int round = 0; round < ROUNDS; round++) window(world, 10, round, identitySet(), seen, reused);
                world.recv(new int[1], 1, MPI.INT, 0, 11);
                world.send(new int[] {77}, 1, MPI.INT, 0, 9);
                for (int round = 0; round < ROUNDS; round++) window(world, 13, round, identitySet(), seen, reused);
            }
        });
    }

    @Test
    void aFailureNoticeCompletesReusedOperationsWithTheFailure() throws Exception {
        AtomicReference<LocalJobRuntime> job = new AtomicReference<>();
        LocalJob.run(3, Map.of(), job::set, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int rank = world.getRank();
            if (rank == 2) return; // the "failed" rank stays silent
            int peer = 1 - rank;
            Set<org.ftmpi.p2p.Request> seen = identitySet();
            int[] reused = {0};
            for (int round = 0; round < ROUNDS; round++) window(world, 1, round, identitySet(), seen, reused);
            assertTrue(reused[0] > 0, "no operation was reused in " + ROUNDS + " windows");
            // operations on the failed rank, most of them from the pool
            Request[] toDead = new Request[WINDOW];
            for (int i = 0; i < WINDOW; i++) toDead[i] = world.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, 2, 5);
            Request ssend = world.isSend(MPI.newIntBuffer(1), 1, MPI.INT, 2, 6); // never matched
            int pooledOps = 0;
            for (Request r : toDead) if (seen.contains(r.op)) pooledOps++;
            assertTrue(pooledOps > 0, "none of the receives from rank 2 reused an operation");
            world.sendRecv(new int[1], 1, MPI.INT, peer, 7, new int[1], 1, MPI.INT, peer, 7); // both posted
            if (rank == 1) job.get().notifyFailed(2, "was killed by the test");
            for (Request r : toDead) {
                ProcFailedException e = assertThrows(ProcFailedException.class, r::waitFor);
                assertEquals(2, e.getFailedRank(), e.getMessage());
            }
            assertEquals(2, assertThrows(ProcFailedException.class, ssend::waitFor).getFailedRank());
            // the survivors go on, with the pool
            for (int round = 0; round < ROUNDS; round++) window(world, 8, round, identitySet(), seen, reused);
        });
    }
}
