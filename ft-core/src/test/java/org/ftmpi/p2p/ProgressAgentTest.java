package org.ftmpi.p2p;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.ftmpi.runtime.LocalJobRuntime;
import org.ftmpi.testutil.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The progress agent: it sleeps without a timeout while nothing is outstanding, and a posted
 * non-blocking operation wakes it, so that a rendezvous send completes while its sender makes no
 * further call into the engine (two engines in this JVM over the real TCP transport).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProgressAgentTest {

    /** Larger than the TCP eager limit (64 KiB): a rendezvous, whose CTS only the sender's agent can answer here. */
    private static final int BYTES = 1 << 20;

    @Test
    void aPostWakesTheSleepingAgentWhichCompletesARendezvousWhileTheSenderMakesNoCall() throws Exception {
        Engine[] e = LocalEngines.start(new LocalJobRuntime(2, Map.of()));
        try (Arena a = Arena.ofShared()) {
            Await.until("rank 0's agent sleeps without a timeout (nothing outstanding)", Duration.ofSeconds(30),
                    e[0]::agentAsleep);
            MemorySegment out = a.allocate(BYTES), in = a.allocate(BYTES);
            for (int i = 0; i < BYTES; i += 4096) out.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (i >> 12));
            Request r = e[1].receive(0, 0, 0, 7, in, 0, BYTES);
            Request s = e[0].send(0, 0, 0, 1, 1, 7, out, 0, BYTES, Request.STANDARD);
            assertFalse(s.complete, "a rendezvous send waits for the receiver's CTS");
            e[0].posted(s);
            assertFalse(e[0].agentAsleep(), "the post woke the agent");
            // rank 1 waits in the engine; rank 0 "computes": no call into its engine from here on
            Thread receiver = Thread.ofPlatform().name("rank-1-wait").start(() -> e[1].await(r));
            Await.until("the receive completes while the sender makes no call", Duration.ofSeconds(30), () -> r.complete);
            receiver.join();
            assertEquals(0, r.errorClass(), r.errorMessage());
            for (int i = 0; i < BYTES; i += 4096) assertEquals((byte) (i >> 12), in.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i));
            Await.until("the sender's request completes by the agent", Duration.ofSeconds(30), () -> s.complete);
            Await.until("with nothing outstanding the agent sleeps without a timeout again", Duration.ofSeconds(30),
                    e[0]::agentAsleep);
        } finally {
            LocalEngines.closeAll(e);
        }
    }

    @Test
    void aPostOfAnOperationThatCompletedAtOnceLeavesTheAgentAsleep() throws Exception {
        Engine[] e = LocalEngines.start(new LocalJobRuntime(2, Map.of()));
        try (Arena a = Arena.ofShared()) {
            Await.until("rank 0's agent sleeps without a timeout", Duration.ofSeconds(30), e[0]::agentAsleep);
            MemorySegment out = a.allocate(8);
            Request s = e[0].send(0, 0, 0, 1, 1, 7, out, 0, 8, Request.STANDARD); // eager: complete at once
            assertTrue(s.complete);
            e[0].posted(s);
            assertTrue(e[0].agentAsleep(), "a complete request needs no progress: no wake-up");
        } finally {
            LocalEngines.closeAll(e);
        }
    }
}
