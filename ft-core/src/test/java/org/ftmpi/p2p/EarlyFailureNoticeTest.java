package org.ftmpi.p2p;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.ftmpi.runtime.ControlListener;
import org.ftmpi.runtime.JobInfo;
import org.ftmpi.runtime.LocalJobRuntime;
import org.ftmpi.runtime.RankRuntime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A failure notice that reaches a rank while its engine is still being made (the listener is
 * registered before the endpoint exchange; under heavy load the heartbeat ring or the controller
 * can report a peer that early) is kept and applied once the engine is complete. It used to be
 * lost in a NullPointerException on the notifying thread.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EarlyFailureNoticeTest {

    /** Rank 0's runtime: reports rank 1 failed to the engine's listener during the exchange. */
    private static final class NoticeDuringExchange implements RankRuntime {
        private final RankRuntime inner;
        private volatile ControlListener listener;

        NoticeDuringExchange(RankRuntime inner) {
            this.inner = inner;
        }

        @Override public JobInfo preliminaryInfo() { return inner.preliminaryInfo(); }

        @Override
        public JobInfo exchange(Map<String, byte[]> mine) throws IOException {
            JobInfo pre = inner.preliminaryInfo();
            listener.processFailed(1, pre.procIds()[1], "was killed by the test during the endpoint exchange");
            return inner.exchange(mine);
        }

        @Override
        public void setListener(ControlListener l) {
            listener = l;
            inner.setListener(l);
        }

        @Override public void abort(int exitCode, String reason) { inner.abort(exitCode, reason); }
        @Override public void finalizeBarrier() throws IOException { inner.finalizeBarrier(); }
        @Override public boolean ownsProcess() { return false; }
        @Override public void close() { inner.close(); }
    }

    @Test
    void aNoticeDuringTheEndpointExchangeIsAppliedOnceTheEngineIsMade() throws Exception {
        LocalJobRuntime job = new LocalJobRuntime(2, Map.of("recovery-mode", "ignore"));
        CompletableFuture<Engine> other = CompletableFuture.supplyAsync(() -> {
            try {
                return new Engine(job.rank(1));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        Engine e = new Engine(new NoticeDuringExchange(job.rank(0)));
        try {
            assertTrue(e.isFailed(1), "the early notice about rank 1 was lost");
            assertFalse(e.isFailed(0));
        } finally {
            e.close();
            // Rank 1 is fenced by rank 0, which may close their connection while rank 1 still
            // makes it: then rank 1's engine fails to start ("connection closed by rank 0"), as a
            // process declared failed should. Either outcome is fine here; only rank 0 is checked.
            other.handle((engine, error) -> {
                if (engine != null) engine.close();
                return null;
            }).get(30, TimeUnit.SECONDS);
        }
    }
}
