package org.ftmpi.p2p;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.ftmpi.testutil.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A rendezvous message (its RTS) that arrived before the receive was posted, from a sender
 * whose failure is known by the time the receive matches it: the rest of the message can never
 * come, so the receive fails with the process-failure error at once. It used to send a CTS to
 * the dead sender and wait for ever (the receive was put in the engine's table after the
 * failure notice had failed everything in it): a shared-memory receiver hung this way once in
 * {@code ShmCleanupSystemTest.aSenderKilledMidBatchedReadsFailsTheReceiver}.
 * Rank 1's engine stays alive here (only rank 0 is told it failed), so a CTS would be answered
 * with data that rank 0 drops as the traffic of a failed process: nothing but the fix completes
 * the receive.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RendezvousFromAFailedPeerTest extends TwoRankEngines {
    private static final int LARGE = 1 << 20, TAG = 7;

    /** Rank 1 sends {@code bytes} bytes with {@code tag}; returns once rank 0 holds the message unmatched. */
    private void arrivesUnexpected(int bytes, int tag) {
        MemorySegment out = arena.allocate(bytes);
        out.set(ValueLayout.JAVA_BYTE, bytes - 1, (byte) 42);
        e[1].send(0, 0, 1, 0, 0, tag, out, 0, bytes, Request.STANDARD);
        Await.until("rank 0 holds rank 1's message unmatched", Duration.ofSeconds(30), () -> {
            e[1].progress();
            try {
                return e[0].probe(0, 0, 1, 1, tag, false) != null;
            } catch (P2pException ex) {
                throw new AssertionError(ex);
            }
        });
    }

    private void rank1Fails() {
        e[0].processFailed(1, job.rank(0).preliminaryInfo().procIds()[1], "was killed by the test");
        assertTrue(e[0].isFailed(1));
    }

    private static void assertFailedBecauseOfRank1(Request r) {
        assertFailedBecauseOf(1, r);
        assertTrue(r.errorMessage().contains("rank 1 was killed by the test"), r.errorMessage());
    }

    @Test
    void aReceivePostedAfterTheFailureFailsInsteadOfMatchingTheDeadSendersRendezvous() throws Exception {
        arrivesUnexpected(LARGE, TAG);
        rank1Fails();
        P2pException probed = assertThrows(P2pException.class, () -> e[0].probe(0, 0, 1, 1, TAG, false),
                "a probe reports a message that can never be received");
        assertEquals(ErrorClass.ERR_OTHER, probed.errorClass());
        Request r = e[0].receive(0, 0, 1, 1, TAG, arena.allocate(LARGE), 0, LARGE);
        assertFailedBecauseOfRank1(r);
    }

    @Test
    void aMatchedProbeOfTheRendezvousReceivedAfterTheFailureFails() throws Exception {
        arrivesUnexpected(LARGE, TAG);
        Engine.Probed p = e[0].probe(0, 0, 1, 1, TAG, true);
        assertNotNull(p);
        assertEquals(LARGE, p.length());
        rank1Fails();
        Request r = e[0].receiveMatched(p, arena.allocate(LARGE), 0, LARGE);
        assertFailedBecauseOfRank1(r);
    }

    @Test
    void anEagerMessageThatArrivedBeforeTheFailureIsStillDelivered() throws Exception {
        arrivesUnexpected(8, TAG + 1);
        rank1Fails();
        MemorySegment in = arena.allocate(8);
        Request r = e[0].receive(0, 0, 1, 1, TAG + 1, in, 0, 8);
        assertTrue(r.isComplete());
        assertEquals(ErrorClass.SUCCESS, r.errorClass(), r.errorMessage());
        assertEquals(8, r.byteCount());
        assertEquals(42, in.get(ValueLayout.JAVA_BYTE, 7));
    }
}
