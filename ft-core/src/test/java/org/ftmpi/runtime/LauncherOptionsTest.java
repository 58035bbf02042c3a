package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class LauncherOptionsTest {
    private static final Map<String, String> ENV = Map.of("HOME", "/h", "EXPORTED", "v1");

    private static LaunchSpec parse(String... args) throws UsageException {
        return LauncherOptions.parse(args, ENV);
    }

    @Test
    void openMpiJavaForm() throws UsageException {
        LaunchSpec s = parse("-np", "4", "--tag-output", "java", "-Xmx1g", "--add-modules", "jdk.incubator.vector",
                "-cp", "app.jar", "-Dx=y", "com.example.Main", "a", "-b");
        assertEquals(4, s.np());
        assertTrue(s.tagOutput());
        assertEquals(List.of("-Xmx1g", "--add-modules", "jdk.incubator.vector", "-Dx=y"), s.jvmOptions());
        assertEquals("app.jar", s.userClasspath());
        assertEquals("com.example.Main", s.mainClass());
        assertEquals(List.of("a", "-b"), s.programArgs());
        assertEquals("abort", s.options().get("comm-mode"));
    }

    @Test
    void shortFormWithSynonymsAndAliases() throws UsageException {
        LaunchSpec s = parse("-n", "2", "--classpath", "lib/x.jar", "bench", "--size", "8");
        assertEquals(2, s.np());
        assertEquals("lib/x.jar", s.userClasspath());
        assertEquals("org.ftmpi.bench.Main", s.mainClass());
        assertEquals(List.of("--size", "8"), s.programArgs());
        assertEquals("Main2", parse("--np=3", "Main2").mainClass());
        assertEquals(3, parse("--np=3", "Main2").np());
    }

    @Test
    void classpathDefaultsToEnvironmentThenDot() throws UsageException {
        assertEquals(".", parse("-np", "1", "M").userClasspath());
        assertEquals("/c", LauncherOptions.parse(new String[] {"-np", "1", "M"}, Map.of("CLASSPATH", "/c"))
                .userClasspath());
        assertEquals("a:b", parse("-np", "1", "-cp", "a", "java", "-classpath", "b", "M").userClasspath());
        assertEquals("z", parse("-np", "1", "java", "--class-path=z", "M").userClasspath());
    }

    @Test
    void jarForm() throws UsageException {
        LaunchSpec s = parse("-np", "2", "java", "-ea", "-jar", "app.jar", "x");
        assertEquals("app.jar", s.jar());
        assertNull(s.mainClass());
        assertEquals(List.of("-ea"), s.jvmOptions());
        assertEquals(List.of("x"), s.programArgs());
    }

    @Test
    void jobOptionsEnvironmentAndTimeout() throws UsageException {
        LaunchSpec s = parse("-np", "2", "--tcp-bind", "10.0.0.1", "--transports", "tcp,shm", "--opt", "k=v=w",
                "--mca", "m", "n", "-x", "EXPORTED", "-x", "NEW=1", "-x", "ABSENT", "--timeout", "30",
                "--verbose", "--comm-mode", "ABORT", "M");
        assertEquals("10.0.0.1", s.bindAddress());
        assertEquals(Map.of("comm-mode", "abort", "tcp-bind", "10.0.0.1", "transports", "tcp,shm", "k", "v=w",
                "m", "n", "hb-period", "50", "hb-timeout", "2000"), s.options());
        assertEquals(Map.of("EXPORTED", "v1", "NEW", "1"), s.exportEnv());
        assertEquals(30, s.timeoutSeconds());
        assertTrue(s.verbose());
        assertEquals("127.0.0.1", parse("-np", "1", "M").bindAddress());
    }

    @Test
    void rejectsBadCommandLines() {
        assertMessage("unknown option '--bogus'", "-np", "2", "--bogus", "M");
        assertMessage("missing -np", "M");
        assertMessage("positive integer", "-np", "0", "M");
        assertMessage("positive integer", "-np", "x", "M");
        assertMessage("needs a value", "-np");
        assertMessage("missing the main class", "-np", "2");
        assertMessage("after 'java'", "-np", "2", "java", "-Xmx1g");
        assertMessage("KEY=VALUE", "-np", "2", "--opt", "novalue", "M");
        assertMessage("--recovery-mode rebuild is not a recovery mode (auto, manual, ignore, abort)",
                "-np", "2", "--recovery-mode", "rebuild", "M");
        assertMessage("needs a value", "-np", "2", "--recovery-mode");
        assertMessage("not supported", "-np", "2", "java", "-m", "mod/cls");
        assertMessage("takes no value", "-np", "2", "--tag-output=yes", "M");
    }

    @Test
    void heartbeatAndInjectionOptions() throws UsageException {
        LaunchSpec s = parse("-np", "4", "--hb-period", "20", "--hb-timeout=300", "--inject",
                "rank=1,after=500,how=stop", "--inject", "after=0,rank=3", "M");
        assertEquals("20", s.options().get("hb-period"));
        assertEquals("300", s.options().get("hb-timeout"));
        assertEquals(List.of(new FaultInjection(1, 500, "stop"), new FaultInjection(3, 0, "kill")), s.injections());
        assertEquals("0", parse("-np", "1", "--hb-period", "0", "M").options().get("hb-period"));
        assertMessage("at least twice", "-np", "2", "--hb-period", "100", "--hb-timeout", "150", "M");
        assertMessage("needs milliseconds", "-np", "2", "--hb-timeout", "0", "M");
        LaunchSpec c = parse("-np", "3", "--inject", "rank=0,at-call=3", "--inject", "rank=2,at-call=7,how=stop",
                "--inject", "rank=1,after=5", "M");
        assertEquals("0:3:kill;2:7:stop", c.options().get("inject-at-call"), "at-call faults go to the ranks");
        assertEquals(List.of(new FaultInjection(1, 5, "kill")), c.injections(), "only timed faults stay with the launcher");
        assertMessage("expected N >= 1", "-np", "2", "--inject", "rank=0,at-call=0", "M");
        assertMessage("exactly one of after, at-call", "-np", "2", "--inject", "rank=0,at-call=3,after=5", "M");
        LaunchSpec st = parse("-np", "3", "--inject", "rank=1,at-step=createIntercomm.ids", "--inject",
                "rank=2,at-call=4", "M");
        assertEquals("1:@createIntercomm.ids:kill;2:4:kill", st.options().get("inject-at-call"), "at-step faults go to the ranks");
        assertEquals(List.of(), st.injections());
        assertMessage("expected one of createIntercomm.lists, createIntercomm.ids, recovery.agreement, recovery.agreed", "-np", "2", "--inject",
                "rank=0,at-step=merge", "M");
        assertMessage("exactly one of after, at-call, at-step", "-np", "2", "--inject",
                "rank=0,at-step=createIntercomm.ids,at-call=2", "M");
        assertMessage("expected kill or stop", "-np", "2", "--inject", "rank=0,after=1,how=term", "M");
        assertMessage("the job has 2 ranks", "-np", "2", "--inject", "rank=2,after=1", "M");
        assertMessage("rank and exactly one of after, at-call, at-step are required", "-np", "2", "--inject", "rank=1", "M");
    }

    @Test
    void idleTeardownIsAutoTrueOrFalseAndAutoMeansAnOversubscribedHostThatStartsNoProcess() throws UsageException {
        assertMessage("job option idle-teardown is one of auto, true, false, got 'yes'",
                "-np", "2", "--opt", "idle-teardown=yes", "M");
        assertEquals("false", parse("-np", "2", "--opt", "idle-teardown=false", "M").options().get("idle-teardown"));
        assertTrue(Job.idleTeardown("auto", 4, 2, false), "4 processes on 2 CPUs");
        assertFalse(Job.idleTeardown("auto", 4, 2, true), "a REBUILD job starts processes after a failure");
        assertFalse(Job.idleTeardown("auto", 2, 2, false), "a CPU for each process");
        assertFalse(Job.idleTeardown("auto", 4, 0, false), "CPUs unknown");
        assertTrue(Job.idleTeardown("true", 1, 8, true));
        assertFalse(Job.idleTeardown("false", 8, 2, false));
    }

    @Test
    void helpNeedsNothingElse() throws UsageException {
        assertTrue(parse("--help").help());
        assertTrue(parse("-h").help());
    }

    @org.junit.jupiter.api.Test
    void recoveryModeIgnoreReachesTheRanksAsAJobOption() throws Exception {
        assertEquals("ignore", parse("-np", "2", "--recovery-mode", "IGNORE", "M").options().get("recovery-mode"));
        assertEquals("abort", parse("-np", "2", "--recovery-mode=abort", "M").options().get("recovery-mode"));
        assertEquals(null, parse("-np", "2", "M").options().get("recovery-mode"), "default: abort (unset)");
    }

    @Test
    void ftMpiModesReachTheRanksAsJobOptions() throws Exception {
        LaunchSpec s = parse("-np", "2", "--comm-mode", "SHRINK", "--recovery-mode", "auto", "--msg-mode", "reset",
                "--coll-mode=nonatomic", "M");
        assertEquals("shrink", s.options().get("comm-mode"));
        assertEquals("auto", s.options().get("recovery-mode"));
        assertEquals("reset", s.options().get("msg-mode"));
        assertEquals("nonatomic", s.options().get("coll-mode"));
        assertEquals("blank", parse("-np", "2", "--comm-mode=blank", "--recovery-mode", "manual", "M").options()
                .get("comm-mode"));
        assertMessage("--comm-mode grow is not a communicator mode (abort, rebuild, blank, shrink)",
                "-np", "2", "--comm-mode", "grow", "M");
        assertMessage("--msg-mode nop is not a message mode (reset, cont)", "-np", "2", "--msg-mode", "nop", "M");
        assertMessage("--coll-mode x is not a collective mode (atomic, nonatomic)", "-np", "2", "--coll-mode", "x", "M");
        assertEquals("cont", parse("-np", "2", "--msg-mode", "cont", "M").options().get("msg-mode"));
        assertEquals("atomic", parse("-np", "2", "--coll-mode", "atomic", "M").options().get("coll-mode"));
        assertEquals("rebuild", parse("-np", "2", "--comm-mode", "rebuild", "M").options().get("comm-mode"));
        assertMessage("needs a value", "-np", "2", "--msg-mode");
        assertEquals("0", parse("-np", "2", "--comm-mode", "rebuild", "--opt", "spare-wait=0", "M").options()
                .get("spare-wait"));
        assertMessage("job option spare-wait needs a whole number >= 0, got '-5'",
                "-np", "2", "--comm-mode", "rebuild", "--opt", "spare-wait=-5", "M");
        assertMessage("job option max-respawns needs a whole number >= 0, got 'many'",
                "-np", "2", "--comm-mode", "rebuild", "--opt", "max-respawns=many", "M");
        assertMessage("job option fence-delay needs a whole number >= 0, got '-1'",
                "-np", "2", "--comm-mode", "shrink", "--opt", "fence-delay=-1", "M");
        assertEquals(0, AfterFailure.delayMs(parse("-np", "2", "--opt", "fence-delay=0", "M").options()));
        assertEquals(AfterFailure.DEFAULT_DELAY_MS, AfterFailure.delayMs(parse("-np", "2", "M").options()));
    }

    @Test
    void whichModesAbortOrRecover() {
        assertTrue(Job.abortsOnFailure(Map.of("comm-mode", "abort")));
        assertFalse(Job.abortsOnFailure(Map.of("comm-mode", "abort", "recovery-mode", "ignore")));
        assertFalse(Job.abortsOnFailure(Map.of("comm-mode", "shrink")));
        assertTrue(Job.recoversFromFailure(Map.of("comm-mode", "shrink")));
        assertTrue(Job.recoversFromFailure(Map.of("comm-mode", "blank", "recovery-mode", "auto")));
        assertFalse(Job.recoversFromFailure(Map.of("comm-mode", "shrink", "recovery-mode", "ignore")));
        assertFalse(Job.recoversFromFailure(Map.of("comm-mode", "abort", "recovery-mode", "manual")));
    }

    private static void assertMessage(String part, String... args) {
        UsageException e = assertThrows(UsageException.class, () -> parse(args));
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }

    @Test
    void transparentHugePagesAreAskedForWhenTheKernelOffersThemAndNoOptionNamesThem(@org.junit.jupiter.api.io.TempDir
                                                                                    java.nio.file.Path tmp) throws Exception {
        java.nio.file.Path f = tmp.resolve("enabled");
        List<String> on = List.of("-XX:+UseTransparentHugePages");
        java.nio.file.Files.writeString(f, "always [madvise] never\n");
        assertEquals(on, Launcher.hugePageOptions(f, List.of("--enable-native-access=ALL-UNNAMED"), List.of("-Xmx1g")));
        java.nio.file.Files.writeString(f, "[always] madvise never\n");
        assertEquals(on, Launcher.hugePageOptions(f, List.of(), List.of()));
        java.nio.file.Files.writeString(f, "always madvise [never]\n");
        assertEquals(List.of(), Launcher.hugePageOptions(f, List.of(), List.of()), "the kernel has THP off");
        assertEquals(List.of(), Launcher.hugePageOptions(tmp.resolve("missing"), List.of(), List.of()), "no THP here");
        java.nio.file.Files.writeString(f, "always [madvise] never\n");
        assertEquals(List.of(), Launcher.hugePageOptions(f, List.of(), List.of("-XX:-UseTransparentHugePages")),
                "the user's own choice");
        assertEquals(List.of(), Launcher.hugePageOptions(f, List.of("-XX:-UseTransparentHugePages"), List.of()),
                "conf/rank-jvm.options' choice");
    }
}
