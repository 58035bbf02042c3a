package org.ftmpi.p2p;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.ftmpi.runtime.LocalJobRuntime;
import org.ftmpi.testutil.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Under FT-MPI recovery a survivor passes a failure it learned of on to the other processes
 * (Engine.passOn), so that they do not each wait for their own notice: here only rank 0's
 * engine is told that rank 2 failed, and rank 1 learns of it from rank 0, with the notice's
 * cause. Under recovery-mode ignore (ULFM semantics) nothing is passed on.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FailurePassOnTest {

    /** Starts the job's engines (also used by other engine tests). */
    static Engine[] start(LocalJobRuntime job) throws Exception {
        int n = job.size();
        @SuppressWarnings("unchecked")
        CompletableFuture<Engine>[] f = new CompletableFuture[n];
        // a thread per engine: each waits in the endpoint exchange for the others
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(n);
        for (int r = 0; r < n; r++) {
            int rank = r;
            f[r] = CompletableFuture.supplyAsync(() -> {
                try {
                    return new Engine(job.rank(rank));
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }, pool);
        }
        Engine[] e = new Engine[n];
        try {
            for (int r = 0; r < n; r++) e[r] = f[r].get(30, TimeUnit.SECONDS);
        } finally {
            pool.shutdown();
        }
        return e;
    }

    static void closeAll(Engine[] e) {
        for (Engine x : e) x.close();
    }

    @Test
    void aSurvivorPassesOnAFailureItLearnedOf() throws Exception {
        LocalJobRuntime job = new LocalJobRuntime(3, Map.of("comm-mode", "shrink", "recovery-mode", "auto"));
        Engine[] e = start(job);
        try {
            long id = job.rank(0).preliminaryInfo().procIds()[2];
            e[0].processFailed(2, id, "was killed by the test");
            assertTrue(e[0].isFailed(2));
            Await.until("rank 1 learns of rank 2's failure from rank 0", Duration.ofSeconds(30), () -> {
                e[1].progress();
                return e[1].isFailed(2);
            });
            assertTrue(e[1].needsRecovery(), "rank 1 is in state DETECTED");
            assertFalse(e[1].isFailed(0));
            // a new operation fails with the notice's own cause
            Request r = e[1].receive(0, 0, 0, 7, MemorySegment.ofArray(new byte[4]), 0, 4);
            assertTrue(r.complete);
            assertTrue(r.errorMessage().contains("rank 2 was killed by the test"), r.errorMessage());
        } finally {
            closeAll(e);
        }
    }

    @Test
    void notPassedOnUnderRecoveryModeIgnore() throws Exception {
        LocalJobRuntime job = new LocalJobRuntime(3, Map.of("comm-mode", "shrink", "recovery-mode", "ignore"));
        Engine[] e = start(job);
        try (Arena a = Arena.ofShared()) { // shared: the progress agent may deliver the message
            long id = job.rank(0).preliminaryInfo().procIds()[2];
            e[0].processFailed(2, id, "was killed by the test");
            // a message from rank 0 sent after the notice: frames between two ranks arrive in
            // order, so a passed-on notice would have reached rank 1 before it
            MemorySegment in = a.allocate(4), out = a.allocate(4);
            out.set(java.lang.foreign.ValueLayout.JAVA_INT, 0, 42);
            Request s = e[0].send(0, 0, 0, 1, 1, 7, out, 0, 4, Request.STANDARD);
            Request r = e[1].receive(0, 0, 0, 7, in, 0, 4);
            Await.until("the message from rank 0 arrives", Duration.ofSeconds(30), () -> {
                e[0].progress();
                e[1].progress();
                return r.complete && s.complete;
            });
            assertEquals(42, in.get(java.lang.foreign.ValueLayout.JAVA_INT, 0));
            assertFalse(e[1].isFailed(2), "rank 1 was told of rank 2's failure by rank 0 under recovery-mode ignore");
        } finally {
            closeAll(e);
        }
    }
}
