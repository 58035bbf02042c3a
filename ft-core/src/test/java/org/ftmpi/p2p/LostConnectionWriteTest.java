package org.ftmpi.p2p;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.ftmpi.testutil.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A TCP write that finds the connection to its peer lost: the transport reports the loss
 * ({@code onPeerLost}) before it throws, so the engine's own failure handling of the write finds
 * the peer failed already. The operation that made the write must still complete with the
 * process-failure error: an eager send used to stay pending for ever (it is in none of the lists
 * that the failure notice empties), and a rendezvous send streaming its data used to end its
 * progress step with a ConcurrentModificationException (the notice edited the list being
 * streamed from). Here rank 1's engine is closed, as a process that exits would close its sockets,
 * and rank 0 is told nothing else.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LostConnectionWriteTest extends TwoRankEngines {
    @Test
    void anEagerSendWhoseWriteFindsTheConnectionLostFails() {
        e[1].close();
        MemorySegment out = arena.allocate(8);
        List<Request> sends = new ArrayList<>();
        // The first writes after the peer closed its socket may still be taken by the kernel;
        // one of the next ones fails (the connection is reset), without any progress step here.
        for (int i = 0; i < 10_000 && !e[0].isFailed(1); i++) {
            sends.add(e[0].send(0, 0, 0, 1, 1, 5, out, 0, 8, Request.STANDARD));
        }
        assertTrue(e[0].isFailed(1), "no write noticed that rank 1 closed its connection");
        Request last = sends.getLast();
        assertFailedBecauseOf(1, last);
        for (Request s : sends) assertTrue(s.isComplete(), "a send is still pending");
    }

    @Test
    void aRendezvousSendStreamingToAPeerThatClosedFailsWithoutAnInternalError() {
        int bytes = 8 << 20;
        Request s = e[1].send(0, 0, 1, 0, 0, 5, arena.allocate(bytes), 0, bytes, Request.STANDARD);
        Request r = e[0].receive(0, 0, 1, 1, 5, arena.allocate(bytes), 0, bytes);
        // Rank 1's progress lock held here: its agent cannot read the CTS; this thread does,
        // after rank 0 closed, so the data is streamed into a connection that is gone.
        e[1].lock.lock();
        try {
            Await.until("rank 0 matched rank 1's message and asked for the data", Duration.ofSeconds(30), () -> {
                e[0].progress();
                return r.expected == bytes;
            });
            e[0].close();
            Await.until("rank 1's send ends", Duration.ofSeconds(30), () -> {
                e[1].progress(); // an exception of the progress step fails the test here
                return s.isComplete();
            });
        } finally {
            e[1].lock.unlock();
        }
        assertFailedBecauseOf(0, s);
    }
}
