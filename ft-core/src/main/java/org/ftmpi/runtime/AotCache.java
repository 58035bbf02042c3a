package org.ftmpi.runtime;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The ranks' ahead-of-time cache: JDK 25's AOT cache (JEP 483, 514, 515) of the library, which
 * every rank JVM maps with {@code -XX:AOTCache}, so that it starts with the library's classes
 * already loaded and linked (lambdas and method handles included) and with method profiles for
 * the JIT. Without it each JVM loads, links and interprets every path the first time it runs it:
 * a job's start, the first call of each collective, and the first failure, where a cold path
 * costs the most (at np 8 on 2 cores, every survivor told of a SIGKILL after a median 18.8 ms
 * without the cache and 14.5 ms with it: docs/benchmarks.md, "Session 14").
 *
 * <p>The cache belongs to one build of the library and one JDK: its file name is a hash of the
 * JDK, each library jar's path, size and modification time, and the JVM options that ftmpirun
 * gives every rank ({@code conf/rank-jvm.options}); a rebuilt jar gets a new cache. When there is
 * none, ftmpirun makes it before the job starts (once; a lock file serialises concurrent
 * launchers): a training job of {@link #TRAINING_NP} ranks runs {@link AotTraining} with {@code
 * -XX:AOTMode=record}, then {@code -XX:AOTMode=create} writes the cache from rank 0's
 * configuration, and an atomic rename publishes it. The user's own class path comes after the
 * library's on a rank's class path, which the JDK accepts: the cache serves every program.
 *
 * <p>Not used when: {@code ftmpirun --aot off} (job option {@code aot=off}, or {@code
 * FTMPI_AOT=off}); the user's JVM options manage CDS or AOT themselves ({@link #userManaged});
 * the library class path has a directory ({@code target/classes}: the JDK caches classes from
 * jars only, so not in a build's own test phase); no cache directory can be made. A training
 * that fails is reported in one line and the job starts without a cache; a file {@code
 * ranks-KEY.failed} next to where the cache would be keeps the next jobs from trying again for
 * a day (remove it to retry at once). Where: {@code $FTMPI_AOT_DIR}, else {@code
 * $XDG_CACHE_HOME/ftmpi/aot}, else {@code ~/.cache/ftmpi/aot}; a cache is deleted when
 * {@value #KEEP} others were used more recently and it was not used for a day.
 */
final class AotCache {
    /** Job option ({@code ftmpirun --aot}): {@code auto} (the default) or {@code off}. */
    static final String OPTION = "aot";
    /** Values of {@link #OPTION}. */
    static final List<String> MODES = List.of("auto", "off");
    /** Set in the training job's launcher: the ranks record to this AOT configuration path ({@code %p}: pid). */
    static final String RECORD_PROPERTY = "ftmpi.aot.record";
    /** Ranks of the training job. */
    static final int TRAINING_NP = 4;
    /** The training job's and the cache creation's time limit. */
    static final long TRAINING_TIMEOUT_S = 300;
    /** Caches kept in the directory: the most recently used ones. */
    static final int KEEP = 4;
    /** JVM options with which the user manages the class-data archives (CDS, AOT) himself. */
    private static final List<String> USER_MANAGED = List.of("-XX:AOTCache", "-XX:AOTMode", "-XX:AOTConfiguration",
            "-XX:AOTCacheOutput", "-XX:SharedArchiveFile", "-XX:ArchiveClassesAtExit", "-XX:+AutoCreateSharedArchive",
            "-Xshare");

    /** Set when ftmpirun is stopped (SIGINT, SIGTERM) during a training: its end is no failure to remember. */
    private static volatile boolean stopping;

    private AotCache() {}

    /** Whether the user's JVM options take the class-data archives into their own hands. */
    static boolean userManaged(List<String> jvmOptions) {
        for (String o : jvmOptions) {
            for (String p : USER_MANAGED) if (o.startsWith(p)) return true;
        }
        return false;
    }

    /**
     * The cache's key: a hash of the JDK, the library class path's jars (path, size, modification
     * time) and the ranks' JVM options; null when the class path has an entry that is not a jar
     * file (a directory, a missing file), which the JDK does not cache.
     */
    static String key(String javaHome, String vmVersion, List<String> lib, List<String> rankOptions) throws IOException {
        if (lib.isEmpty()) return null;
        StringBuilder s = new StringBuilder("ftmpi-aot 1\n").append(javaHome).append('\n').append(vmVersion).append('\n');
        for (String e : lib) {
            Path p = Path.of(e);
            if (!Files.isRegularFile(p)) return null;
            s.append(p.toAbsolutePath()).append(' ').append(Files.size(p)).append(' ')
                    .append(Files.getLastModifiedTime(p).toMillis()).append('\n');
        }
        for (String o : rankOptions) s.append(o).append('\n');
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(s.toString().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(h, 0, 10);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }

    /** The cache directory for this environment, or null when none can be named. */
    static Path dir(Map<String, String> env) {
        String d = env.get("FTMPI_AOT_DIR");
        if (d != null && !d.isEmpty()) return Path.of(d);
        String xdg = env.get("XDG_CACHE_HOME");
        if (xdg != null && !xdg.isEmpty()) return Path.of(xdg, "ftmpi", "aot");
        String home = env.getOrDefault("HOME", System.getProperty("user.home"));
        return home == null || home.isEmpty() ? null : Path.of(home, ".cache", "ftmpi", "aot");
    }

    /**
     * The options that make a rank JVM use the cache ({@code -XX:AOTCache=FILE}), or none (see the
     * class comment); makes the cache first when it is missing. {@code lib}: the library class
     * path; {@code rankOptions}: the JVM options ftmpirun gives every rank before the user's.
     */
    static List<String> options(LaunchSpec spec, String lib, List<String> rankOptions, Map<String, String> env,
                                LauncherConsole console) {
        if ("off".equals(spec.options().getOrDefault(OPTION, "auto")) || System.getProperty(RECORD_PROPERTY) != null) {
            return List.of();
        }
        if (userManaged(spec.jvmOptions())) {
            console.log("no AOT cache: the JVM options manage the class-data archives");
            return List.of();
        }
        List<String> entries = new ArrayList<>();
        for (String e : lib.split(File.pathSeparator)) if (!e.isEmpty()) entries.add(e);
        Path d = dir(env);
        try {
            String key = key(System.getProperty("java.home"), System.getProperty("java.vm.version"), entries, rankOptions);
            if (key == null || d == null) {
                console.log("no AOT cache: " + (d == null ? "no cache directory (set FTMPI_AOT_DIR)"
                        : "the library class path has directories (the JDK caches jars only)"));
                return List.of();
            }
            Path cache = d.resolve("ranks-" + key + ".aot"), failed = d.resolve("ranks-" + key + ".failed");
            if (!Files.isRegularFile(cache)) {
                if (Files.isRegularFile(failed)) { // not again for every job: a day later, or when the user removes it
                    if (Files.getLastModifiedTime(failed).toMillis() > System.currentTimeMillis() - TimeUnit.DAYS.toMillis(1)) {
                        console.log("no AOT cache: its training failed within the day, see " + failed);
                        return List.of();
                    }
                    Files.deleteIfExists(failed);
                }
                try {
                    Files.createDirectories(d, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                } catch (IOException e) {
                    throw new IOException("cannot make the cache directory " + d + " (" + e + "); set FTMPI_AOT_DIR"
                            + " to a writable directory, or FTMPI_AOT=off", e);
                }
                try (FileChannel ch = FileChannel.open(d.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                     FileLock ignored = ch.lock()) {
                    if (!Files.isRegularFile(cache) && !Files.isRegularFile(failed)) {
                        try {
                            train(cache, lib, rankOptions, console);
                        } catch (IOException e) {
                            if (stopping) return List.of(); // ftmpirun was stopped: not a failure of the training
                            Files.writeString(failed, e.getMessage() + "\n");
                            throw new IOException(e.getMessage() + "\n  (not tried again for this build and JDK for a day, or until "
                                    + failed + " is removed)", e);
                        }
                    }
                }
                if (!Files.isRegularFile(cache)) return List.of(); // another launcher's training failed
            }
            Files.setLastModifiedTime(cache, FileTime.fromMillis(System.currentTimeMillis())); // most recently used
            prune(d, cache);
            console.log("AOT cache " + cache);
            return List.of("-XX:AOTCache=" + cache);
        } catch (IOException e) {
            console.message("the ranks start without an AOT cache: " + e.getMessage());
            return List.of();
        }
    }

    /** Runs the training job and the cache creation; publishes the cache at {@code cache}. */
    private static void train(Path cache, String lib, List<String> rankOptions, LauncherConsole console) throws IOException {
        console.message("making the AOT cache of this FT-MPI/J build and JDK for the rank JVMs, once ("
                + TRAINING_NP + "-rank training job; --aot off skips it): " + cache);
        Path work = Files.createTempDirectory(cache.getParent(), "training-");
        try {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            List<String> job = new ArrayList<>();
            job.add(java);
            job.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
            job.add("-D" + RECORD_PROPERTY + "=" + work.resolve("rank-%p.aotconf"));
            job.add("-Dftmpi.lib.classpath=" + lib); // the ranks' library: the one the cache is for
            job.addAll(List.of("-cp", System.getProperty("java.class.path"), Launcher.class.getName(),
                    "--" + OPTION, "off", "-np", Integer.toString(TRAINING_NP), "--recovery-mode", "ignore",
                    "--timeout", Long.toString(TRAINING_TIMEOUT_S), AotTraining.class.getName()));
            run(job, work, "training job");
            Path pidFile = work.resolve(AotTraining.RANK0_FILE);
            if (!Files.isRegularFile(pidFile)) throw failed(work, "training job", "rank 0 did not finish");
            Path conf = work.resolve("rank-pid" + Files.readString(pidFile).strip() + ".aotconf");
            if (!Files.isRegularFile(conf) || Files.size(conf) == 0) throw failed(work, "training job", "no configuration from rank 0");
            Path made = work.resolve("ranks.aot");
            List<String> create = new ArrayList<>();
            create.add(java);
            create.addAll(rankOptions);
            create.addAll(List.of("-XX:AOTMode=create", "-XX:AOTConfiguration=" + conf, "-XX:AOTCache=" + made, "-cp", lib));
            run(create, work, "cache creation");
            if (!Files.isRegularFile(made)) throw failed(work, "cache creation", "no cache file");
            Files.move(made, cache, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            deleteTree(work);
        }
    }

    /** Runs {@code cmd} in {@code work} with its output in a log there; fails on a non-zero status or the time limit. */
    private static void run(List<String> cmd, Path work, String what) throws IOException {
        Path log = work.resolve(what.replace(' ', '-') + ".log");
        Process p = new ProcessBuilder(cmd).directory(work.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        // ftmpirun stopped (Ctrl-C, SIGTERM) meanwhile: the training launcher ends its ranks on SIGTERM
        Thread stop = new Thread(() -> {
            stopping = true;
            p.destroy();
            try {
                p.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException ignored) {
                // exiting anyway
            }
            deleteTree(work);
        }, "ftmpirun-aot-training-stop");
        Runtime.getRuntime().addShutdownHook(stop);
        try {
            if (!p.waitFor(TRAINING_TIMEOUT_S, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                throw failed(work, what, "took more than " + TRAINING_TIMEOUT_S + " s");
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException(what + " interrupted");
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(stop);
            } catch (IllegalStateException exiting) {
                // the hook runs
            }
        }
        // the training job's status is that of its killed rank (137) by design: judged by its files
        if (p.exitValue() != 0 && !what.equals("training job")) throw failed(work, what, "exit status " + p.exitValue());
    }

    /** An IOException with the last lines of the step's log. */
    private static IOException failed(Path work, String what, String why) {
        String tail = "";
        try {
            List<String> lines = Files.readAllLines(work.resolve(what.replace(' ', '-') + ".log"));
            tail = String.join("\n  ", lines.subList(Math.max(0, lines.size() - 8), lines.size()));
        } catch (IOException | RuntimeException ignored) {
            // no log to show
        }
        return new IOException("the AOT cache's " + what + " failed (" + why + ")" + (tail.isEmpty() ? "" : ":\n  " + tail));
    }

    /**
     * Deletes the caches beyond the {@value #KEEP} most recently used that were not used for a day,
     * never {@code current}, and training directories a day old (a launcher killed by SIGKILL).
     */
    private static void prune(Path d, Path current) {
        List<Path> caches = new ArrayList<>();
        long dayAgo = System.currentTimeMillis() - TimeUnit.DAYS.toMillis(1);
        try (DirectoryStream<Path> s = Files.newDirectoryStream(d, "{ranks-*.aot,training-*}")) {
            for (Path p : s) {
                if (p.getFileName().toString().endsWith(".aot")) caches.add(p);
                else if (Files.getLastModifiedTime(p).toMillis() < dayAgo) deleteTree(p); // a launcher killed in training
            }
            caches.sort(Comparator.comparing((Path p) -> {
                try {
                    return Files.getLastModifiedTime(p);
                } catch (IOException e) {
                    return FileTime.fromMillis(0);
                }
            }).reversed());
            for (Path p : caches.subList(Math.min(KEEP, caches.size()), caches.size())) {
                // a job that started within the day may still respawn a rank with it
                if (!p.equals(current) && Files.getLastModifiedTime(p).toMillis() < dayAgo) Files.deleteIfExists(p);
            }
        } catch (IOException | RuntimeException e) {
            // another launcher pruned at the same time; the next one tries again
        }
    }

    private static void deleteTree(Path dir) {
        try (var files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | RuntimeException ignored) {
            // a temporary directory left in the cache directory is harmless
        }
    }
}
