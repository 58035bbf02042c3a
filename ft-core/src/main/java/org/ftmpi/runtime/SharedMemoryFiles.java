package org.ftmpi.runtime;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Map;

/**
 * Naming of the per-job files that intra-host transports keep in shared memory, and their
 * removal at job end. Every such file is {@code <dir>/ftmpi-<job id, 16 hex digits>-...}, so the
 * launcher can remove all of them by prefix when the job ends, even after ranks were killed
 * with SIGKILL, and a second job (another random id) never sees the first's files.
 *
 * <p><b>Note:</b> stateless and thread-safe.
 */
public final class SharedMemoryFiles {
    /** Job option naming the directory (default {@value #DEFAULT_DIR}). */
    public static final String DIR_OPTION = "shm-dir";
    public static final String DEFAULT_DIR = "/dev/shm";

    private SharedMemoryFiles() {}

    /** The directory for a job with these options. */
    public static Path dir(Map<String, String> options) {
        return Path.of(options.getOrDefault(DIR_OPTION, DEFAULT_DIR));
    }

    /** Prefix of every shared-memory file name of the job. */
    public static String prefix(long jobId) {
        return "ftmpi-" + HexFormat.of().toHexDigits(jobId) + "-";
    }

    /**
     * Prefix of the names of the files process {@code makerProcId} makes ahead of need for warm
     * spares (FT-MPI REBUILD; shared memory's pair files): only that process uses them until a
     * spare takes over a rank and the maker renames the file, so they are its own and go with it
     * ({@link #removeSpareFilesOf}).
     */
    public static String spareFilePrefix(long jobId, long makerProcId) {
        return prefix(jobId) + "spare-p" + makerProcId + "-";
    }

    /**
     * Removes the files process {@code makerProcId} made ahead for warm spares ({@link
     * #spareFilePrefix}): the launcher's clean-up once that process has died, which it cannot do
     * itself. Returns how many; a missing directory or files that vanish meanwhile are not errors.
     */
    public static int removeSpareFilesOf(Path dir, long jobId, long makerProcId) {
        return removeMatching(dir, spareFilePrefix(jobId, makerProcId) + "*");
    }

    /**
     * Removes every file of the job in {@code dir}; returns how many. Missing directory or
     * files that vanish meanwhile are not errors.
     */
    public static int removeAll(Path dir, long jobId) {
        return removeMatching(dir, prefix(jobId) + "*");
    }

    private static int removeMatching(Path dir, String glob) {
        if (!Files.isDirectory(dir)) return 0;
        int removed = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, glob)) {
            for (Path p : ds) {
                if (Files.deleteIfExists(p)) removed++;
            }
        } catch (IOException e) {
            System.err.println("ftmpi: cannot remove the job's shared-memory files in " + dir + ": " + e);
        }
        return removed;
    }
}
