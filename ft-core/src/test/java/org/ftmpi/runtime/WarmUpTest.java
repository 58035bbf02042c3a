package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The warm-up job of spares and of the ranks of recovering jobs ({@link WarmUp}). */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WarmUpTest {

    @Test
    void ranksWarmUpOnlyWhenAskedAndTheJobRecovers() {
        assertFalse(WarmUp.wanted(Map.of("comm-mode", "shrink")), "off unless ft-warmup=true");
        assertFalse(WarmUp.wanted(Map.of("comm-mode", "abort", "ft-warmup", "true")), "comm-mode abort");
        assertFalse(WarmUp.wanted(Map.of("ft-warmup", "true")), "comm-mode abort (the default)");
        assertTrue(WarmUp.wanted(Map.of("comm-mode", "shrink", "ft-warmup", "true")));
        assertTrue(WarmUp.wanted(Map.of("comm-mode", "blank", "recovery-mode", "auto", "ft-warmup", "true")));
        assertTrue(WarmUp.wanted(Map.of("comm-mode", "rebuild", "recovery-mode", "manual", "ft-warmup", "true")));
        assertFalse(WarmUp.wanted(Map.of("comm-mode", "shrink", "recovery-mode", "ignore", "ft-warmup", "true")),
                "ignore does not recover");
        assertFalse(WarmUp.wanted(Map.of("comm-mode", "rebuild", "restarted", "true", "ft-warmup", "true")),
                "a replacement's start-up is on the recovery path");
    }

    @Test
    void theWarmUpJobRunsToTheEndWithoutReportingAFailure() throws Exception {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true));
        try {
            WarmUp.run(12, true); // agree and shrink in rounds 0 and 10
        } finally {
            System.setErr(err);
        }
        assertEquals("", captured.toString(), "the warm-up job reported a failure");
    }

    @Test
    void theWarmUpThreadIsADaemonAndEnds() throws Exception {
        Thread t = WarmUp.inBackground();
        assertTrue(t.isDaemon());
        assertEquals("ftmpi-warmup", t.getName());
        t.join(TimeUnit.SECONDS.toMillis(100));
        assertFalse(t.isAlive(), "the warm-up thread did not end");
    }
}
