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
 * The master/worker Mandelbrot example (BLANK + CONT) through bin/ftmpirun: with a worker killed
 * at about 10% and at about 90% of the run the image equals the fault-free one. 240 rows in tasks
 * of 4 rows are 60 tasks, handed round-robin to 3 workers: 20 each; a worker's MPI calls are
 * recv, send, recv, ..., so its call 2k is the send of its k-th result. Every kill is injected
 * there: the worker has taken task k and dies before returning it, so that task must be handed
 * out again whatever the timing. (Killed at a receive instead, a worker may already have
 * returned every task it was given, and then nothing needs re-issuing: CI saw "reissued 0" on a
 * loaded machine.) Call 4 is k 2 of 20, call 36 is k 18 of 20. With 4 workers (15 tasks each)
 * two of them die at once at call 16 (k 8 of 15); the first to die has had no recovery before,
 * so its call 16 is a send (the other's may be shifted by a repeated call).
  */
@Timeout(300)
class MandelbrotSystemTest {
    private static Matcher run(String... inject) throws Exception {
        return run(4, inject);
    }

    private static Matcher run(int np, String... inject) throws Exception {
        Pattern line = Pattern.compile("mandelbrot 256x240 maxIter 500 tasks 60 workers " + (np - 1)
                + " crc32 (\\w+) reissued (\\d+)");
        List<String> cmd = new ArrayList<>(List.of("ftmpirun", "-np", Integer.toString(np), "--comm-mode", "blank", "--msg-mode", "cont",
                "--recovery-mode", "auto", "--hb-timeout", "5000")); // a loaded machine must not fake a failure
        cmd.addAll(List.of(inject));
        cmd.addAll(List.of("org.ftmpi.examples.Mandelbrot", "256", "240", "500", "4"));
        Launch.Result r = Launch.run(Launch.ROOT, 120, cmd.toArray(new String[0]));
        assertEquals(0, r.exit(), r.toString());
        Matcher m = line.matcher(r.out());
        assertTrue(m.find(), r.toString());
        if (inject.length > 0) {
            for (int i = 1; i < inject.length; i += 2) {
                String rank = inject[i].substring("rank=".length(), inject[i].indexOf(','));
                Launch.assertKilled(r, Integer.parseInt(rank));
            }
            assertTrue(r.err().contains("the survivors recover (comm-mode blank, recovery-mode auto)"), r.toString());
            assertTrue(Integer.parseInt(m.group(2)) > 0, "the lost worker's tasks were handed out again: " + r);
        } else {
            assertEquals("0", m.group(2), r.toString());
        }
        return m;
    }

    @Test
    void aLostWorkerAt10And90PercentStillGivesTheFaultFreeImage() throws Exception {
        String faultFree = run().group(1);
        assertEquals(faultFree, run("--inject", "rank=2,at-call=4").group(1), "failure at ~10%");
        assertEquals(faultFree, run("--inject", "rank=2,at-call=36").group(1), "failure at ~90%");
    }

    @Test
    void twoWorkersLostAtOnceStillGiveTheFaultFreeImage() throws Exception {
        String faultFree = run().group(1); // the image does not depend on the number of workers
        assertEquals(faultFree, run(5, "--inject", "rank=2,at-call=16", "--inject", "rank=3,at-call=16").group(1));
    }
}
