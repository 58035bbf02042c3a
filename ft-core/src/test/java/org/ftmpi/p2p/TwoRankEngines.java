package org.ftmpi.p2p;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.util.Map;
import org.ftmpi.runtime.LocalJobRuntime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** Tests of two engines of a threads-as-ranks job under {@code --recovery-mode ignore}, made afresh for each test. */
abstract class TwoRankEngines {
    LocalJobRuntime job;
    Engine[] e;
    /** Buffers of the test; shared: the progress agents touch them too. */
    Arena arena;

    @BeforeEach
    void start() throws Exception {
        job = new LocalJobRuntime(2, Map.of("recovery-mode", "ignore"));
        e = LocalEngines.start(job);
        arena = Arena.ofShared();
    }

    @AfterEach
    void stop() {
        LocalEngines.closeAll(e);
        arena.close();
    }

    /** {@code r} completed with the process-failure error (ERR_OTHER, the default) naming world rank {@code failed}. */
    static void assertFailedBecauseOf(int failed, Request r) {
        assertTrue(r.isComplete(), "an operation that depends on failed rank " + failed + " is still pending");
        assertEquals(ErrorClass.ERR_OTHER, r.errorClass(), r.errorMessage());
        assertEquals(failed, r.failedRank());
    }
}
