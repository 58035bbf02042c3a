package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code ftmpirun --bind-to/--report-bindings}: parsing, the default, the CPU of each rank. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class BindingTest {
    private static LaunchSpec parse(String... args) throws UsageException {
        return LauncherOptions.parse(args, Map.of());
    }

    @Test
    void bindToAndReportBindingsBecomeJobOptions() throws UsageException {
        LaunchSpec s = parse("-np", "2", "--bind-to", "core", "--report-bindings", "M");
        assertEquals("core", s.options().get("bind-to"));
        assertEquals("true", s.options().get("report-bindings"));
        assertEquals("none", parse("-np", "2", "--bind-to=none", "M").options().get("bind-to"));
        assertEquals("none", parse("-np", "2", "-bind-to", "none", "M").options().get("bind-to"));
        assertEquals("core", parse("-np", "2", "--opt", "bind-to=core", "M").options().get("bind-to"));
        LaunchSpec plain = parse("-np", "2", "M");
        assertNull(plain.options().get("bind-to"), "no choice: Binding.resolve decides (none)");
        assertNull(plain.options().get("report-bindings"));
    }

    @Test
    void rejectsBadBindings() {
        assertMessage("--bind-to socket is not a binding (core, none)", "-np", "2", "--bind-to", "socket", "M");
        assertMessage("--bind-to Core is not a binding (core, none)", "-np", "2", "--opt", "bind-to=Core", "M");
        assertMessage("option --bind-to needs a value", "-np", "2", "--bind-to");
        assertMessage("option --report-bindings takes no value", "-np", "2", "--report-bindings=yes", "M");
        assertMessage("job option host-cpus is set by ftmpirun", "-np", "2", "--opt", "host-cpus=0", "M");
    }

    private static void assertMessage(String expected, String... args) {
        UsageException e = assertThrows(UsageException.class, () -> parse(args));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void notBoundUnlessAskedFor() {
        List<Integer> two = List.of(0, 1);
        assertEquals("none", Binding.resolve(null, two), "the default (measured: docs/benchmarks.md)");
        assertEquals("core", Binding.resolve("core", two));
        assertEquals("none", Binding.resolve("none", two));
        assertEquals("core", Binding.resolve("core", List.of(0)), "one CPU: every rank on it, as asked");
        assertEquals("none", Binding.resolve("core", List.of()), "no CPU list (not Linux): nothing to bind to");
    }

    @Test
    void ranksTakeConsecutiveAllowedCpusRoundRobin() {
        List<Integer> set = Binding.parseList("2-3,6");
        assertEquals(List.of(2, 3, 6), set);
        assertEquals(2, Binding.cpuOf(0, set));
        assertEquals(3, Binding.cpuOf(1, set));
        assertEquals(6, Binding.cpuOf(2, set));
        assertEquals(2, Binding.cpuOf(3, set));
    }

    @Test
    void jobOptionsCarryTheResolvedBindingAndTheHostCpus() {
        Map<String, String> o = Binding.jobOptions(Map.of("comm-mode", "abort", "bind-to", "core"), List.of(0, 1, 2, 3));
        assertEquals("core", o.get("bind-to"));
        assertEquals("0-3", o.get("host-cpus"));
        assertEquals("abort", o.get("comm-mode"));
        assertEquals("none", Binding.jobOptions(Map.of(), List.of(0, 1)).get("bind-to"));
        Map<String, String> none = Binding.jobOptions(Map.of("bind-to", "core"), List.of());
        assertEquals("none", none.get("bind-to"));
        assertFalse(none.containsKey("host-cpus"));
    }

    @Test
    void cpuListsParseAndFormatLikeTheKernels() {
        assertEquals(List.of(0, 1, 2, 3, 6, 8, 9), Binding.parseList("0-3,6,8-9"));
        assertEquals(List.of(5), Binding.parseList(" 5 "));
        assertEquals("0-3,6,8-9", Binding.formatList(List.of(0, 1, 2, 3, 6, 8, 9)));
        assertEquals("7", Binding.formatList(List.of(7)));
        assertEquals("0,2,4", Binding.formatList(List.of(0, 2, 4)));
        for (String bad : List.of("", "a", "3-1", "-1", "1,,2", "0-")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Binding.parseList(bad));
            assertTrue(e.getMessage().contains("is not a CPU list"), e.getMessage());
        }
    }

    @Test
    void allowedCpusComeFromCpusAllowedList(@TempDir Path dir) throws IOException {
        Path status = dir.resolve("status");
        Files.writeString(status, "Name:\tjava\nCpus_allowed:\t5\nCpus_allowed_list:\t0,2\nMems_allowed:\t1\n");
        assertEquals(List.of(0, 2), Binding.allowedCpus(status));
        assertEquals(List.of(), Binding.allowedCpus(dir.resolve("absent")), "not Linux: unknown");
        assertFalse(Binding.allowedCpus().isEmpty(), "this JVM's own set (the tests run on Linux)");
    }
}
