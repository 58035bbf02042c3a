package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ranks' AOT cache through the real launcher with a library of jars (the build's own test
 * phase has target/classes, which the JDK does not cache: the test packs them): the first job
 * trains the cache and its ranks load the library from it, the second reuses it, {@code --aot
 * off} does without, and a rebuilt jar gets a new cache.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class AotCacheSystemTest {
    @TempDir
    Path tmp;

    @Test
    void trainedOnceUsedByEveryJobAndRemadeForANewBuild() throws Exception {
        Path root = FtmpirunSystemTest.root();
        Path lib = Files.createDirectory(tmp.resolve("lib"));
        Path core = jar(root.resolve("ft-core/target/classes"), lib.resolve("ft-core.jar"));
        Path ddt = jar(root.resolve("ddt-engine/target/classes"), lib.resolve("ddt-engine.jar"));
        String cp = ddt + ":" + core;
        Path aot = tmp.resolve("aot");

        Job first = job(root, cp, aot, "first");
        assertEquals(0, first.code, first.err);
        assertTrue(first.err.contains("making the AOT cache"), first.err);
        assertEquals(1, caches(aot).size(), "one cache");
        assertTrue(first.fromCache(), "the ranks loaded the library from the cache: " + first.loads());

        Job second = job(root, cp, aot, "second");
        assertEquals(0, second.code, second.err);
        assertFalse(second.err.contains("making the AOT cache"), "trained again: " + second.err);
        assertTrue(second.fromCache(), second.loads());

        Job off = job(root, cp, aot, "off", "--aot", "off");
        assertEquals(0, off.code, off.err);
        assertFalse(off.fromCache(), "--aot off: " + off.loads());

        Files.setLastModifiedTime(core, FileTime.fromMillis(Files.getLastModifiedTime(core).toMillis() + 2000)); // a rebuild
        Job rebuilt = job(root, cp, aot, "rebuilt");
        assertEquals(0, rebuilt.code, rebuilt.err);
        assertTrue(rebuilt.err.contains("making the AOT cache"), rebuilt.err);
        assertEquals(2, caches(aot).size(), "a second cache for the new build");
        assertTrue(rebuilt.fromCache(), rebuilt.loads());
        try (Stream<Path> s = Files.list(aot)) {
            assertTrue(s.noneMatch(p -> p.getFileName().toString().startsWith("training-")), "the training's files are gone");
        }
    }

    @Test
    void stoppingFtmpirunDuringTheTrainingLeavesNothingBehind() throws Exception {
        Path root = FtmpirunSystemTest.root();
        Path lib = Files.createDirectory(tmp.resolve("lib"));
        String cp = jar(root.resolve("ddt-engine/target/classes"), lib.resolve("ddt-engine.jar")) + ":"
                + jar(root.resolve("ft-core/target/classes"), lib.resolve("ft-core.jar"));
        Path aot = tmp.resolve("aot"), err = tmp.resolve("err-stopped.txt");
        Process p = launcher(root, cp, aot, Files.createDirectory(tmp.resolve("logs-stopped"))).redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(err.toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        List<ProcessHandle> training = List.of();
        while (System.nanoTime() < deadline && training.stream().noneMatch(h -> h.info().commandLine().orElse("")
                .contains("AotTraining") && h.info().commandLine().orElse("").contains("RankMain"))) {
            Thread.sleep(50); // until the training job's ranks run
            training = p.descendants().toList();
        }
        assertTrue(Files.readString(err).contains("making the AOT cache"), Files.readString(err));
        assertFalse(training.isEmpty(), "the training job started");
        p.destroy(); // SIGTERM, as a Ctrl-C
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "ftmpirun ended");
        assertEquals(143, p.exitValue(), Files.readString(err));
        for (ProcessHandle h : training) {
            h.onExit().get(30, TimeUnit.SECONDS); // every process of the training ends with it
        }
        try (Stream<Path> s = Files.list(aot)) {
            List<String> left = s.map(f -> f.getFileName().toString()).filter(f -> !f.equals(".lock")).toList();
            assertEquals(List.of(), left, "no cache, no failure marker, no training directory");
        }
    }

    private static List<Path> caches(Path aot) throws IOException {
        try (Stream<Path> s = Files.list(aot)) {
            return s.filter(p -> p.getFileName().toString().matches("ranks-[0-9a-f]{20}\\.aot")).toList();
        }
    }

    /** The outcome of one job: status, stderr, and the class-loading logs of its ranks. */
    private record Job(int code, String err, Path logs) {
        /** The lines that say where the ranks loaded RankMain from. */
        String loads() throws IOException {
            StringBuilder b = new StringBuilder();
            try (Stream<Path> s = Files.list(logs)) {
                for (Path p : s.toList()) {
                    for (String l : Files.readAllLines(p)) if (l.contains(" org.ftmpi.runtime.RankMain ")) b.append(l).append('\n');
                }
            }
            return b.toString();
        }

        /** Whether both ranks loaded the library's RankMain from the AOT cache. */
        boolean fromCache() throws IOException {
            return loads().lines().filter(l -> l.contains("source: shared objects file")).count() == 2;
        }
    }

    /** Runs a job of 2 ranks of RtProbe through the launcher with the library {@code cp}, caches in {@code aot}. */
    private Job job(Path root, String cp, Path aot, String name, String... launcherArgs) throws Exception {
        Path logs = Files.createDirectory(tmp.resolve("logs-" + name));
        Path err = tmp.resolve("err-" + name + ".txt");
        Process p = launcher(root, cp, aot, logs, launcherArgs).redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(err.toFile()).start();
        if (!p.waitFor(240, TimeUnit.SECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw new AssertionError("job " + name + " did not end: " + Files.readString(err));
        }
        return new Job(p.exitValue(), Files.readString(err), logs);
    }

    /**
     * The launcher with the library {@code cp} and its caches in {@code aot}, 2 ranks of RtProbe
     * logging their class loading into {@code logs}, in the test's directory.
     */
    private ProcessBuilder launcher(Path root, String cp, Path aot, Path logs, String... launcherArgs) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "--enable-native-access=ALL-UNNAMED",
                "-Dftmpi.root=" + root, "-cp", cp, Launcher.class.getName()));
        cmd.addAll(List.of(launcherArgs));
        cmd.addAll(List.of("-np", "2", "--timeout", "120", "java", "-Xlog:class+load=info:file=" + logs.resolve("rank-%p.log"),
                "-cp", FtmpirunSystemTest.testClasses(), "org.ftmpi.runtime.testprog.RtProbe", "hello"));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(tmp.toFile());
        pb.environment().remove("FTMPI_AOT"); // the build turns it off for the other tests
        pb.environment().put("FTMPI_AOT_DIR", aot.toString());
        return pb;
    }

    /** Packs the class directory {@code classes} into the jar {@code jar}. */
    private static Path jar(Path classes, Path jar) throws IOException {
        try (OutputStream o = Files.newOutputStream(jar); JarOutputStream j = new JarOutputStream(o);
             Stream<Path> files = Files.walk(classes)) {
            for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                j.putNextEntry(new JarEntry(classes.relativize(f).toString().replace('\\', '/')));
                Files.copy(f, j);
                j.closeEntry();
            }
        }
        return jar;
    }
}
