package org.ftmpi.transport.shm.it;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.ftmpi.transport.shm.it.ShmFtmpirun.Result;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Through the real launcher, comm-mode REBUILD with a real SIGKILL ({@link ShmRebuildJob}): the
 * survivors re-make their shared-memory pairs with the replacement of the killed rank, a cold
 * respawn or a warm spare, and every exchange with it is correct. That the traffic goes over
 * shared memory shows two ways: each survivor's recovery timeline ({@code --opt ft-trace=true})
 * says "replacement of rank 1 reached over shm", and jobs run with {@code --transports shm},
 * where no other transport exists, still work.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class ShmRebuildSystemTest {
    private static final String REACHED = "replacement of rank 1 reached over shm";

    private static Result rebuild(List<String> options, String mode, Path dir) throws Exception {
        List<String> launcher = new ArrayList<>(List.of("-np", "3", "--comm-mode", "rebuild", "--recovery-mode",
                "auto", "--opt", "ft-trace=true", "--timeout", "120"));
        launcher.addAll(options);
        Result r = ShmFtmpirun.run(List.of(), launcher, ShmRebuildJob.class, List.of(mode, dir.toString()), 140);
        assertEquals(0, r.exit(), r.toString());
        assertTrue(r.out().contains("rank 1 restarted"), r.toString());
        for (int rank = 0; rank < 3; rank++) {
            assertTrue(r.out().contains("rank " + rank + " exchanged with the replacement"), r.toString());
            assertTrue(r.out().contains("rank " + rank + " finalized"), r.toString());
        }
        assertFalse(r.err().contains("no shared memory with the replacement"), r.toString());
        return r;
    }

    /** How many survivor lines say that they reached the replacement of rank 1 over shared memory. */
    private static long reachedOverShm(Result r) {
        return survivorLines(r, REACHED);
    }

    /** How many trace lines of the survivors (ranks 0 and 2) contain {@code text}. */
    private static long survivorLines(Result r, String text) {
        return r.err().lines().filter(l -> l.contains(text)
                && (l.contains("trace: rank 0:") || l.contains("trace: rank 2:"))).count();
    }

    @Test
    void aColdRespawnIsReachedOverSharedMemory(@TempDir Path dir) throws Exception {
        Result r = rebuild(List.of(), "once", dir);
        assertTrue(r.err().contains("started a replacement for rank 1 (pid"), r.toString());
        assertEquals(2, reachedOverShm(r), r.toString());
    }

    @Test
    void aWarmSpareIsReachedOverSharedMemory(@TempDir Path dir) throws Exception {
        Result r = rebuild(List.of("-sp", "1"), "once", dir);
        assertTrue(r.err().contains("rank 1 is taken over by a warm spare (pid"), r.toString());
        assertFalse(r.err().contains("started a replacement"), r.toString());
        assertEquals(2, reachedOverShm(r), r.toString());
    }

    /**
     * Session 9: the ranks make their pair files with the warm spare ahead of need (the job waits
     * until they exist before rank 1 dies); at the takeover both survivors take them. Session 19:
     * the launcher removes the victim's own file (made for the spare that took its rank over)
     * after its death, while the job runs.
     */
    @Test
    void aWarmSpareTakesThePairFilesMadeAheadForIt(@TempDir Path dir) throws Exception {
        Result r = rebuild(List.of("-sp", "1"), "spare-ready", dir);
        assertTrue(r.err().contains("rank 1 is taken over by a warm spare (pid"), r.toString());
        assertEquals(2, survivorLines(r, REACHED + " (pair file made ahead for the warm spare)"), r.toString());
        assertTrue(r.out().lines().anyMatch(l -> l.equals("rank 0 the victim's pair file made ahead is gone")), r.toString());
    }

    /** Only shared memory in the job: the replacement can be reached over nothing else. */
    @Test
    void aColdRespawnWorksWithSharedMemoryAlone(@TempDir Path dir) throws Exception {
        Result r = rebuild(List.of("--transports", "shm"), "once", dir);
        assertEquals(2, reachedOverShm(r), r.toString());
    }

    /**
     * The replacement (a warm spare) is killed again right after its pairs were re-made and one
     * round went through them; the second replacement (a cold respawn: the only spare is used)
     * gets fresh pairs again, over shared memory alone.
     */
    @Test
    void aReplacementKilledAgainAfterTheRepairingIsReplacedOverSharedMemoryToo(@TempDir Path dir) throws Exception {
        Result r = rebuild(List.of("-sp", "1", "--transports", "shm"), "twice", dir);
        assertTrue(r.err().contains("rank 1 is taken over by a warm spare (pid"), r.toString());
        assertTrue(r.err().contains("started a replacement for rank 1 (pid"), r.toString());
        assertEquals(2, r.out().lines().filter(l -> l.equals("rank 1 restarted")).count(), r.toString());
        assertEquals(4, reachedOverShm(r), r.toString());
    }
}
