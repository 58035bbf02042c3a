package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The launcher's removal of a job's shared-memory files: all of them, or those a dead process made for spares. */
class SharedMemoryFilesTest {
    private static List<String> names(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void aDeadProcesssSpareFilesGoAndNothingElse(@TempDir Path dir) throws Exception {
        long job = 0x1234, other = 0x5678;
        String spare2 = SharedMemoryFiles.spareFilePrefix(job, 2) + "p9";
        String spare2tmp = SharedMemoryFiles.spareFilePrefix(job, 2) + "p10.new";
        String spare12 = SharedMemoryFiles.spareFilePrefix(job, 12) + "p9"; // process 12, not 2
        String spare3 = SharedMemoryFiles.spareFilePrefix(job, 3) + "p9";
        String pair = SharedMemoryFiles.prefix(job) + "0-2"; // a pair file of two ranks
        String otherJob = SharedMemoryFiles.spareFilePrefix(other, 2) + "p9";
        for (String n : List.of(spare2, spare2tmp, spare12, spare3, pair, otherJob)) Files.createFile(dir.resolve(n));

        assertEquals(2, SharedMemoryFiles.removeSpareFilesOf(dir, job, 2));
        assertEquals(List.of(otherJob, pair, spare12, spare3).stream().sorted().toList(), names(dir));
        assertEquals(0, SharedMemoryFiles.removeSpareFilesOf(dir, job, 2), "nothing left to remove");
        assertEquals(3, SharedMemoryFiles.removeAll(dir, job));
        assertEquals(List.of(otherJob), names(dir));
    }

    @Test
    void aMissingDirectoryIsNoError(@TempDir Path dir) {
        assertEquals(0, SharedMemoryFiles.removeSpareFilesOf(dir.resolve("gone"), 1, 2));
        assertEquals(0, SharedMemoryFiles.removeAll(dir.resolve("gone"), 1));
    }
}
