package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The mark an {@code --inject at-call} victim leaves before it signals itself, which the
 * launcher's death line reads: private to the user, one per process, removed with the job's
 * shared-memory files.
 */
class InjectionMarkTest {
    private static JobInfo job(Path dir, long jobId) {
        return new JobInfo(jobId, 2, 4, new long[] {1, 2, 3, 4}, new String[4], List.of(), new byte[32],
                Map.of(SharedMemoryFiles.DIR_OPTION, dir.toString()));
    }

    @Test
    void aMarkIsReadBackByProcessIsPrivateAndGoesWithTheJobsFiles(@TempDir Path dir) throws Exception {
        long jobId = 0x1234_5678_9abcL;
        FaultInjection.markInjecting(job(dir, jobId), 4242, "SIGKILL at its MPI call 72 (allReduce)");
        assertEquals("SIGKILL at its MPI call 72 (allReduce)", FaultInjection.injectedMark(dir, jobId, 4242));
        assertNull(FaultInjection.injectedMark(dir, jobId, 4243), "another process left no mark");
        assertNull(FaultInjection.injectedMark(dir, jobId + 1, 4242), "another job's mark is not this job's");
        Path f = dir.resolve(SharedMemoryFiles.prefix(jobId) + FaultInjection.MARK + 4242);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)));
        assertEquals(1, SharedMemoryFiles.removeAll(dir, jobId));
        assertNull(FaultInjection.injectedMark(dir, jobId, 4242));
    }

    @Test
    void aMarkThatCannotBeWrittenIsNoError(@TempDir Path dir) {
        Path missing = dir.resolve("no-such-dir");
        FaultInjection.markInjecting(job(missing, 7), 1, "SIGKILL at its MPI call 1 (send)");
        assertNull(FaultInjection.injectedMark(missing, 7, 1));
    }
}
