package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.ftmpi.ft.detect.RingPlan;
import org.ftmpi.testutil.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Failure detection through the real bin/ftmpirun with real processes and signals, rank program
 * {@link org.ftmpi.runtime.testprog.DetectProbe}. Survivor tests run with
 * {@code recovery-mode=ignore} so that the job goes on after a failure.
 */
@Timeout(value = 40, unit = TimeUnit.SECONDS)
class DetectionSystemTest {
    private static final String PROBE = "org.ftmpi.runtime.testprog.DetectProbe";
    private static final Pattern READY = Pattern.compile("ready rank (\\d+) pid (\\d+) job ([0-9a-f]+) host (\\S+)");
    private static final List<String> SURVIVE = List.of("--recovery-mode", "ignore");

    static List<String> cmd(List<String> launcherArgs, int expected, long holdMs) {
        List<String> c = new ArrayList<>();
        c.add(FtmpirunSystemTest.root().resolve("bin/ftmpirun").toString());
        c.addAll(launcherArgs);
        c.addAll(List.of("java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss512k",
                "-cp", FtmpirunSystemTest.testClasses(), PROBE, Integer.toString(expected), Long.toString(holdMs)));
        return c;
    }

    /** The ranks' ready lines: rank to {pid, job id}. */
    record Ready(Map<Integer, Long> pids, long jobId, String[] hosts) {
        List<Long> allPids() {
            return List.copyOf(pids.values());
        }
    }

    static Ready awaitReady(FtmpirunSystemTest.Run run, int n) {
        Ready[] ready = new Ready[1];
        Await.until(n + " ranks ready", Duration.ofSeconds(30), () -> {
            ready[0] = readyLines(run.outSoFar(), n);
            if (ready[0] == null) assertTrue(run.p.isAlive(), "ftmpirun ended early: " + run.outSoFar() + errSoFar(run));
            return ready[0] != null;
        });
        return ready[0];
    }

    /** The ready lines of all {@code n} ranks in {@code out}, or null while some are missing. */
    private static Ready readyLines(String out, int n) {
        Map<Integer, Long> pids = new TreeMap<>();
        long job = 0;
        String[] hosts = new String[n];
        Matcher m = READY.matcher(out);
        while (m.find()) {
            int r = Integer.parseInt(m.group(1));
            pids.put(r, Long.parseLong(m.group(2)));
            job = Long.parseUnsignedLong(m.group(3), 16);
            hosts[r] = m.group(4);
        }
        return pids.size() == n ? new Ready(pids, job, hosts) : null;
    }

    static String errSoFar(FtmpirunSystemTest.Run run) {
        synchronized (run.err) {
            return run.err.toString(StandardCharsets.UTF_8);
        }
    }

    static void signal(String sig, long pid) throws Exception {
        Signals.send(pid, switch (sig) {
            case "KILL" -> Signals.SIGKILL;
            case "STOP" -> Signals.SIGSTOP;
            case "CONT" -> Signals.SIGCONT;
            default -> throw new IllegalArgumentException("signal " + sig);
        });
    }

    /** How many times survivor s was told that f failed. */
    static int notices(String out, int s, int f) {
        Matcher m = Pattern.compile("(?m)^notice rank " + s + " failed " + f + " ").matcher(out);
        int k = 0;
        while (m.find()) k++;
        return k;
    }

    static void assertEverySurvivorToldOnce(String out, int n, List<Integer> failed) {
        for (int s = 0; s < n; s++) {
            if (failed.contains(s)) continue;
            for (int f : failed) assertEquals(1, notices(out, s, f), "rank " + s + " about rank " + f + ":\n" + out);
        }
    }

    @Test
    void sigkillReachesEverySurvivorExactlyOnce() throws Exception {
        FtmpirunSystemTest.Run run = new FtmpirunSystemTest.Run(cmd(concat(List.of("-np", "4"), SURVIVE), 1, 15_000), null, null);
        Ready ready = awaitReady(run, 4);
        signal("KILL", ready.pids().get(2));
        FtmpirunSystemTest.Result r = run.await();
        assertEquals(128 + 9, r.code(), r.err());
        assertEverySurvivorToldOnce(r.out(), 4, List.of(2));
        assertTrue(r.err().contains("rank 2 (pid " + ready.pids().get(2) + ") was killed by signal 9 (SIGKILL); the survivors continue (recovery-mode ignore)"), r.err());
        FtmpirunSystemTest.assertAllDead(ready.allPids());
    }

    @Test
    void sigstopBeyondTheTimeoutIsDeclaredAndTheProcessFenced() throws Exception {
        FtmpirunSystemTest.Run run = new FtmpirunSystemTest.Run(cmd(concat(List.of("-np", "4", "--hb-period", "50",
                "--hb-timeout", "500"), SURVIVE), 1, 15_000), null, null);
        Ready ready = awaitReady(run, 4);
        long victim = ready.pids().get(1);
        signal("STOP", victim);
        FtmpirunSystemTest.Result r = run.await();
        assertEverySurvivorToldOnce(r.out(), 4, List.of(1));
        assertTrue(r.out().contains("failed 1 ") && r.out().contains(": no heartbeat for "), r.out());
        assertTrue(r.err().matches("(?s).*ftmpirun: rank 1 \\(pid " + victim + "\\) declared failed by rank \\d: "
                + "no heartbeat for \\d+ ms; killed it \\(SIGKILL\\), the survivors continue \\(recovery-mode ignore\\).*"), r.err());
        FtmpirunSystemTest.assertAllDead(ready.allPids());
    }

    /**
     * The fence of a process the heartbeat ring declared failed is deferred until after the
     * survivors' recovery (--opt fence-delay, default 200 ms): the survivors are told first, and
     * the stopped process is still killed afterwards together with the child it started (found
     * under it: a stopped process keeps its children).
     */
    @Test
    void aStoppedRankIsKilledWithItsChildAfterTheSurvivorsWereTold() throws Exception {
        List<String> c = cmd(concat(List.of("-np", "4", "--hb-period", "50", "--hb-timeout", "500"), SURVIVE), 1, 15_000);
        c.add(c.indexOf("java") + 1, "-Ddetectprobe.child=1");
        FtmpirunSystemTest.Run run = new FtmpirunSystemTest.Run(c, null, null);
        Ready ready = awaitReady(run, 4);
        Matcher m = Pattern.compile("child rank 1 pid (\\d+)").matcher(run.outSoFar());
        assertTrue(m.find(), run.outSoFar());
        long child = Long.parseLong(m.group(1));
        long victim = ready.pids().get(1);
        try {
            assertTrue(ProcessHandle.of(child).map(ProcessHandle::isAlive).orElse(false), "child " + child);
            signal("STOP", victim);
            FtmpirunSystemTest.Result r = run.await();
            assertEverySurvivorToldOnce(r.out(), 4, List.of(1));
            assertTrue(r.err().matches("(?s).*ftmpirun: rank 1 \\(pid " + victim + "\\) declared failed by rank \\d: "
                    + "no heartbeat for \\d+ ms; killed it \\(SIGKILL\\), the survivors continue \\(recovery-mode ignore\\).*"),
                    r.err());
            FtmpirunSystemTest.assertAllDead(List.of(victim, child));
            FtmpirunSystemTest.assertAllDead(ready.allPids());
        } finally {
            ProcessHandle.of(child).ifPresent(ProcessHandle::destroyForcibly); // never leave it behind
        }
    }

    @Test
    void aPauseBelowTheTimeoutIsNoFailure() throws Exception {
        FtmpirunSystemTest.Run run = new FtmpirunSystemTest.Run(cmd(List.of("-np", "4", "--hb-period", "50",
                "--hb-timeout", "500"), 0, 3_000), null, null);
        Ready ready = awaitReady(run, 4);
        long victim = ready.pids().get(1);
        signal("STOP", victim);
        // a pause below the timeout: the job must not end (nor abort) while the rank is stopped
        assertFalse(run.p.waitFor(200, TimeUnit.MILLISECONDS), "the job ended during the pause: " + errSoFar(run));
        signal("CONT", victim);
        FtmpirunSystemTest.Result r = run.await();
        assertEquals(0, r.code(), r.err());
        assertFalse(r.out().contains("notice "), r.out());
        for (int s = 0; s < 4; s++) assertTrue(r.out().contains("done rank " + s + " notices 0"), r.out());
    }

    @Test
    void twoAdjacentRingNeighboursStoppedAtOnceAreBothDeclared() throws Exception {
        FtmpirunSystemTest.Run run = new FtmpirunSystemTest.Run(cmd(concat(List.of("-np", "5"), SURVIVE), 2, 15_000),
                null, null);
        Ready ready = awaitReady(run, 5);
        RingPlan plan = RingPlan.of(ready.jobId(), ready.hosts());
        int a = plan.rankAt(1);
        int b = plan.rankAt(2); // b observes a; when both hang, a is seen only after b is declared
        signal("STOP", ready.pids().get(a));
        signal("STOP", ready.pids().get(b));
        FtmpirunSystemTest.Result r = run.await();
        assertEverySurvivorToldOnce(r.out(), 5, List.of(a, b));
        FtmpirunSystemTest.assertAllDead(ready.allPids());
    }

    /**
     * Time from the start of the ranks to the fault of the two --inject after= tests: the stop
     * test needs every rank's ready line first, and at load average 18-40 on the 2-vCPU
     * development VM three ranks took 1.0-2.1 s to be ready (1500 ms failed there in about half
     * the runs; at load 38 one rank of four was not ready after 5 s once). The kill test does not
     * wait for them: it takes every rank's pid from the launcher's {@code -v} line
     * {@code started rank R as pid P}.
     */
    private static final String INJECT_AFTER_MS = "5000";
    private static final Pattern STARTED = Pattern.compile("started rank (\\d+) as pid (\\d+)");

    /** Rank to pid from the launcher's -v lines of {@code n} ranks. */
    private static Map<Integer, Long> startedPids(String err, int n) {
        Map<Integer, Long> pids = new TreeMap<>();
        Matcher m = STARTED.matcher(err);
        while (m.find()) pids.put(Integer.parseInt(m.group(1)), Long.parseLong(m.group(2)));
        assertEquals(n, pids.size(), err);
        return pids;
    }

    @Test
    void injectKillAbortsTheJob() throws Exception {
        FtmpirunSystemTest.Run run = new FtmpirunSystemTest.Run(cmd(List.of("-v", "-np", "3", "--inject",
                "rank=1,after=" + INJECT_AFTER_MS + ",how=kill"), 1, 20_000), null, null);
        FtmpirunSystemTest.Result r = run.await();
        Map<Integer, Long> pids = startedPids(r.err(), 3);
        assertEquals(128 + 9, r.code(), r.err());
        assertTrue(r.err().contains("ftmpirun: injecting fault: SIGKILL to rank 1 (pid " + pids.get(1) + ")"), r.err());
        assertTrue(r.err().contains("rank 1 (pid " + pids.get(1) + ") was killed by signal 9 (SIGKILL);"
                + " aborting the job (comm-mode abort)"), r.err());
        FtmpirunSystemTest.assertAllDead(List.copyOf(pids.values()));
    }

    @Test
    void injectStopIsDetectedByHeartbeatsAndAbortsTheJobNamingTheRank() throws Exception {
        FtmpirunSystemTest.Run run = new FtmpirunSystemTest.Run(cmd(List.of("-np", "4", "--hb-timeout", "500", "--inject",
                "rank=2,after=" + INJECT_AFTER_MS + ",how=stop"), 1, 20_000), null, null);
        // Here the ranks must be ready first: a rank stopped before the endpoint exchange is
        // seen by nobody (no heartbeat ring yet), and the job would wait for it.
        Ready ready = awaitReady(run, 4);
        Await.until("the SIGSTOP injection", Duration.ofSeconds(20), () -> {
            assertTrue(run.p.isAlive(), errSoFar(run));
            return errSoFar(run).contains("injecting fault: SIGSTOP to rank 2");
        });
        FtmpirunSystemTest.Result r = run.await();
        assertEquals(128 + 9, r.code(), r.err());
        assertTrue(r.err().matches("(?s).*ftmpirun: rank 2 \\(pid " + ready.pids().get(2) + "\\) declared failed by rank \\d: "
                + "no heartbeat for \\d+ ms; aborting the job \\(comm-mode abort\\).*"), r.err());
        FtmpirunSystemTest.assertAllDead(ready.allPids());
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> c = new ArrayList<>(a);
        c.addAll(b);
        return c;
    }
}
