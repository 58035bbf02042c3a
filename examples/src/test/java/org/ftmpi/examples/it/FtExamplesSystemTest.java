package org.ftmpi.examples.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The fault-tolerant examples reach the fault-free answer when a rank is SIGKILLed at about 10%
 * and at about 90% of its run ({@code --inject rank=R,at-call=N}, N from the call count the
 * fault-free run prints), through {@code bin/ftmpirun} with real processes. The heartbeat timeout
 * is raised to 3 s so that the loaded test machine does not add failures of its own (the injected
 * SIGKILL is seen at once by the controller).
 */
@Timeout(300)
class FtExamplesSystemTest {
    private static final Pattern CALLS = Pattern.compile("mpi-calls (\\d+)");
    private static final Pattern FAILURES = Pattern.compile("failures recovered (\\d+)");

    private static Launch.Result job(List<String> opts, String main, String... args) throws Exception {
        List<String> c = new ArrayList<>(List.of("ftmpirun", "--timeout", "240", "--hb-timeout", "3000"));
        c.addAll(opts);
        c.add(main);
        c.addAll(List.of(args));
        Launch.Result r = Launch.run(Launch.ROOT, 270, c.toArray(String[]::new));
        assertEquals(0, r.exit(), r.toString());
        return r;
    }

    private static String find(Pattern p, Launch.Result r) {
        Matcher m = p.matcher(r.out());
        assertTrue(m.find(), "no '" + p + "' in\n" + r);
        return m.group(1);
    }

    /** Fault-free run, then one with rank {@code victim} killed at 10% and one at 90% of its calls. */
    private static List<Launch.Result> withFailures(List<String> opts, int victim, String main, String... args)
            throws Exception {
        Launch.Result clean = job(opts, main, args);
        assertEquals("0", find(FAILURES, clean), clean.toString());
        long calls = Long.parseLong(find(CALLS, clean));
        List<Launch.Result> out = new ArrayList<>(List.of(clean));
        for (double at : new double[] {0.1, 0.9}) {
            long n = Math.max(1, Math.round(calls * at));
            List<String> o = new ArrayList<>(opts);
            o.addAll(List.of("--inject", "rank=" + victim + ",at-call=" + n));
            Launch.Result r = job(o, main, args);
            Launch.assertKilled(r, victim);
            assertTrue(Integer.parseInt(find(FAILURES, r)) >= 1, r.toString());
            out.add(r);
        }
        return out;
    }

    @Test
    void gameOfLifeRebuildWithAWarmSpareEndsWithTheFaultFreeGrid() throws Exception {
        Pattern grid = Pattern.compile("live cells (\\d+), checksum ([0-9a-f]{16})");
        List<Launch.Result> runs = withFailures(List.of("-np", "4", "-sp", "1", "--comm-mode", "rebuild",
                "--msg-mode", "reset", "--recovery-mode", "auto"), 2, "org.ftmpi.examples.GameOfLife", "96", "96", "150", "10");
        Matcher ref = grid.matcher(runs.get(0).out());
        assertTrue(ref.find(), runs.get(0).toString());
        assertTrue(Long.parseLong(ref.group(1)) > 0, "the test grid dies out: " + runs.get(0));
        for (Launch.Result r : runs.subList(1, 3)) {
            assertTrue(r.err().contains("rank 2 is taken over by a warm spare"), r.toString());
            assertTrue(r.out().contains("live cells " + ref.group(1) + ", checksum " + ref.group(2)), r.toString());
        }
    }

    @Test
    void gameOfLifeRebuildByColdRespawnUnderManualRecovery() throws Exception {
        Launch.Result clean = job(List.of("-np", "3"), "org.ftmpi.examples.GameOfLife", "60", "60", "80", "10");
        Launch.Result r = job(List.of("-np", "3", "--comm-mode", "rebuild", "--inject", "rank=1,at-call=100"),
                "org.ftmpi.examples.GameOfLife", "60", "60", "80", "10");
        assertTrue(r.err().contains("started a replacement for rank 1"), r.toString());
        String answer = clean.out().lines().filter(l -> l.startsWith("GameOfLife")).findFirst().orElseThrow();
        assertTrue(r.out().contains(answer), "expected '" + answer + "' in\n" + r);
    }

    private static final Pattern ANSWER = Pattern.compile("on (\\d+) ranks: \\d+ iterations, relative residual (\\S+),"
            + " max error (\\S+), sum\\(x\\) (\\S+)");

    /** Two neighbours die at once: buddy copies cannot cover that, RS(3+2) parity can. */
    @Test
    void poissonCgWithReedSolomonCheckpointsSurvivesTwoNeighboursLostAtOnce() throws Exception {
        List<String> opts = List.of("-np", "5", "--comm-mode", "shrink", "--msg-mode", "reset", "--recovery-mode", "auto");
        Launch.Result clean = job(opts, "org.ftmpi.examples.PoissonCG", "48", "10", "1e-10", "rs:2");
        long half = Long.parseLong(find(CALLS, clean)) / 2;
        List<String> o = new ArrayList<>(opts);
        o.addAll(List.of("--inject", "rank=1,at-call=" + half, "--inject", "rank=2,at-call=" + half));
        Launch.Result r = job(o, "org.ftmpi.examples.PoissonCG", "48", "10", "1e-10", "rs:2");
        Launch.assertKilled(r, 1);
        Launch.assertKilled(r, 2);
        Matcher ref = ANSWER.matcher(clean.out()), m = ANSWER.matcher(r.out());
        assertTrue(ref.find() && m.find(), clean + "\n" + r);
        assertEquals("3", m.group(1), "solved on the 3 survivors: " + r);
        assertTrue(Double.parseDouble(m.group(2)) <= 1e-10, "converged: " + r);
        double refSum = Double.parseDouble(ref.group(4));
        assertEquals(refSum, Double.parseDouble(m.group(4)), 1e-7 * Math.abs(refSum), r.toString());
    }

    @Test
    void poissonCgShrinkRedistributesAndReachesTheFaultFreeAnswer() throws Exception {
        Pattern answer = ANSWER;
        List<Launch.Result> runs = withFailures(List.of("-np", "4", "--comm-mode", "shrink", "--msg-mode", "reset",
                "--recovery-mode", "auto"), 2, "org.ftmpi.examples.PoissonCG", "48", "10");
        Matcher ref = answer.matcher(runs.get(0).out());
        assertTrue(ref.find(), runs.get(0).toString());
        assertEquals("4", ref.group(1));
        double refSum = Double.parseDouble(ref.group(4));
        for (Launch.Result r : runs) {
            Matcher m = answer.matcher(r.out());
            assertTrue(m.find(), r.toString());
            assertTrue(Double.parseDouble(m.group(2)) <= 1e-10, "converged: " + r);
            assertTrue(Double.parseDouble(m.group(3)) < 1e-6, "close to the exact solution: " + r);
            assertEquals(refSum, Double.parseDouble(m.group(4)), 1e-7 * Math.abs(refSum), r.toString());
        }
        for (Launch.Result r : runs.subList(1, 3)) {
            Matcher m = answer.matcher(r.out());
            assertTrue(m.find());
            assertEquals("3", m.group(1), "solved on the 3 survivors: " + r);
        }
    }
}
