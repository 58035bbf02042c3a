package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.ftmpi.runtime.FtmpirunSystemTest.Result;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code ftmpirun --bind-to core|none --report-bindings} through the real launcher: what each
 * rank reports is what the kernel holds for the process and every one of its threads
 * ({@code Cpus_allowed_list} in /proc, read by the probe's {@code cpus} mode).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BindingSystemTest {
    private static final Pattern BOUND = Pattern.compile("ftmpirun: rank (\\d+) \\(pid \\d+\\) bound to cpu (\\d+)");

    /** The CPUs this test (and so the launcher it starts) may use. */
    private static final List<Integer> CPUS = Binding.allowedCpus();

    private static Result probe(String... launcherArgs) throws Exception {
        Result r = FtmpirunSystemTest.run(FtmpirunSystemTest.cmd(List.of(launcherArgs), "cpus"));
        assertEquals(0, r.code(), r.out() + r.err());
        return r;
    }

    private static int reportedCpu(Result r, int rank) {
        Matcher m = BOUND.matcher(r.err());
        while (m.find()) {
            if (Integer.parseInt(m.group(1)) == rank) return Integer.parseInt(m.group(2));
        }
        throw new AssertionError("no binding reported for rank " + rank + " in:\n" + r.err());
    }

    @Test
    void bindToCoreGivesEachRankAndAllItsThreadsItsOwnCpu() throws Exception {
        Result r = probe("-np", "2", "--bind-to", "core", "--report-bindings");
        int c0 = reportedCpu(r, 0);
        int c1 = reportedCpu(r, 1);
        assertEquals(CPUS.get(0), c0, "rank 0 on the first allowed CPU");
        assertEquals(Binding.cpuOf(1, CPUS), c1, "rank 1 on the next one (round-robin)");
        if (CPUS.size() >= 2) assertNotEquals(c0, c1, "two CPUs, two ranks: distinct CPUs");
        for (int rank = 0; rank < 2; rank++) {
            int cpu = rank == 0 ? c0 : c1;
            assertTrue(r.out().contains("rank " + rank + " cpus " + cpu + " threads " + cpu + " option.bind-to=core"),
                    "the process and every thread hold exactly the reported CPU:\n" + r.out());
        }
    }

    @Test
    void bindToNoneLeavesTheRanksOnEveryAllowedCpu() throws Exception {
        Result r = probe("-np", "2", "--bind-to", "none", "--report-bindings");
        String all = Binding.formatList(CPUS);
        for (int rank = 0; rank < 2; rank++) {
            assertTrue(r.err().contains("ftmpirun: rank " + rank + " (pid "), r.err());
            assertTrue(r.err().matches("(?s).*ftmpirun: rank " + rank + " \\(pid \\d+\\) not bound \\(cpus " + all + "\\).*"),
                    r.err());
            assertTrue(r.out().contains("rank " + rank + " cpus " + all + " threads " + all + " option.bind-to=none"),
                    r.out());
        }
    }

    @Test
    void byDefaultRanksAreNotBound() throws Exception {
        Result r = probe("-np", "2");
        String all = Binding.formatList(CPUS);
        assertTrue(r.out().contains("rank 1 cpus " + all + " threads " + all + " option.bind-to=none"), r.out());
        assertTrue(!r.err().contains("ftmpirun: rank "), "no report without --report-bindings:\n" + r.err());
    }

    /** ftmpirun under {@code taskset -c C}: its one CPU is the job's; two ranks bound to it, round-robin. */
    @Test
    void theJobGetsTheLaunchersCpusAndMoreRanksThanCpusShareThemWhenAskedFor() throws Exception {
        int last = CPUS.get(CPUS.size() - 1);
        List<String> c = new java.util.ArrayList<>(List.of("taskset", "-c", Integer.toString(last)));
        c.addAll(FtmpirunSystemTest.cmd(List.of("-np", "2", "--bind-to", "core", "--report-bindings"), "cpus"));
        Result r = FtmpirunSystemTest.run(c);
        assertEquals(0, r.code(), r.out() + r.err());
        for (int rank = 0; rank < 2; rank++) {
            assertEquals(last, reportedCpu(r, rank));
            assertTrue(r.out().contains("rank " + rank + " cpus " + last + " threads " + last), r.out());
        }
    }

    /** Pids and CPUs of the processes that reported binding {@code rank}, in report order. */
    private static List<long[]> boundAs(Result r, int rank) {
        List<long[]> found = new java.util.ArrayList<>();
        Matcher m = Pattern.compile("ftmpirun: rank " + rank + " \\(pid (\\d+)\\) bound to cpu (\\d+)").matcher(r.err());
        while (m.find()) found.add(new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))});
        return found;
    }

    /** REBUILD: the replacement of rank 2 (a new process, or a warm spare) binds to rank 2's CPU. */
    private static void replacementTakesTheFailedRanksCpu(String... spares) throws Exception {
        List<String> args = new java.util.ArrayList<>(List.of("-np", "4", "--comm-mode", "rebuild",
                "--recovery-mode", "auto", "--bind-to", "core", "--report-bindings"));
        args.addAll(List.of(spares));
        Result r = FtmpirunSystemTest.run(FtmpirunSystemTest.probeCmd("org.ftmpi.runtime.testprog.RecoveryProbe",
                args, "rebuild", "2"));
        assertEquals(0, r.code(), r.out() + r.err());
        List<long[]> two = boundAs(r, 2);
        assertEquals(2, two.size(), "rank 2, then its replacement:\n" + r.err());
        assertNotEquals(two.get(0)[0], two.get(1)[0], "two processes");
        assertEquals(Binding.cpuOf(2, CPUS), two.get(0)[1]);
        assertEquals(two.get(0)[1], two.get(1)[1], "the replacement runs on the failed rank's CPU");
    }

    @Test
    void aReplacementProcessTakesTheFailedRanksCpu() throws Exception {
        replacementTakesTheFailedRanksCpu();
    }

    @Test
    void aWarmSpareTakesTheFailedRanksCpuWhenItTakesOver() throws Exception {
        replacementTakesTheFailedRanksCpu("-sp", "1");
    }

    @Test
    void anInvalidBindingIsAUsageErrorNamingTheOption() throws Exception {
        Result r = FtmpirunSystemTest.run(FtmpirunSystemTest.cmd(List.of("-np", "2", "--bind-to", "socket"), "cpus"));
        assertEquals(2, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("ftmpirun: --bind-to socket is not a binding (core, none)"), r.err());
    }
}
