package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * FT-MPI message mode CONT through {@code bin/ftmpirun} with a real SIGKILL (program {@code
 * testprog.ContProbe}; what it does is described there), and the FTMPI_* attributes.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ContSystemTest {
    private static void has(FtmpirunSystemTest.Result r, String line) {
        assertTrue(r.out().contains(line + "\n"), "missing '" + line + "' in\n" + r.out() + r.err());
    }

    @Test
    void contCompletesWhatReturnedSuccessAcrossAShrinkRecovery() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(FtmpirunSystemTest.probeCmd(
                "org.ftmpi.runtime.testprog.ContProbe", List.of("-np", "4", "--comm-mode", "shrink",
                        "--recovery-mode", "manual", "--msg-mode", "cont")));
        assertEquals(0, r.code(), r.out() + r.err());
        for (int me : new int[] {0, 2, 3}) {
            // recovery MANUAL (1), comm SHRINK (3), msg CONT (1), coll NONATOMIC (1), one failure, its ranks
            has(r, "rank " + me + " attrs recovery 1 comm 3 msg 1 coll 1 failed 1 class 16 'FT-MPI recovery:"
                    + " failed processes (ranks in MPI.COMM_WORLD before the recovery): 1'");
            has(r, "rank " + me + " old dup class 5");
            has(r, "rank " + me + " sum 5");
            has(r, "rank " + me + " finalized");
        }
        has(r, "rank 0 blocking recv failed: class 16");
        has(r, "rank 0 tag 13 got 1301 1302"); // the interrupted receive was taken back: nothing swallowed
        has(r, "rank 3 test interrupted pending true");
        has(r, "rank 3 tag 5 got 301 from 1");  // sent before the failure by process 2, now rank 1
        has(r, "rank 3 tag 6 ok from 1");       // a rendezvous started before the failure
        has(r, "rank 2 isend tag 6 done");
        has(r, "rank 3 tag 14 ok from 1");      // the blocking send that was interrupted
        has(r, "rank 3 tag 8 got 808 from 0");  // posted before the failure, sent after it
        has(r, "rank 3 persistent got 2020 from 1");
        has(r, "rank 3 dup tag 4 got 404 from 1"); // the re-created dup has the old dup's context id
        has(r, "rank 0 unresolved 1 same true cancelled true");
    }
}
