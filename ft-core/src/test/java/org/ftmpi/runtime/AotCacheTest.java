package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The ranks' AOT cache without a training job: its key, its directory, when it is not used, the option. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AotCacheTest {
    @TempDir
    Path tmp;

    @Test
    void keyFollowsTheJdkTheJarsAndTheRankOptions() throws Exception {
        Path a = Files.writeString(tmp.resolve("a.jar"), "a"), b = Files.writeString(tmp.resolve("b.jar"), "bb");
        List<String> lib = List.of(a.toString(), b.toString()), opts = List.of("--enable-native-access=ALL-UNNAMED");
        String k = AotCache.key("/jdk", "25+36", lib, opts);
        assertNotNull(k);
        assertEquals(20, k.length());
        assertEquals(k, AotCache.key("/jdk", "25+36", lib, opts), "same inputs, same cache");
        assertNotEquals(k, AotCache.key("/jdk2", "25+36", lib, opts), "another JDK");
        assertNotEquals(k, AotCache.key("/jdk", "25.0.1+8", lib, opts), "another JDK version");
        assertNotEquals(k, AotCache.key("/jdk", "25+36", List.of(b.toString(), a.toString()), opts), "another order");
        assertNotEquals(k, AotCache.key("/jdk", "25+36", lib, List.of()), "other rank options");
        Files.setLastModifiedTime(a, FileTime.fromMillis(Files.getLastModifiedTime(a).toMillis() - 5000));
        assertNotEquals(k, AotCache.key("/jdk", "25+36", lib, opts), "a rebuilt jar (modification time)");
        String k2 = AotCache.key("/jdk", "25+36", lib, opts);
        FileTime t = Files.getLastModifiedTime(b);
        Files.writeString(b, "bbb");
        Files.setLastModifiedTime(b, t);
        assertNotEquals(k2, AotCache.key("/jdk", "25+36", lib, opts), "a rebuilt jar (size)");
    }

    @Test
    void noKeyForDirectoriesOrMissingEntries() throws Exception {
        Path a = Files.writeString(tmp.resolve("a.jar"), "a"), classes = Files.createDirectory(tmp.resolve("classes"));
        assertNull(AotCache.key("/jdk", "25", List.of(a.toString(), classes.toString()), List.of()), "target/classes");
        assertNull(AotCache.key("/jdk", "25", List.of(a.toString(), tmp.resolve("gone.jar").toString()), List.of()));
        assertNull(AotCache.key("/jdk", "25", List.of(), List.of()));
    }

    @Test
    void directoryFromTheEnvironment() {
        assertEquals(Path.of("/x/aot"), AotCache.dir(Map.of("FTMPI_AOT_DIR", "/x/aot", "XDG_CACHE_HOME", "/c", "HOME", "/h")));
        assertEquals(Path.of("/c/ftmpi/aot"), AotCache.dir(Map.of("XDG_CACHE_HOME", "/c", "HOME", "/h")));
        assertEquals(Path.of("/h/.cache/ftmpi/aot"), AotCache.dir(Map.of("HOME", "/h")));
    }

    @Test
    void theUsersOwnArchiveOptionsWin() {
        for (String o : List.of("-XX:AOTCache=/a.aot", "-XX:AOTMode=off", "-XX:AOTCacheOutput=x", "-XX:AOTConfiguration=c",
                "-XX:SharedArchiveFile=s.jsa", "-Xshare:off", "-XX:ArchiveClassesAtExit=d.jsa", "-XX:+AutoCreateSharedArchive")) {
            assertTrue(AotCache.userManaged(List.of("-Xmx1g", o)), o);
        }
        assertFalse(AotCache.userManaged(List.of("-Xmx1g", "-XX:+UseParallelGC", "-Xlog:class+load")));
    }

    @Test
    void notUsedWhenOffOrUserManagedOrWithDirectories() throws Exception {
        LauncherConsole console = new LauncherConsole(false);
        Path a = Files.writeString(tmp.resolve("a.jar"), "a");
        Map<String, String> env = Map.of("FTMPI_AOT_DIR", tmp.resolve("aot").toString());
        LaunchSpec off = LauncherOptions.parse(new String[] {"-np", "2", "--aot", "off", "M"}, Map.of());
        assertEquals(List.of(), AotCache.options(off, a.toString(), List.of(), env, console));
        LaunchSpec own = LauncherOptions.parse(new String[] {"-np", "2", "java", "-Xshare:off", "M"}, Map.of());
        assertEquals(List.of(), AotCache.options(own, a.toString(), List.of(), env, console));
        LaunchSpec auto = LauncherOptions.parse(new String[] {"-np", "2", "M"}, Map.of());
        assertEquals(List.of(), AotCache.options(auto, a + ":" + tmp, List.of(), env, console), "a directory on the class path");
        assertFalse(Files.exists(tmp.resolve("aot")), "nothing was trained");
        Path made = Files.createDirectories(tmp.resolve("aot")).resolve("ranks-"
                + AotCache.key(System.getProperty("java.home"), System.getProperty("java.vm.version"), List.of(a.toString()), List.of())
                + ".aot");
        Files.writeString(made, "cache");
        assertEquals(List.of("-XX:AOTCache=" + made), AotCache.options(auto, a.toString(), List.of(), env, console),
                "an existing cache is used as it is");
    }

    @Test
    void aFailedTrainingIsReportedOnceNotRepeatedForEveryJob() throws Exception {
        LauncherConsole console = new LauncherConsole(false);
        Path notALibrary = Files.writeString(tmp.resolve("broken.jar"), "not a jar"); // the training's ranks cannot start
        Path aot = tmp.resolve("aot");
        Map<String, String> env = Map.of("FTMPI_AOT_DIR", aot.toString());
        LaunchSpec auto = LauncherOptions.parse(new String[] {"-np", "2", "M"}, Map.of());
        assertEquals(List.of(), AotCache.options(auto, notALibrary.toString(), List.of(), env, console));
        List<Path> failed;
        try (var s = Files.list(aot)) {
            failed = s.filter(p -> p.getFileName().toString().endsWith(".failed")).toList();
        }
        assertEquals(1, failed.size(), "the failure is remembered");
        assertTrue(Files.readString(failed.get(0)).contains("training job failed"), Files.readString(failed.get(0)));
        long t0 = System.nanoTime();
        assertEquals(List.of(), AotCache.options(auto, notALibrary.toString(), List.of(), env, console));
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "the next job did not train again");
        try (var s = Files.list(aot)) {
            assertTrue(s.noneMatch(p -> p.getFileName().toString().startsWith("training-")), "no work directory left");
        }
        Files.setLastModifiedTime(failed.get(0), FileTime.fromMillis(System.currentTimeMillis() - TimeUnit.DAYS.toMillis(2)));
        assertEquals(List.of(), AotCache.options(auto, notALibrary.toString(), List.of(), env, console));
        assertTrue(Files.getLastModifiedTime(failed.get(0)).toMillis() > System.currentTimeMillis() - TimeUnit.HOURS.toMillis(1),
                "a day later it was tried again (and failed again)");
    }

    @Test
    void anUnusableCacheDirectoryOnlyCostsTheCache() throws Exception {
        Path a = Files.writeString(tmp.resolve("a.jar"), "a"), file = Files.writeString(tmp.resolve("file"), "x");
        LaunchSpec auto = LauncherOptions.parse(new String[] {"-np", "2", "M"}, Map.of());
        assertEquals(List.of(), AotCache.options(auto, a.toString(), List.of(),
                Map.of("FTMPI_AOT_DIR", file.resolve("aot").toString()), new LauncherConsole(false)));
    }

    @Test
    void optionAndEnvironment() throws Exception {
        assertEquals("off", LauncherOptions.parse(new String[] {"-np", "2", "--aot", "off", "M"}, Map.of()).options().get("aot"));
        assertEquals("off", LauncherOptions.parse(new String[] {"-np", "2", "--aot=off", "M"}, Map.of()).options().get("aot"));
        assertEquals("off", LauncherOptions.parse(new String[] {"-np", "2", "M"}, Map.of("FTMPI_AOT", "off")).options().get("aot"));
        assertEquals("auto", LauncherOptions.parse(new String[] {"-np", "2", "--aot", "auto", "M"}, Map.of("FTMPI_AOT", "off"))
                .options().get("aot"), "--aot wins over $FTMPI_AOT");
        UsageException e = assertThrows(UsageException.class,
                () -> LauncherOptions.parse(new String[] {"-np", "2", "--aot", "yes", "M"}, Map.of()));
        assertTrue(e.getMessage().contains("--aot") && e.getMessage().contains("yes"), e.getMessage());
        e = assertThrows(UsageException.class, () -> LauncherOptions.parse(new String[] {"-np", "2", "M"}, Map.of("FTMPI_AOT", "on")));
        assertTrue(e.getMessage().contains("FTMPI_AOT"), e.getMessage());
    }
}
