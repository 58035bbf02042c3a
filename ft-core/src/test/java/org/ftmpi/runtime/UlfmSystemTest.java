package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code bin/ftmpirun --recovery-mode ignore} with a real {@code kill -9}: the survivors get
 * errors instead of hangs, shrink, compute on the shrunk communicator and finish; the job's exit
 * status names the dead rank (128 + 9).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UlfmSystemTest {
    private static final String PROBE = "org.ftmpi.runtime.testprog.UlfmProbe";

    private static List<String> cmd(List<String> launcherArgs, String... probeArgs) {
        List<String> c = new ArrayList<>();
        c.add(FtmpirunSystemTest.root().resolve("bin/ftmpirun").toString());
        c.addAll(launcherArgs);
        c.addAll(List.of("java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss512k",
                "-cp", FtmpirunSystemTest.testClasses(), PROBE));
        c.addAll(List.of(probeArgs));
        return c;
    }

    @Test
    void survivorsGetProcFailedFromARecvThenShrinkAndAllreduce() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "4", "--recovery-mode", "ignore",
                "--opt", "ulfm-error-classes=true"), "recv", "2"));
        assertEquals(128 + 9, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("rank 2 (pid"), r.err());
        assertTrue(r.err().contains("the survivors continue (recovery-mode ignore)"), r.err());
        for (int me : new int[] {0, 1, 3}) {
            assertTrue(r.out().contains("rank " + me + " recv failed: class 75 failedRank 2"), r.out() + r.err());
            assertTrue(r.out().contains("rank " + me + " shrunk size 3 rank " + (me < 2 ? me : 2) + " sum 4"),
                    r.out() + r.err());
            assertTrue(r.out().contains("rank " + me + " finalized"), r.out());
        }
    }

    @Test
    void deathDuringAllreduceThenRevokeAgreeShrink() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "4", "--recovery-mode", "ignore"),
                "revoke", "1"));
        assertEquals(128 + 9, r.code(), r.out() + r.err());
        for (int me : new int[] {0, 2, 3}) {
            assertTrue(r.out().contains("rank " + me + " allreduce failed: class 16")
                    || r.out().contains("rank " + me + " allreduce failed: class 77"), r.out() + r.err());
            assertTrue(r.out().contains("rank " + me + " revoked: class 77"), r.out() + r.err());
            assertTrue(r.out().contains("rank " + me + " unacknowledged agree raised class 16 flag 0"), r.out() + r.err());
            assertTrue(r.out().contains("rank " + me + " agree 0 failed 1"), r.out() + r.err());
            assertTrue(r.out().contains("rank " + me + " shrunk size 3 rank " + (me == 0 ? 0 : me - 1) + " sum 5"),
                    r.out() + r.err());
            assertTrue(r.out().contains("rank " + me + " finalized"), r.out());
        }
    }

    @Test
    void defaultRecoveryModeStillAbortsTheJob() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(List.of("-np", "3"), "recv", "1"));
        assertEquals(128 + 9, r.code(), r.err());
        assertTrue(r.err().contains("aborting the job"), r.err());
        assertTrue(!r.out().contains("finalized"), r.out());
    }
}
