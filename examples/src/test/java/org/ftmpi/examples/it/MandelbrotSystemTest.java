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
 * recv, send, recv, ..., so its call 2k-1 is the receive of its k-th task: call 3 (k 2 of 20)
 * and call 35 (k 18 of 20). With 4 workers (15 tasks each) two of them die at once at call 15
 * (k 8 of 15).
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
                assertTrue(r.err().contains("injecting fault: SIGKILL to rank " + rank), r.toString());
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
        assertEquals(faultFree, run("--inject", "rank=2,at-call=3").group(1), "failure at ~10%");
        assertEquals(faultFree, run("--inject", "rank=2,at-call=35").group(1), "failure at ~90%");
    }

    @Test
    void twoWorkersLostAtOnceStillGiveTheFaultFreeImage() throws Exception {
        String faultFree = run().group(1); // the image does not depend on the number of workers
        assertEquals(faultFree, run(5, "--inject", "rank=2,at-call=15", "--inject", "rank=3,at-call=15").group(1));
    }
}
