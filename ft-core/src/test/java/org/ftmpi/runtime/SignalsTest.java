package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.ftmpi.testutil.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link Signals}: stop, continue and kill a real child process through libc's kill. */
@Timeout(60)
class SignalsTest {
    @Test
    void theNativeCallIsLinkedUnderTheTestsOptions() {
        assertTrue(Signals.prepare(), "--enable-native-access is set for the tests: kill is called natively");
    }

    @Test
    void stopContinueAndKillAChild() throws Exception {
        Process p = new ProcessBuilder("sleep", "60").start();
        try {
            Signals.send(p.pid(), Signals.SIGSTOP);
            Await.until("the child is stopped", Duration.ofSeconds(10), () -> state(p.pid()) == 'T');
            Signals.send(p.pid(), Signals.SIGCONT);
            Await.until("the child runs again", Duration.ofSeconds(10), () -> state(p.pid()) != 'T');
            Signals.send(p.pid(), Signals.SIGKILL);
            assertTrue(p.waitFor(10, TimeUnit.SECONDS), "SIGKILL ended the child");
            assertEquals(128 + 9, p.exitValue(), "the child ended by signal 9");
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void aProcessThatIsGoneIsAnIoErrorNamingIt() throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        long pid = p.pid(); // reaped: no such process (a reuse of the id within this test is not expected)
        IOException e = assertThrows(IOException.class, () -> Signals.send(pid, 0));
        assertTrue(e.getMessage().contains(Long.toString(pid)), e.getMessage());
    }

    @Test
    void aBadPidIsRefusedBeforeAnySignal() {
        // 0 and negative ids would signal process groups; never from here
        for (long pid : new long[] {0, -1, 1L << 40}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Signals.send(pid, Signals.SIGKILL));
            assertTrue(e.getMessage().contains("pid"), e.getMessage());
        }
    }

    /** The child of {@link #idleMovesEveryThreadOfAChildJvmToSchedIdle}: a JVM (many threads) that waits. */
    public static final class Sleeper {
        public static void main(String[] args) throws InterruptedException {
            System.out.println("ready");
            System.out.flush();
            Thread.sleep(120_000);
        }
    }

    @Test
    void idleMovesEveryThreadOfAChildJvmToSchedIdle() throws Exception {
        assertTrue(Signals.prepareIdle(), "--enable-native-access is set for the tests: sched_setscheduler is called natively");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // interpreted, one GC: no compiler threads coming and going
        Process p = new ProcessBuilder(java, "-Xint", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                Sleeper.class.getName()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
            Path tasks = Path.of("/proc", Long.toString(p.pid()), "task");
            String line = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream())).readLine();
            assertEquals("ready", line, "the child JVM started");
            assertTrue(threads(tasks) >= 5, "a JVM has threads: " + threads(tasks));
            String[] before = tasks.toFile().list(); // the JVM may start more threads meanwhile
            for (String tid : before) assertEquals(0, policy(tasks.resolve(tid)), "SCHED_OTHER before");
            int moved = Signals.idle(p.pid());
            assertTrue(moved >= before.length, "moved " + moved + " of " + before.length + " threads");
            for (String tid : before) {
                assertEquals(5, policy(tasks.resolve(tid)), "thread " + tid + " is SCHED_IDLE (5)");
            }
        } finally {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void idleOfAProcessThatIsGoneMovesNothing() throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        assertEquals(0, Signals.idle(p.pid()));
        assertEquals(0, Signals.idle(-5));
    }

    private static int threads(Path tasks) { // 0 while /proc has no entry yet
        String[] t = tasks.toFile().list();
        return t == null ? 0 : t.length;
    }

    /** Field 41 of {@code /proc/PID/task/TID/stat}: the scheduling policy (0 SCHED_OTHER, 5 SCHED_IDLE). */
    private static int policy(Path task) throws IOException {
        String stat = Files.readString(task.resolve("stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
        return Integer.parseInt(f[41 - 3]);
    }

    private static char state(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2);
        } catch (IOException e) {
            return '?';
        }
    }
}
