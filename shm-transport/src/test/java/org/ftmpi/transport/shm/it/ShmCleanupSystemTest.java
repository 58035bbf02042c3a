package org.ftmpi.transport.shm.it;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.ftmpi.transport.shm.it.ShmFtmpirun.Result;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Through the real launcher: a 2-rank job over shared memory leaves no file with its job prefix
 * in /dev/shm, neither when it ends normally nor when a rank is killed with SIGKILL.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ShmCleanupSystemTest {
    private static Result ftmpirun(String mode) throws IOException, InterruptedException {
        return ftmpirun(List.of(), List.of(), mode);
    }

    /**
     * @param wrapper a command that runs the launcher (its arguments follow), or empty
     * @param options launcher options before the class
     */
    private static Result ftmpirun(List<String> wrapper, List<String> options, String mode)
            throws IOException, InterruptedException {
        List<String> launcher = new ArrayList<>(List.of("-np", "2", "--transports", "shm", "--timeout", "90"));
        launcher.addAll(options);
        return ShmFtmpirun.run(wrapper, launcher, ShmJob.class, List.of(mode), 100);
    }

    private static String prefixOf(Result r) {
        Matcher m = Pattern.compile("job (ftmpi-[0-9a-f]{16}-)").matcher(r.out());
        assertTrue(m.find(), "job prefix printed: " + r);
        return m.group(1);
    }

    private static List<Path> left(String prefix) throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/dev/shm"))) {
            return s.filter(p -> p.getFileName().toString().startsWith(prefix)).toList();
        }
    }

    @Test
    void aNormalJobLeavesNoSegment() throws Exception {
        Result r = ftmpirun("normal");
        assertEquals(0, r.exit(), r.toString());
        assertTrue(r.out().contains("rank 0 transferred") && r.out().contains("rank 1 transferred"), r.toString());
        assertEquals(List.of(), left(prefixOf(r)));
    }

    /**
     * A shared-memory directory without room for the rings: each pair file's space is reserved
     * when it is created, so the job stops at start-up with a message that names the file and
     * the cause, instead of a SIGBUS when a ring first fills a page; nothing is left behind.
     * Room runs out through the file size limit ({@code ulimit -f}, 1 MiB here, below the 2 MiB
     * pair file), which needs no privilege; a full tmpfs fails the same reservation with ENOSPC.
     */
    @Test
    void aShmDirectoryWithoutRoomStopsTheJobAtStartUpWithAClearMessage(@TempDir Path dir) throws Exception {
        Result r = ftmpirun(List.of("bash", "-c", "ulimit -f 1024 && exec \"$0\" \"$@\""),
                List.of("--opt", "shm-dir=" + dir), "normal");
        assertNotEquals(0, r.exit(), r.toString());
        assertTrue(r.err().contains("cannot reserve") && r.err().contains(dir.toString())
                && r.err().contains("file size limit"), r.toString());
        assertFalse(r.out().contains("transferred"), r.toString());
        assertFalse(r.err().contains("SIGBUS"), r.toString());
        try (Stream<Path> s = Files.list(dir)) {
            assertEquals(List.of(), s.toList(), "no file is left in the shm directory");
        }
    }

    /**
     * The sender dies while a stream of 4 MiB single-copy messages is in flight (its fourth
     * window posted): the receiver's wait ends with the failure error (never a hang), every
     * message it got before was intact, and no segment is left.
     */
    @Test
    void aSenderKilledMidStreamOfSingleCopyMessagesFailsTheReceiver() throws Exception {
        assertStreamEndsWithTheFailure("stream-kill", 3 * 4);
    }

    /** The same with windows of 64 messages of 64 KiB, which the receiver reads in batches. */
    @Test
    void aSenderKilledMidBatchedReadsFailsTheReceiver() throws Exception {
        assertStreamEndsWithTheFailure("batch-kill", 3 * 64);
    }

    /**
     * The receive is posted after the sender's death is known, for a 64 KiB message whose
     * announcement (RTS) had arrived before: the data can never come, so the receive fails. It
     * used to ask the dead sender for the data and wait for ever, the cause of a hang of
     * {@link #aSenderKilledMidBatchedReadsFailsTheReceiver} seen once under load (rank 0 posting
     * a window's receives after it learned of the death, with announcements already held).
     */
    @Test
    void aReceiveOfAnAnnouncedMessagePostedAfterTheSendersDeathFails() throws Exception {
        Result r = ftmpirun(List.of(), List.of("--recovery-mode", "ignore"), "announced-kill");
        assertTrue(r.err().contains("SIGKILL"), r.toString());
        assertTrue(r.out().contains("rank 0 receive ended: class"), r.toString());
        assertTrue(r.out().contains("ProcFailedException"), r.toString());
        assertEquals(List.of(), left(prefixOf(r)), "the launcher removed the job's files");
    }

    /**
     * The receiver dies while the sender's ring to it is full and most of a window of eager
     * sends waits in the sender's engine for room: those sends fail with the process-failure
     * error (none hangs; none that was never written claims success), the ones before them
     * succeeded (sends to one rank are written in order), and no segment is left.
     */
    @Test
    void eagerSendsWaitingForRoomInAFullRingFailWhenTheReceiverDies() throws Exception {
        Result r = ftmpirun(List.of(), List.of("--recovery-mode", "ignore"), "full-ring-kill");
        assertTrue(r.err().contains("SIGKILL"), r.toString());
        Matcher m = Pattern.compile("rank 0 sends ended: (\\d+) of 1000 failed, from send (\\d+) on; 0 succeeded"
                + " after a failed one: class (\\d+) ProcFailedException").matcher(r.out());
        assertTrue(m.find(), r.toString());
        // rank 1 took one message, and a few more at most while it died; a 1 MiB ring holds 31
        assertTrue(Integer.parseInt(m.group(1)) > 0, "the sends that never found room failed: " + r);
        assertEquals(1000 - Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), r.toString());
        assertEquals(List.of(), left(prefixOf(r)), "the launcher removed the job's files");
    }

    private static void assertStreamEndsWithTheFailure(String mode, int firstThreeWindows) throws Exception {
        Result r = ftmpirun(List.of(), List.of("--recovery-mode", "ignore"), mode);
        assertTrue(r.err().contains("SIGKILL"), r.toString());
        Matcher m = Pattern.compile("rank 0 stream ended after (\\d+) good messages: class (\\d+) ProcFailedException")
                .matcher(r.out());
        assertTrue(m.find(), r.toString());
        assertTrue(Integer.parseInt(m.group(1)) >= firstThreeWindows, "the first three windows arrived: " + r);
        assertFalse(r.out().contains("corrupt"), r.toString());
        assertEquals(List.of(), left(prefixOf(r)), "the launcher removed the job's files");
    }

    @Test
    void aJobWithASigkilledRankLeavesNoSegment() throws Exception {
        Result r = ftmpirun("kill");
        assertNotEquals(0, r.exit(), r.toString());
        assertTrue(r.err().contains("SIGKILL"), r.toString());
        assertEquals(List.of(), left(prefixOf(r)), "the launcher removed the job's files");
    }
}
