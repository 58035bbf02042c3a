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

    private static char state(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2);
        } catch (IOException e) {
            return '?';
        }
    }
}
