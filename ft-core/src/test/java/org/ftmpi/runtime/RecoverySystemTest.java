package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;

/**
 * FT-MPI recovery (issue 8) through {@code bin/ftmpirun} with real SIGKILLs: comm-modes SHRINK
 * and BLANK, recovery modes MANUAL (by {@code MPI.recover()} and by {@code COMM_WORLD.dup()})
 * and AUTO, message mode RESET, listeners, states, invalidated communicators, a second failure,
 * and the job where every rank dies. The program is {@code testprog.RecoveryProbe}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RecoverySystemTest {
    private static final String PROBE = "org.ftmpi.runtime.testprog.RecoveryProbe";

    private static List<String> cmd(List<String> launcherArgs, String... probeArgs) {
        return FtmpirunSystemTest.probeCmd(PROBE, launcherArgs, probeArgs);
    }

    private static void has(FtmpirunSystemTest.Result r, String line) {
        assertTrue(r.out().contains(line + "\n"), "missing '" + line + "' in\n" + r.out() + r.err());
    }

    /** Lines of rank {@code me}, in the order it printed them. */
    private static List<String> linesOf(FtmpirunSystemTest.Result r, int me) {
        return r.out().lines().filter(l -> l.startsWith("rank " + me + " ")).toList();
    }

    private static void shrinkManual(String how) throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "4", "--comm-mode", "shrink",
                "--recovery-mode", "manual"), how, "2"));
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("rank 2 (pid"), r.err());
        assertTrue(r.err().contains("the survivors recover (comm-mode shrink, recovery-mode manual)"), r.err());
        int[] newRank = {0, 1, -1, 2};
        for (int me : new int[] {0, 1, 3}) {
            has(r, "rank " + me + " recv failed: class 16 failedRank 2 state DETECTED victim UNAVAILABLE");
            has(r, "rank " + me + " send before recovery failed: class 16");
            has(r, "rank " + me + " recovered size 3 rank " + newRank[me] + " failed [2] state OK victim FAILED old FAILED");
            has(r, "rank " + me + " old comm: class 5 ERR_COMM");
            has(r, "rank " + me + " sum 4");
            has(r, "rank " + me + " finalized");
            List<String> mine = linesOf(r, me);
            int a = mine.indexOf("rank " + me + " listener A failed [2] num 1 state RECOVERED");
            int b = mine.indexOf("rank " + me + " listener B size 3");
            int rec = mine.indexOf("rank " + me + " recovered size 3 rank " + newRank[me]
                    + " failed [2] state OK victim FAILED old FAILED");
            assertTrue(a >= 0 && a < b && b < rec, "listeners in registration order, before the call returns: " + mine);
        }
        has(r, "rank 1 tag 7 got 222"); // RESET: the message of the old epoch (111) was never delivered
    }

    @Test
    void shrinkManualByRecover() throws Exception {
        shrinkManual("manual");
    }

    @Test
    void shrinkManualByCommWorldDup() throws Exception {
        shrinkManual("dup");
    }

    @Test
    void shrinkAutoRecoversInTheFailingCallThenASecondFailure() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "5", "--comm-mode", "shrink",
                "--recovery-mode", "auto"), "auto", "1", "3"));
        assertEquals(0, r.code(), r.out() + r.err());
        for (int me : new int[] {0, 2, 4}) {
            List<String> mine = linesOf(r, me);
            int a = mine.indexOf("rank " + me + " listener A failed [1] num 1 state RECOVERED");
            int caught = mine.indexOf("rank " + me + " caught class 16 size 4 state OK");
            assertTrue(a >= 0 && caught > a, "AUTO: recovery (listeners) first, then the error: " + mine);
            has(r, "rank " + me + " sum 9");
            has(r, "rank " + me + " second caught size 3 failed [2]");
            has(r, "rank " + me + " second sum 6 size 3 rank " + (me / 2));
            has(r, "rank " + me + " finalized");
        }
        has(r, "rank 2 tag 7 got 222");
    }

    @Test
    void blankKeepsTheSizeAndSkipsTheBlank() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "4", "--comm-mode", "blank"),
                "blank", "2"));
        assertEquals(0, r.code(), r.out() + r.err());
        for (int me : new int[] {0, 1, 3}) {
            has(r, "rank " + me + " recovered size 4 rank " + me + " failed [2] state OK victim FAILED old FAILED");
            has(r, "rank " + me + " blank p2p: source -2 count 0 buf -7");
            // bcast from 0; blank root returns at once (-1 untouched); MAX of -(r+1) is -1 (no invented 0);
            // PROD of r+2 over 0,1,3 is 30; MAXLOC never names the blank; the blank's gather block untouched
            has(r, "rank " + me + " blank colls: bcast 42 blank-root -1" + (me == 0 ? " max -1" : "") + " prod 30"
                    + " maxloc 30,3" + (me == 0 ? " gather [100, 101, -1, 103]" : ""));
            has(r, "rank " + me + " blank scatter " + (10 + me) + " allgather [200, 201, -1, 203]");
            has(r, "rank " + me + " sum 4");
            has(r, "rank " + me + " finalized");
        }
        has(r, "rank 1 tag 7 got 222");
    }

    @Test
    void everyRankLostEndsTheJobWithAMessage() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "2", "--comm-mode", "shrink",
                "--recovery-mode", "auto"), "all"));
        assertNotEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("every rank of the job has failed; nothing is left to recover"), r.err());
        assertFalse(r.out().contains("finalized"), r.out());
    }

    @Test
    void anMpiAbortAfterARecoveredFailureEndsTheJob() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "4", "--comm-mode", "shrink",
                "--recovery-mode", "auto"), "abort-after", "2"));
        assertEquals(7, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("rank 0 called MPI_Abort with code 7"), r.err());
        assertEquals(1, r.err().lines().filter(l -> l.contains("rank 2 (pid")).count(), "the death is reported once: " + r.err());
        assertFalse(r.out().contains("finalized"), r.out());
    }

    @Test
    void rebuildReplacesTheFailedRankWithANewProcess() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "4", "--comm-mode", "rebuild",
                "--recovery-mode", "auto"), "rebuild", "2"));
        assertTrue(r.err().contains("started a replacement for rank 2 (pid"), r.err());
        rebuilt(r);
    }

    @Test
    void rebuildTakesAWarmSpare() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "4", "-sp", "1", "--comm-mode",
                "rebuild", "--recovery-mode", "auto"), "rebuild", "2"));
        assertTrue(r.err().contains("rank 2 is taken over by a warm spare (pid"), r.err());
        assertFalse(r.err().contains("started a replacement"), r.err());
        rebuilt(r);
    }

    /**
     * {@code ft-trace=true}: every process prints its timeline of the recovery, in order; the
     * warm spare's MPI_Init registers on the control connection it made while waiting (its
     * "control connection authenticated" comes with MPI_Init, after the user's main started).
     */
    @Test
    void aWarmSpareTakeoverPrintsItsTimeline() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "4", "-sp", "1", "--comm-mode",
                "rebuild", "--recovery-mode", "auto", "--opt", "ft-trace=true"), "rebuild", "2"));
        assertTrue(r.err().contains("rank 2 is taken over by a warm spare (pid"), r.err());
        rebuilt(r);
        inOrder(r, 2, "spare assigned rank 2", "registered at the assignment as rank 2", "user main started",
                "control connection authenticated", "MPI_Init started", "endpoints exchanged",
                "pre-made connections taken from the warm spare's listener", "welcomed, generation 1");
        for (int me : new int[] {0, 1, 3}) {
            inOrder(r, me, "told of the failure of rank 2", "recovery entered, generation 1", "decided, value 1, failed 1",
                    "COMM_WORLD rebuilt, generation 1", "recovery done, generation 1");
            inOrder(r, me, "replacement announced for rank 2", "connecting to the replacement of rank 2",
                    "connected to rank 2", "COMM_WORLD rebuilt, generation 1");
        }
    }

    private static final java.util.regex.Pattern SPARE_PID = java.util.regex.Pattern.compile(
            "started warm spare process id (\\d+) as pid (\\d+)");

    /**
     * Warm spares pre-connected (issue 8, session 7): every rank connects to both spares ahead
     * of any failure; spare 5 is SIGKILLed with those connections open: every rank drops them
     * and goes on communicating (no error reaches the program); then rank 2 dies and spare 6
     * takes it over: the survivors bind rank 2 to the connections they made ahead, the spare
     * takes them from its listener, and the job ends as any REBUILD.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aRankKilledAfterASpareDiedIsTakenOverOnConnectionsMadeAhead() throws Exception {
        try (GatedJob job = new GatedJob(List.of("-np", "4", "-sp", "2", "-v", "--comm-mode", "rebuild",
                "--recovery-mode", "auto", "--opt", "ft-trace=true"), "spare-pool", "2")) {
            FtmpirunSystemTest.Run run = job.run;
            org.ftmpi.testutil.Await.until("every rank connected to both spares ahead", java.time.Duration.ofSeconds(90), () -> {
                String e = DetectionSystemTest.errSoFar(run);
                for (int me = 0; me < 4; me++) {
                    for (int spare = 5; spare <= 6; spare++) {
                        if (!e.contains("ftmpi: rank " + me + ": made a tcp connection to warm spare (process id "
                                + spare + ") ahead")) return false;
                    }
                }
                return true;
            });
            java.util.regex.Matcher m = SPARE_PID.matcher(DetectionSystemTest.errSoFar(run));
            long[] pid = new long[7];
            while (m.find()) pid[Integer.parseInt(m.group(1))] = Long.parseLong(m.group(2));
            DetectionSystemTest.signal("KILL", pid[5]);
            org.ftmpi.testutil.Await.until("every rank dropped spare 5", java.time.Duration.ofSeconds(60), () -> {
                String e = DetectionSystemTest.errSoFar(run);
                for (int me = 0; me < 4; me++) {
                    if (!e.contains("ftmpi: rank " + me + ": warm spare (process id 5) is gone")) return false;
                }
                return true;
            });
            FtmpirunSystemTest.Result r = job.open();
            assertTrue(r.err().contains("rank 2 is taken over by a warm spare (pid " + pid[6] + ", process id 6)"), r.err());
            rebuilt(r);
            for (int me : new int[] {0, 1, 3}) {
                has(r, "rank " + me + " gate passed");
                inOrder(r, me, "connecting to the replacement of rank 2",
                        "connected to rank 2 over the connection made ahead to the warm spare", "COMM_WORLD rebuilt");
            }
            inOrder(r, 2, "spare assigned rank 2", "registered at the assignment as rank 2",
                    "pre-made connections taken from the warm spare's listener: 3", "welcomed, generation 1");
            assertFalse(r.err().contains("rejected"), r.err());
        }
    }

    /**
     * A RecoveryProbe job whose ranks allreduce until a gate file exists (modes {@code
     * spare-pool}, {@code hang-replacement}): the test acts on the running job, then opens the
     * gate. Closing it ends whatever is left (the launcher, its ranks, a process the test
     * stopped) and removes the gate.
     */
    private static final class GatedJob implements AutoCloseable {
        final java.nio.file.Path gate;
        final FtmpirunSystemTest.Run run;
        /** A process the test stopped (SIGSTOP), killed at the end should the job have left it; 0 for none. */
        long stopped;

        GatedJob(List<String> launcherArgs, String mode, String victim) throws Exception {
            gate = java.nio.file.Files.createTempDirectory("ftmpi-gate").resolve("gate");
            run = new FtmpirunSystemTest.Run(cmd(launcherArgs, mode, victim, gate.toString()), null, null);
        }

        /** Stops process {@code pid} (SIGSTOP). */
        void stop(long pid) throws Exception {
            stopped = pid;
            DetectionSystemTest.signal("STOP", pid);
        }

        /** Opens the gate and waits for the job's end. */
        FtmpirunSystemTest.Result open() throws Exception {
            java.nio.file.Files.createFile(gate);
            return run.await();
        }

        @Override
        public void close() throws java.io.IOException {
            run.kill();
            if (stopped > 0) ProcessHandle.of(stopped).ifPresent(ProcessHandle::destroyForcibly);
            java.nio.file.Files.deleteIfExists(gate);
            java.nio.file.Files.deleteIfExists(gate.getParent());
        }
    }

    /** The first trace event of rank {@code me} starting with each of {@code events} exists, in increasing time. */
    private static void inOrder(FtmpirunSystemTest.Result r, int me, String... events) {
        java.util.regex.Pattern p = java.util.regex.Pattern.compile("ftmpi: trace: rank " + me + ": t=(\\d+) (.*)");
        long last = Long.MIN_VALUE;
        for (String e : events) {
            long at = r.err().lines().map(p::matcher).filter(java.util.regex.Matcher::find)
                    .filter(m -> m.group(2).startsWith(e)).mapToLong(m -> Long.parseLong(m.group(1))).min()
                    .orElseThrow(() -> new AssertionError("rank " + me + ": no trace event '" + e + "' in\n" + r.err()));
            assertTrue(at >= last, "rank " + me + ": '" + e + "' before the event ahead of it in\n" + r.err());
            last = at;
        }
    }

    @Test
    void sparesRunOutThenANewProcessIsStarted() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "4", "-sp", "1", "--comm-mode",
                "rebuild", "--recovery-mode", "auto"), "rebuild", "1", "3"));
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("rank 1 is taken over by a warm spare (pid"), r.err());
        assertTrue(r.err().contains("no warm spare is ready for rank 3; starting a new process"), r.err());
        assertTrue(r.err().contains("started a replacement for rank 3 (pid"), r.err());
        has(r, "rank 1 restarted size 4 state OK failed []");
        has(r, "rank 1 from 0 got 333");
        has(r, "rank 3 restarted size 4 state OK failed []");
        has(r, "rank 3 from 0 got 444");
        for (int me : new int[] {0, 1, 2}) {
            has(r, "rank " + me + " second caught size 4 failed [3]");
        }
        for (int me : new int[] {0, 1, 2, 3}) {
            has(r, "rank " + me + " second sum 6 size 4 rank " + me);
            has(r, "rank " + me + " finalized");
        }
    }

    @Test
    void rebuildUnderContDeliversWhatWasSentBeforeTheFailure() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "4", "--comm-mode", "rebuild",
                "--recovery-mode", "auto", "--msg-mode", "cont"), "rebuild", "2"));
        assertTrue(r.err().contains("started a replacement for rank 2 (pid"), r.err());
        rebuilt(r, 111); // CONT: rank 0's send of the old epoch returned success, so it is delivered
    }

    /** Comm-mode rebuild, rank 2 of 4 replaced: survivors keep their ranks, the replacement joins. */
    private static void rebuilt(FtmpirunSystemTest.Result r) {
        rebuilt(r, 222); // RESET: the message of the old epoch (111) is never delivered
    }

    private static void rebuilt(FtmpirunSystemTest.Result r, int tag7) {
        assertEquals(0, r.code(), r.out() + r.err());
        for (int me : new int[] {0, 1, 3}) {
            List<String> mine = linesOf(r, me);
            int a = mine.indexOf("rank " + me + " listener A failed [2] num 1 state RECOVERED");
            int caught = mine.indexOf("rank " + me + " caught class 16 size 4 state OK");
            assertTrue(a >= 0 && caught > a, mine.toString());
            has(r, "rank " + me + " recovered size 4 rank " + me + " failed [2] state OK victim OK old FAILED");
            has(r, "rank " + me + " old comm: class 5 ERR_COMM");
            has(r, "rank " + me + " sum 6");
            has(r, "rank " + me + " finalized");
        }
        has(r, "rank 1 tag 7 got " + tag7);
        has(r, "rank 2 restarted size 4 state OK failed []");
        has(r, "rank 2 sum 6");
        has(r, "rank 2 from 0 got 333");
        has(r, "rank 2 finalized");
    }

    @Test
    void rebuildWithoutResourcesEndsTheJobWithAMessage() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "3", "--comm-mode", "rebuild",
                "--recovery-mode", "auto", "--opt", "max-respawns=0"), "rebuild", "1"));
        assertNotEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("no resources to replace rank 1 (max-respawns 0 reached); the job cannot"
                + " recover (comm-mode rebuild); aborting the job"), r.err());
        assertFalse(r.out().contains("finalized"), r.out());
    }

    /**
     * A replacement takes no part in the heartbeat ring; it beats on its control connection
     * instead (every max(hb-period, hb-timeout/4)), and the controller declares it failed when
     * nothing came for hb-timeout. Here the replacement of rank 1 is SIGSTOPped while every rank
     * allreduces: it is declared failed, killed and replaced again, and the job ends as any
     * REBUILD. Before session 18 a stopped replacement was never detected: the survivors waited
     * in the allreduce for ever.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aStoppedReplacementIsDeclaredFailedAndReplacedAgain() throws Exception {
        java.util.regex.Pattern restarted = java.util.regex.Pattern.compile("rank 1 restarted pid (\\d+)");
        try (GatedJob job = new GatedJob(List.of("-np", "3", "--comm-mode", "rebuild", "--recovery-mode", "auto",
                "--hb-timeout", "1000"), "hang-replacement", "1")) {
            FtmpirunSystemTest.Run run = job.run;
            org.ftmpi.testutil.Await.until("rank 1's replacement runs", java.time.Duration.ofSeconds(60),
                    () -> restarted.matcher(run.outSoFar()).find());
            java.util.regex.Matcher m = restarted.matcher(run.outSoFar());
            assertTrue(m.find());
            long first = Long.parseLong(m.group(1));
            job.stop(first);
            org.ftmpi.testutil.Await.until("a second replacement of rank 1", java.time.Duration.ofSeconds(60),
                    () -> restarted.matcher(run.outSoFar()).results().count() >= 2);
            FtmpirunSystemTest.Result r = job.open();
            assertEquals(0, r.code(), r.out() + r.err());
            assertTrue(r.err().contains("rank 1 (pid " + first + ") sent no heartbeat on its control connection for"
                    + " 1000 ms (a replacement: stopped or hung); killed it (SIGKILL), the survivors recover"), r.err());
            for (int me = 0; me < 3; me++) {
                has(r, "rank " + me + " sum 3");
                has(r, "rank " + me + " finalized");
            }
            FtmpirunSystemTest.assertAllDead(List.of(first));
        }
    }

    /**
     * A warm spare beats on its connection to the controller while it waits; a stopped one is
     * taken out of the pool and killed, and the next failed rank gets a new process instead
     * ({@code idle}). Stopped right before it is handed a rank ({@code assigned}: the rank dies
     * at once, well inside hb-timeout), it is declared failed as that rank's process, killed,
     * and a new process replaces the rank. Before session 18 the stopped spare stayed in the
     * pool: the failed rank was handed to it and the survivors waited for its registration for
     * ever.
     */
    @ParameterizedTest
    @ValueSource(strings = {"idle", "assigned"})
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aStoppedWarmSpareIsTakenOutOfThePool(String when) throws Exception {
        boolean idle = when.equals("idle");
        String timeout = idle ? "1000" : "3000";
        try (GatedJob job = new GatedJob(List.of("-np", "4", "-sp", "1", "-v", "--hb-timeout", timeout,
                "--comm-mode", "rebuild", "--recovery-mode", "auto"), "spare-pool", "2")) {
            FtmpirunSystemTest.Run run = job.run;
            org.ftmpi.testutil.Await.until("the warm spare is ready", java.time.Duration.ofSeconds(60),
                    () -> DetectionSystemTest.errSoFar(run).contains("warm spare (process id 5) is ready"));
            java.util.regex.Matcher m = SPARE_PID.matcher(DetectionSystemTest.errSoFar(run));
            assertTrue(m.find());
            long spare = Long.parseLong(m.group(2));
            job.stop(spare);
            String silent = idle
                    ? "warm spare (pid " + spare + ", process id 5) sent no heartbeat for 1000 ms (stopped or hung);"
                            + " killed it (SIGKILL)"
                    : "rank 2 (pid " + spare + ") sent no heartbeat for 3000 ms (a warm spare taking over the rank:"
                            + " stopped or hung); killed it (SIGKILL), the survivors recover";
            if (idle) {
                org.ftmpi.testutil.Await.until("the stopped spare is declared", java.time.Duration.ofSeconds(30),
                        () -> DetectionSystemTest.errSoFar(run).contains(silent));
            }
            FtmpirunSystemTest.Result r = job.open();
            assertTrue(r.err().contains(silent), r.err());
            assertTrue(r.err().contains("started a replacement for rank 2"), r.err());
            rebuilt(r);
            FtmpirunSystemTest.assertAllDead(List.of(spare));
        }
    }

    /**
     * A rank lost before the job has started (here: it exits before MPI_Init, as with a wrong
     * class path on one host) is not replaced: there is no started job for a replacement to join.
     * Before session 18 the launcher started a replacement for each lost rank, with a table the
     * job never had.
     */
    @Test
    void aRankLostBeforeTheJobStartedIsNotReplaced() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "3", "--comm-mode", "rebuild",
                "--recovery-mode", "auto"), "crash-before-init", "1"));
        assertNotEquals(0, r.code(), r.out() + r.err());
        assertFalse(r.err().contains("started a replacement"), r.err());
        assertTrue(r.err().contains("rank 1 failed before every rank had finished MPI_Init; comm-mode rebuild"
                + " replaces ranks of a started job only; aborting the job"), r.err());
        assertFalse(r.out().contains("finalized"), r.out());
    }

    /**
     * REBUILD when the survivors compute for longer than a minute without an MPI call after the
     * death: the replacement waits for them in MPI_Init as long as they live (a note on stderr
     * after 60 s), and they recover at their next call. Until session 18 the replacement gave up
     * after 60 s and aborted the whole job ("no connection from every other rank within 60000 ms").
     * About 70 s long by design.
     */
    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void theReplacementWaitsForSurvivorsThatComputeForMoreThanAMinute() throws Exception {
        FtmpirunSystemTest.Result r = new FtmpirunSystemTest.Run(cmd(List.of("-np", "3", "--comm-mode", "rebuild",
                "--recovery-mode", "auto"), "slow", "1", "65000"), null, null).await(140);
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("ftmpi: rank 1 (a replacement) still waits for ranks [0, 2] to connect after 60 s;"
                + " each connects when its recovery starts, at its next MPI call"), r.err());
        for (int me : new int[] {0, 2}) {
            has(r, "rank " + me + " survived size 3 sum 3 after failures");
            has(r, "rank " + me + " finalized");
        }
        has(r, "rank 1 replacement size 3 sum 3");
        has(r, "rank 1 finalized");
    }

    /**
     * A replacement stopped before MPI_Init (before it registers, so before it beats): the
     * launcher finds it stopped in /proc for hb-timeout, declares it failed, kills it and starts
     * another one, and the job ends as any REBUILD. Before session 19 nothing watched a
     * replacement before its table: the survivors waited for it for ever.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aReplacementStoppedBeforeItJoinsIsDeclaredFailedAndReplacedAgain(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        replacementLostBeforeInitIsReplaced(List.of("--hb-timeout", "1000"), "stop-before-init", dir,
                "was stopped \\(process state T\\) for 1000 ms before its first heartbeat \\(stopped before it joined the job"
                        + " as a replacement\\)");
    }

    /**
     * A REBUILD replacement that hangs before MPI_Init without being stopped (here: asleep for
     * ever) is declared failed once it has not reached MPI_Init within {@code --opt
     * start-timeout}, killed and replaced; the job ends as any REBUILD. Before session 20 the
     * survivors waited for it for ever.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aReplacementThatHangsBeforeMpiInitIsDeclaredFailedAfterTheStartTimeout(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        replacementLostBeforeInitIsReplaced(List.of("--opt", "start-timeout=4000"), "hang-before-init", dir,
                "did not reach MPI_Init within 4000 ms of its start \\(process state \\w; --opt start-timeout\\) \\(it never"
                        + " joined the job as a replacement\\)");
    }

    /**
     * np 3 REBUILD, rank 1 killed; its first replacement runs {@code mode} (RecoveryProbe) before
     * MPI_Init: the launcher's line says {@code why} (a regex), a second replacement finishes the
     * job, and every rank sums and finalizes.
     */
    private static void replacementLostBeforeInitIsReplaced(List<String> extra, String mode, java.nio.file.Path dir, String why)
            throws Exception {
        List<String> args = new java.util.ArrayList<>(List.of("-np", "3", "--comm-mode", "rebuild", "--recovery-mode", "auto"));
        args.addAll(extra);
        FtmpirunSystemTest.Result r = new FtmpirunSystemTest.Run(cmd(args, mode, "1", dir.toString()), null, null).await(110);
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(java.util.regex.Pattern.compile("rank 1 \\(pid \\d+\\) " + why + "; killed it \\(SIGKILL\\), the survivors"
                + " recover").matcher(r.err()).find(), r.err());
        assertEquals(2, r.err().lines().filter(l -> l.contains("started a replacement for rank 1")).count(), r.err());
        for (int me = 0; me < 3; me++) {
            has(r, "rank " + me + " sum 3");
            has(r, "rank " + me + " finalized");
        }
    }

    /**
     * A rank that hangs before MPI_Init (asleep, not stopped) while the others wait in MPI_Init
     * for the job's table: the job ends with a message once it has not registered within
     * {@code --opt start-timeout}. The ranks that registered in time are not blamed.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aRankThatHangsBeforeMpiInitEndsTheJobAfterTheStartTimeout() throws Exception {
        FtmpirunSystemTest.Result r = new FtmpirunSystemTest.Run(cmd(List.of("-np", "3", "--opt", "start-timeout=4000"),
                "hang-before-init-rank", "1"), null, null).await(110);
        assertNotEquals(0, r.code(), r.out() + r.err());
        assertTrue(java.util.regex.Pattern.compile("rank 1 \\(pid \\d+\\) did not reach MPI_Init within 4000 ms of its start"
                + " \\(process state \\w; --opt start-timeout\\) \\(it never registered; the job had not started\\); aborting"
                + " the job").matcher(r.err()).find(), r.err());
        assertFalse(java.util.regex.Pattern.compile("rank [02] \\(pid \\d+\\) did not reach").matcher(r.err()).find(), r.err());
    }

    /**
     * A rank stopped before MPI_Init: the others wait in MPI_Init for the job's table, which
     * needs every rank. The launcher finds it stopped for hb-timeout and ends the job with a
     * message, under ABORT and under REBUILD alike (no started job to recover). Before session 19
     * the job waited for ever.
     */
    @ParameterizedTest
    @ValueSource(strings = {"abort", "rebuild"})
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aRankStoppedBeforeTheJobStartedEndsTheJob(String commMode) throws Exception {
        FtmpirunSystemTest.Result r = new FtmpirunSystemTest.Run(cmd(List.of("-np", "3", "--comm-mode", commMode,
                "--recovery-mode", "auto", "--hb-timeout", "1000"), "stop-before-init-rank", "1"), null, null).await(110);
        assertNotEquals(0, r.code(), r.out() + r.err());
        String stopped = "was stopped (process state T) for 1000 ms before its first heartbeat (stopped before the job started)";
        assertTrue(r.err().contains(commMode.equals("abort") ? stopped + "; aborting the job (comm-mode abort)"
                : "rank 1 " + stopped + "; comm-mode rebuild replaces ranks of a started job only; aborting the job"), r.err());
        assertFalse(r.err().contains("started a replacement"), r.err());
        assertFalse(r.out().contains("finalized"), r.out());
    }

    @Test
    void aReplacementThatEndsBeforeMpiInitIsNotReplacedAgain() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "3", "--comm-mode", "rebuild",
                "--recovery-mode", "auto"), "crashing-replacement", "1"));
        assertNotEquals(0, r.code(), r.out() + r.err());
        assertEquals(1, r.err().lines().filter(l -> l.contains("started a replacement for rank 1")).count(), r.err());
        assertTrue(r.err().contains("the replacement of rank 1 ended before MPI_Init; another one would fail the same"
                + " way; the job cannot recover (comm-mode rebuild); aborting the job"), r.err());
        assertFalse(r.out().contains("finalized"), r.out());
    }

    @Test
    void unusedWarmSparesEndWithTheJob() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(FtmpirunSystemTest.cmd(List.of("-np", "2", "-sp", "2",
                "--comm-mode", "rebuild"), "hello"));
        assertEquals(0, r.code(), r.out() + r.err());
        has(r, "rank 0 finalized");
        has(r, "rank 1 finalized");
        assertFalse(r.err().contains("spare"), r.err());
    }

    @Test
    void twoSimultaneousDeaths() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "5", "--comm-mode", "shrink",
                "--recovery-mode", "auto"), "two", "1", "2"));
        assertEquals(0, r.code(), r.out() + r.err());
        survivedShrunk(r, 7, new int[] {0, 3, 4});
    }

    /**
     * REBUILD with two ranks killed at once, one taken over by the warm spare and one by a new
     * process: each replacement connects to the other one (the one that registers second finds
     * the first in its table; the first connects to it when it is announced, before its MPI_Init
     * returns). Before, the first replacement's MPI_Init failed: "no transport that reaches rank".
     */
    @Test
    void twoSimultaneousDeathsUnderRebuild() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "5", "-sp", "1", "--comm-mode",
                "rebuild", "--recovery-mode", "auto"), "two", "1", "2"));
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("is taken over by a warm spare (pid"), r.err());
        assertTrue(r.err().contains("starting a new process"), r.err());
        for (int me : new int[] {1, 2}) has(r, "rank " + me + " restarted size 5 state OK failed []");
        allFiveSumToTen(r, new int[] {0, 3, 4}, new int[] {1, 2});
    }

    @Test
    void aDeathDuringTheRecovery() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "5", "--comm-mode", "shrink",
                "--recovery-mode", "auto"), "during", "1", "3"));
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("rank 3 (pid"), r.err());
        survivedShrunk(r, 6, new int[] {0, 2, 4});
    }

    /**
     * A second survivor dies inside the recovery from the first death: as it is about to
     * contribute to the recovery's agreement (the others wait in it for its contribution), and
     * once the agreement has decided without it in the failed set (the others rebuild a
     * COMM_WORLD that still holds it, and recover again).
     */
    @ParameterizedTest
    @ValueSource(strings = {"recovery.agreement", "recovery.agreed"})
    void aDeathInsideTheRecoveryAgreement(String step) throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "5", "--comm-mode", "shrink",
                "--recovery-mode", "auto", "--inject", "rank=3,at-step=" + step), "step", "1"));
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(FtmpirunSystemTest.killedAtStep(r.err(), 3, step), r.err());
        survivedShrunk(r, 6, new int[] {0, 2, 4});
    }

    /**
     * REBUILD: a second survivor dies once the recovery's agreement has decided (the others
     * already wait for the first victim's replacement): both are replaced, the second in a second
     * round in which the first one's replacement takes part, and every rank, replacements
     * included, reduces over all 5. One warm spare: rank 1 takes it (ranks wait for spares in
     * the order they died) and rank 3 a new process after the spare wait, so rank 1's replacement
     * always registers first.
     */
    @Test
    void aDeathAfterTheRecoveryAgreementUnderRebuild() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "5", "-sp", "1", "--comm-mode",
                "rebuild", "--recovery-mode", "auto", "--inject", "rank=3,at-step=recovery.agreed"), "step", "1"));
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(FtmpirunSystemTest.killedAtStep(r.err(), 3, "recovery.agreed"), r.err());
        assertTrue(r.err().contains("rank 1 is taken over by a warm spare"), r.err());
        allFiveSumToTen(r, new int[] {0, 2, 4}, new int[] {1, 3});
    }

    /**
     * The same with new processes for both (no spares): rank 3's replacement registers first in
     * about half the runs, and the controller then holds it back until rank 1's has joined
     * (session 18; before, 2 to 4 runs in 6 were aborted after a 60 s accept timeout in rank 3's
     * MPI_Init). ControllerTest checks the ordering itself deterministically.
     */
    @Test
    void aDeathAfterTheRecoveryAgreementUnderRebuildWithNewProcesses() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "5", "--comm-mode",
                "rebuild", "--recovery-mode", "auto", "--inject", "rank=3,at-step=recovery.agreed"), "step", "1"));
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(FtmpirunSystemTest.killedAtStep(r.err(), 3, "recovery.agreed"), r.err());
        assertTrue(r.err().contains("started a replacement for rank 3"), r.err());
        allFiveSumToTen(r, new int[] {0, 2, 4}, new int[] {1, 3});
    }

    /** RecoveryProbe {@code two}/{@code step} under REBUILD at np 5: survivors and replacements all reduced over 5 ranks and finalized. */
    private static void allFiveSumToTen(FtmpirunSystemTest.Result r, int[] survivors, int[] replacements) {
        for (int me : survivors) {
            has(r, "rank " + me + " survived size 5 sum 10 after failures");
            has(r, "rank " + me + " finalized");
        }
        for (int me : replacements) {
            has(r, "rank " + me + " replacement size 5 sum 10");
            has(r, "rank " + me + " finalized");
        }
    }

    /** RecoveryProbe {@code two}/{@code during}/{@code step} under SHRINK at np 5: the three survivors reduced to {@code sum} and finalized. */
    private static void survivedShrunk(FtmpirunSystemTest.Result r, int sum, int[] survivors) {
        for (int me : survivors) {
            has(r, "rank " + me + " survived size 3 sum " + sum + " after failures");
            has(r, "rank " + me + " finalized");
        }
    }
}
