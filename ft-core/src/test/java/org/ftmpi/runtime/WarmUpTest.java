package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import mpi.MPI;
import org.ftmpi.testutil.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The warm-up job of spares and of the ranks of recovering jobs ({@link WarmUp}). */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WarmUpTest {

    @Test
    void ranksWarmUpOnlyWhenAskedAndNeverAsAReplacement() {
        assertFalse(WarmUp.wanted(Map.of("comm-mode", "shrink")), "off unless ft-warmup=true");
        assertFalse(WarmUp.wanted(Map.of()), "off unless ft-warmup=true");
        assertFalse(WarmUp.wanted(Map.of("comm-mode", "shrink", "ft-warmup", "false")));
        assertTrue(WarmUp.wanted(Map.of("comm-mode", "shrink", "ft-warmup", "true")));
        assertTrue(WarmUp.wanted(Map.of("comm-mode", "blank", "recovery-mode", "auto", "ft-warmup", "true")));
        assertTrue(WarmUp.wanted(Map.of("recovery-mode", "ignore", "ft-warmup", "true")),
                "any job that asks, so that it can be measured under ignore");
        assertFalse(WarmUp.wanted(Map.of("comm-mode", "rebuild", "restarted", "true", "ft-warmup", "true")),
                "a replacement's start-up is on the recovery path");
    }

    /** Every thread of this JVM that is alive now. */
    private static Set<Thread> liveThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).collect(Collectors.toSet());
    }

    @ParameterizedTest
    @ValueSource(strings = {"shrink", "blank", "rebuild", "shrink,ulfm-error-classes", "blank,msg-mode=cont",
            "shrink,coll-mode=atomic"})
    void theFailureWarmUpRunsItsFailuresAndLeavesNoThreadOutputOrMpiStateBehind(String modes) throws Exception {
        Map<String, String> job = new HashMap<>();
        for (String m : modes.split(",")) {
            if (m.equals("ulfm-error-classes")) job.put(m, "true");
            else if (m.contains("=")) job.put(m.substring(0, m.indexOf('=')), m.substring(m.indexOf('=') + 1));
            else job.put("comm-mode", m);
        }
        Set<Thread> before = liveThreads();
        PrintStream err = System.err, out = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream both = new PrintStream(captured, true);
        System.setErr(both);
        System.setOut(both);
        try {
            WarmUp.failures(job); // throws if a call with a dead peer did not fail or a recovery went wrong
            WarmUp.runFailures(job, 1, true); // the form ranks run: reports on stderr instead of throwing
        } finally {
            System.setErr(err);
            System.setOut(out);
        }
        assertEquals("", captured.toString(), "the failure warm-up printed something");
        assertFalse(MPI.isInitialized(), "the warm-up must not initialise the process's MPI");
        Await.until("the warm-up's threads end", Duration.ofSeconds(30), () -> {
            Set<Thread> now = liveThreads();
            now.removeAll(before);
            return now.isEmpty();
        });
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
        Thread t = WarmUp.inBackground(Map.of("comm-mode", "shrink"));
        assertTrue(t.isDaemon());
        assertEquals("ftmpi-warmup", t.getName());
        t.join(TimeUnit.SECONDS.toMillis(100));
        assertFalse(t.isAlive(), "the warm-up thread did not end");
    }
}
