package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.ftmpi.testutil.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The robust-futex death watch ({@link DeathWatch}) through the real bin/ftmpirun, with real
 * processes and signals. With {@code -v} the controller logs the watch's line ({@code death
 * watch: rank R ... died}) and waitpid's status. Which of its two threads logs first is not
 * asserted: the watch's notice to the survivors goes out without the job's monitor, and
 * waitpid's report may take that monitor before the watch's thread does (seen once in a full
 * suite at low load); the watch line then says that waitpid declared the rank first.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DeathWatchSystemTest {
    private static final List<String> SURVIVE = List.of("-v", "--recovery-mode", "ignore");

    private static List<String> detect(List<String> launcherArgs, int expected, long holdMs) {
        return DetectionSystemTest.cmd(launcherArgs, expected, holdMs);
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> c = new ArrayList<>(a);
        c.addAll(b);
        return c;
    }

    private static Path watchFile(long jobId) {
        return Path.of(SharedMemoryFiles.DEFAULT_DIR, SharedMemoryFiles.prefix(jobId) + DeathWatch.FILE_SUFFIX);
    }

    @Test
    void aSigkilledRankIsSeenByTheWatchBeforeWaitpidAndReportedOnceWithItsStatus() throws Exception {
        FtmpirunSystemTest.Run run = new FtmpirunSystemTest.Run(detect(concat(List.of("-np", "4"), SURVIVE), 1, 20_000), null, null);
        DetectionSystemTest.Ready ready = DetectionSystemTest.awaitReady(run, 4);
        Path file = watchFile(ready.jobId());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        long victim = ready.pids().get(2);
        DetectionSystemTest.signal("KILL", victim);
        FtmpirunSystemTest.Result r = run.await();
        assertEquals(128 + 9, r.code(), r.err());
        DetectionSystemTest.assertEverySurvivorToldOnce(r.out(), 4, List.of(2));
        assertTrue(r.out().contains("failed 2 ") && r.out().contains("died (its process ended before MPI_Finalize)"), r.out());
        String watched = "death watch: rank 2 (pid " + victim + ", process id 3) died before MPI_Finalize";
        String status = "death watch: rank 2 (pid " + victim + ") killed by signal 9 (SIGKILL); waitpid returned ";
        assertTrue(r.err().contains(watched), r.err());
        assertTrue(r.err().contains(status), r.err());
        String line = "rank 2 (pid " + victim + ") was killed by signal 9 (SIGKILL); the survivors continue (recovery-mode ignore)";
        assertEquals(1, r.err().lines().filter(l -> l.contains(line)).count(), r.err());
        assertFalse(Files.exists(file), "the watch file is removed with the job");
        FtmpirunSystemTest.assertAllDead(ready.allPids());
    }

    /**
     * Issue 7, session 7: a second SIGKILL, sent as soon as every survivor knows of the first
     * (while the first victim's teardown and its waitpid thread may still run in the controller),
     * is reported through the death watch too (its line, besides waitpid's status).
     */
    @Test
    void aSecondSigkillIsReportedThroughTheWatchToo() throws Exception {
        FtmpirunSystemTest.Run run = new FtmpirunSystemTest.Run(detect(concat(List.of("-np", "4"), SURVIVE), 2, 30_000), null, null);
        DetectionSystemTest.Ready ready = DetectionSystemTest.awaitReady(run, 4);
        long first = ready.pids().get(3), second = ready.pids().get(2);
        DetectionSystemTest.signal("KILL", first);
        Await.until("every survivor told of rank 3", Duration.ofSeconds(30), () -> {
            String out = run.outSoFar();
            return DetectionSystemTest.notices(out, 0, 3) + DetectionSystemTest.notices(out, 1, 3)
                    + DetectionSystemTest.notices(out, 2, 3) == 3;
        });
        DetectionSystemTest.signal("KILL", second);
        FtmpirunSystemTest.Result r = run.await();
        assertEquals(128 + 9, r.code(), r.err());
        DetectionSystemTest.assertEverySurvivorToldOnce(r.out(), 4, List.of(3, 2));
        long[][] deaths = {{3, first, 4}, {2, second, 3}};
        for (long[] d : deaths) {
            String watched = "death watch: rank " + d[0] + " (pid " + d[1] + ", process id " + d[2]
                    + ") died before MPI_Finalize; declared failed ";
            String status = "death watch: rank " + d[0] + " (pid " + d[1] + ") killed by signal 9 (SIGKILL); waitpid returned ";
            assertTrue(r.err().contains(watched), "rank " + d[0] + " through the watch:\n" + r.err());
            // The watch sends its notice before it takes the job's monitor; waitpid's report can
            // take the monitor first (the watch then says so), and waitpid's own line has the status.
            String waitpidFirst = watched + "by waitpid's report first (the watch's notice to the survivors had gone out already)";
            String waitpidLine = "rank " + d[0] + " (pid " + d[1] + ") killed by signal 9 (SIGKILL)";
            assertTrue(r.err().contains(status) || r.err().contains(waitpidFirst) && r.err().contains(waitpidLine),
                    "rank " + d[0] + " through waitpid:\n" + r.err());
        }
        FtmpirunSystemTest.assertAllDead(ready.allPids());
    }

    @Test
    void anOrderlyEndIsNoFailure() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(detect(List.of("-np", "3", "-v"), 0, 200));
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("death watch: robust mutexes in "), r.err());
        assertFalse(r.err().contains("death watch: rank"), r.err());
        assertFalse(r.err().contains("does not hold its slot"), r.err());
        assertEquals(3, r.out().lines().filter(l -> l.startsWith("done rank")).count(), r.out());
    }

    @Test
    void anExitBeforeFinalizeIsReportedWithItsStatusByWaitpid() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(FtmpirunSystemTest.cmd(List.of("-np", "2", "-v"), "throw", "0"));
        assertEquals(1, r.code(), r.err());
        assertTrue(r.err().contains("exited with status 1 before MPI_Finalize; aborting the job"), r.err());
        assertFalse(r.err().contains("death watch: rank"), "an exit is not a death the watch reports:\n" + r.err());
    }

    @Test
    void switchedOffDeathsAreSeenThroughWaitpid() throws Exception {
        FtmpirunSystemTest.Run run = new FtmpirunSystemTest.Run(detect(concat(List.of("-np", "3", "--opt",
                "death-watch=false"), SURVIVE), 1, 20_000), null, null);
        DetectionSystemTest.Ready ready = DetectionSystemTest.awaitReady(run, 3);
        assertFalse(Files.exists(watchFile(ready.jobId())));
        DetectionSystemTest.signal("KILL", ready.pids().get(1));
        FtmpirunSystemTest.Result r = run.await();
        assertTrue(r.err().contains("death watch: off (--opt death-watch=false); deaths are seen through waitpid"), r.err());
        assertFalse(r.err().contains("death watch: rank"), r.err());
        assertTrue(r.err().contains("rank 1 (pid " + ready.pids().get(1) + ") was killed by signal 9 (SIGKILL); the survivors continue"), r.err());
        DetectionSystemTest.assertEverySurvivorToldOnce(r.out(), 3, List.of(1));
        FtmpirunSystemTest.assertAllDead(ready.allPids());
    }

    private static final Pattern SPARE = Pattern.compile("started warm spare process id (\\d+) as pid (\\d+)");

    @Test
    void aSigkilledWarmSpareIsSeenAndASpareThatTookOverARankIsWatchedAsThatRank() throws Exception {
        // ranks 1..3, spares 4 and 5; rank 1 is killed, a spare takes it over, and is killed in turn
        FtmpirunSystemTest.Run run = new FtmpirunSystemTest.Run(detect(List.of("-np", "3", "-sp", "2", "-v",
                "--comm-mode", "rebuild", "--recovery-mode", "auto"), 2, 8_000), null, null);
        DetectionSystemTest.Ready ready = DetectionSystemTest.awaitReady(run, 3);
        Await.until("both spares ready", Duration.ofSeconds(30), () -> {
            String e = DetectionSystemTest.errSoFar(run);
            return e.contains("warm spare (process id 4) is ready") && e.contains("warm spare (process id 5) is ready");
        });
        Matcher m = SPARE.matcher(DetectionSystemTest.errSoFar(run));
        long[] sparePid = new long[6];
        while (m.find()) sparePid[Integer.parseInt(m.group(1))] = Long.parseLong(m.group(2));
        DetectionSystemTest.signal("KILL", ready.pids().get(1));
        Await.until("rank 1 taken over", Duration.ofSeconds(30),
                () -> DetectionSystemTest.errSoFar(run).contains("rank 1 is taken over by a warm spare"));
        long takerPid = DetectionSystemTest.errSoFar(run).contains("(pid " + sparePid[4] + ", process id 4)") ? sparePid[4] : sparePid[5];
        long takerId = takerPid == sparePid[4] ? 4 : 5;
        long other = takerId == 4 ? sparePid[5] : sparePid[4];
        Await.until("the spare registered as rank 1", Duration.ofSeconds(30),
                () -> DetectionSystemTest.errSoFar(run).contains("rank 1 rejoined as process " + takerId));
        DetectionSystemTest.signal("KILL", takerPid);
        FtmpirunSystemTest.Result r = run.await();
        assertTrue(r.err().contains("death watch: rank 1 (pid " + ready.pids().get(1) + ", process id 2) died"), r.err());
        assertTrue(r.err().contains("death watch: rank 1 (pid " + takerPid + ", process id " + takerId + ") died"), r.err());
        assertTrue(r.err().contains("rank 1 (pid " + takerPid + ") was killed by signal 9 (SIGKILL); the survivors recover"), r.err());
        assertTrue(r.err().contains("rank 1 is taken over by a warm spare (pid " + other), r.err());
        for (int s : new int[] {0, 2}) {
            assertEquals(2, DetectionSystemTest.notices(r.out(), s, 1), "two deaths of rank 1 at rank " + s + ":\n" + r.out());
        }
        assertEquals(0, r.code(), r.err());
        List<Long> all = new ArrayList<>(ready.allPids());
        all.add(sparePid[4]);
        all.add(sparePid[5]);
        FtmpirunSystemTest.assertAllDead(all);
    }

    @Test
    void anUnusedWarmSpareKilledIsSeenByTheWatch() throws Exception {
        FtmpirunSystemTest.Run run = new FtmpirunSystemTest.Run(detect(List.of("-np", "2", "-sp", "1", "-v",
                "--comm-mode", "rebuild", "--recovery-mode", "auto"), 0, 30_000), null, null);
        DetectionSystemTest.Ready ready = DetectionSystemTest.awaitReady(run, 2);
        Await.until("the spare ready", Duration.ofSeconds(30),
                () -> DetectionSystemTest.errSoFar(run).contains("warm spare (process id 3) is ready"));
        Matcher m = SPARE.matcher(DetectionSystemTest.errSoFar(run));
        assertTrue(m.find());
        long spare = Long.parseLong(m.group(2));
        // killed before the controller's waiter runs, waitpid may report the spare first (then
        // the watch has nothing left to report): kill it once it is watched
        Await.until("the spare watched", Duration.ofSeconds(30),
                () -> DetectionSystemTest.errSoFar(run).contains("death watch: watching process id 3"));
        DetectionSystemTest.signal("KILL", spare);
        Await.until("the watch saw the spare die", Duration.ofSeconds(30),
                () -> DetectionSystemTest.errSoFar(run).contains("death watch: warm spare (process id 3, pid " + spare + ") died"));
        run.p.destroy(); // SIGTERM to the launcher ends the job
        FtmpirunSystemTest.Result r = run.await();
        assertEquals(143, r.code(), r.err());
        assertFalse(Files.exists(watchFile(ready.jobId())), "removed after a SIGTERM too");
        List<Long> all = new ArrayList<>(ready.allPids());
        all.add(spare);
        FtmpirunSystemTest.assertAllDead(all);
    }
}
