package org.ftmpi.examples.it;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a user does from a fresh checkout: compile Open MPI Java programs with bin/mpijavac, run
 * them with bin/ftmpirun, and see a killed rank end the job instead of hanging it.
 */
@Timeout(180)
class LauncherSystemTest {

    @Test
    void helloExchangeVerifiesOnFourRanks() throws Exception {
        Launch.Result r = Launch.run(Launch.ROOT, 120, "ftmpirun", "-np", "4", "org.ftmpi.examples.HelloExchange");
        assertEquals(0, r.exit(), r.toString());
        assertTrue(r.out().contains("OK: all checks passed on every rank"), r.toString());
    }

    @Test
    void openMpiJavaProgramsCompileWithMpijavacAndRunUnchanged(@TempDir Path dir) throws Exception {
        for (String name : List.of("Ring", "PingPong", "ProbeAny", "VectorStruct")) {
            Files.copy(Launch.ROOT.resolve("examples/openmpi-java/" + name + ".java"), dir.resolve(name + ".java"));
        }
        Launch.Result c = Launch.run(dir, 120, "mpijavac", "Ring.java", "PingPong.java", "ProbeAny.java",
                "VectorStruct.java");
        assertEquals(0, c.exit(), c.toString());

        Launch.Result ring = Launch.run(dir, 120, "ftmpirun", "-np", "4", "java", "Ring");
        assertEquals(0, ring.exit(), ring.toString());
        assertTrue(ring.out().contains("Process 0 decremented value: 0"), ring.toString());
        for (int rank = 0; rank < 4; rank++) {
            assertTrue(ring.out().contains("Process " + rank + " exiting"), ring.toString());
        }

        Launch.Result pp = Launch.run(dir, 120, "ftmpirun", "-n", "4", "java", "-Xmx256m", "PingPong");
        assertEquals(0, pp.exit(), pp.toString());
        for (int rank = 0; rank < 4; rank++) {
            assertTrue(pp.out().contains("rank " + rank + ": 100 ping-pong rounds with rank " + (rank ^ 1) + " OK"),
                    pp.toString());
        }

        Launch.Result probe = Launch.run(dir, 120, "ftmpirun", "-np", "4", "ProbeAny");
        assertEquals(0, probe.exit(), probe.toString());
        assertTrue(probe.out().contains("total 6000"), probe.toString());

        Launch.Result vs = Launch.run(dir, 120, "ftmpirun", "-np", "4", "java", "VectorStruct");
        assertEquals(0, vs.exit(), vs.toString());
        for (int rank = 1; rank < 4; rank++) {
            assertTrue(vs.out().contains("rank " + rank + ": column " + rank + " and 5 particles OK"), vs.toString());
        }
        assertTrue(vs.out().contains("VectorStruct: all ranks OK"), vs.toString());
    }

    @Test
    void lessCommonOpenMpiCallsRunAndCallErrhandlerAbortsUnderErrorsAreFatal(@TempDir Path dir) throws Exception {
        Files.copy(Launch.ROOT.resolve("examples/openmpi-java/CommExtras.java"), dir.resolve("CommExtras.java"));
        Launch.Result c = Launch.run(dir, 120, "mpijavac", "CommExtras.java");
        assertEquals(0, c.exit(), c.toString());
        Launch.Result r = Launch.run(dir, 120, "ftmpirun", "-np", "4", "java", "CommExtras");
        assertTrue(r.out().contains("CommExtras: all ranks OK"), r.toString());
        assertNotEquals(0, r.exit(), r.toString());
        assertTrue(r.err().contains("callErrhandler"), r.toString());
        assertTrue(r.err().contains("MPI_ERR_OTHER"), r.toString());
        assertFalse(r.out().contains("survived"), r.toString());
    }

    @Test
    void sigkillOfOneRankAbortsTheJobNamingItAndLeavesNoProcess() throws Exception {
        Launch.Result r = Launch.run(Launch.ROOT, 60, "ftmpirun", "-np", "4", "-cp", Launch.testClasspath(),
                "org.ftmpi.examples.it.KillOneRank");
        assertNotEquals(0, r.exit(), r.toString());
        assertTrue(r.err().contains("rank 2"), r.toString());
        assertTrue(r.err().contains("SIGKILL"), r.toString());
        List<Long> pids = new ArrayList<>();
        Matcher m = Pattern.compile("pid (\\d+) rank").matcher(r.out());
        while (m.find()) pids.add(Long.parseLong(m.group(1)));
        assertEquals(4, pids.size(), r.toString());
        for (long pid : pids) {
            ProcessHandle.of(pid).ifPresent(h -> fail("rank process " + pid + " survived the job: " + h.info()));
        }
    }

    @Test
    void errorsAreFatalAbortsWithTheErrorClass() throws Exception {
        Launch.Result r = Launch.run(Launch.ROOT, 60, "ftmpirun", "-np", "2", "-cp", Launch.testClasspath(),
                "org.ftmpi.examples.it.BadRank");
        assertNotEquals(0, r.exit(), r.toString());
        assertTrue(r.err().contains("MPI_ERR_RANK"), r.toString());
        assertTrue(r.err().contains("dest 99"), r.toString());
    }
}
