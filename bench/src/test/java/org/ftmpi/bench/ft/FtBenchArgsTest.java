package org.ftmpi.bench.ft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Arguments of the MPI fault-tolerance benchmarks are checked before MPI.Init. */
class FtBenchArgsTest {
    @Test
    void ftOverheadTakesOnlyPairedAsItsArgument() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
        int status = FtBench.run(new String[] {"ft-overhead", "pairs"}, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(2, status);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("the only argument is 'paired', got 'pairs'"), err.toString(StandardCharsets.UTF_8));
        assertEquals("", out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void ftRecoverChecksItsIterationsAndQuietPoint() throws Exception {
        assertRecoverRejects(new String[] {"ft-recover", "0"}, "ITERATIONS must be a positive integer, got '0'");
        assertRecoverRejects(new String[] {"ft-recover", "21000", "21000"},
                "QUIET_AT must be a positive integer below ITERATIONS (21000), got '21000'");
        assertRecoverRejects(new String[] {"ft-recover", "21000", "soon"},
                "QUIET_AT must be a positive integer below ITERATIONS (21000), got 'soon'");
        assertRecoverRejects(new String[] {"ft-recover", "21000", "20000", "1"}, "expected [ITERATIONS [QUIET_AT]], got 3 arguments");
    }

    @Test
    void ftAfterChecksItsCallsAndRounds() throws Exception {
        assertAfterRejects(new String[] {"ft-after", "0"}, "usage: ft-after [CALLS >= 1 [ROUNDS >= 1]], got 0");
        assertAfterRejects(new String[] {"ft-after", "1000", "none"}, "got 1000 none");
        assertAfterRejects(new String[] {"ft-after", "1000", "3", "4"}, "got 1000 3 4");
    }

    private interface Bench {
        int run(String[] args, PrintStream out, PrintStream err) throws Exception;
    }

    private static void assertAfterRejects(String[] args, String message) throws Exception {
        assertRejects(AfterRecoveryBench::run, args, message);
    }

    private static void assertRecoverRejects(String[] args, String message) throws Exception {
        assertRejects(RecoveryBench::run, args, message);
    }

    /** The benchmark refuses {@code args} with status 2 and {@code message} on stderr, before MPI.Init. */
    private static void assertRejects(Bench bench, String[] args, String message) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
        int status = bench.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(2, status);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains(message), err.toString(StandardCharsets.UTF_8));
        assertEquals("", out.toString(StandardCharsets.UTF_8));
    }
}
