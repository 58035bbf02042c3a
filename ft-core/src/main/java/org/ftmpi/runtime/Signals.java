package org.ftmpi.runtime;

import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Sends a signal to a process with libc's {@code kill(2)} through the FFM API, so that
 * {@code ftmpirun --inject} and the failure benchmarks stop or kill a process at once: running
 * {@code kill(1)} instead forks the rank JVM (through jspawnhelper), which took 2-3 ms on the
 * 2-vCPU test machine and held a core while the failure it injects was being handled
 * (docs/benchmarks.md, "Session 16"). Falls back to {@code kill(1)} where the native call is not
 * available (no native access).
 */
public final class Signals {
    /** Linux signal numbers (the same on x86-64 and AArch64). */
    public static final int SIGKILL = 9, SIGSTOP = 19, SIGCONT = 18;

    private Signals() {}

    /**
     * Links the native call now (its first use spins classes for the downcall stub, milliseconds),
     * so that a later {@link #send} is a system call; returns whether it is native.
     */
    public static boolean prepare() {
        return Native.KILL != null;
    }

    /**
     * Sends {@code signal} to process {@code pid}; with SIGKILL to this process it does not
     * return.
     *
     * @throws IOException if the signal could not be sent (no such process, no permission)
     */
    public static void send(long pid, int signal) throws IOException {
        if (pid <= 0 || pid > Integer.MAX_VALUE) throw new IllegalArgumentException("pid " + pid + " is not a process id");
        MethodHandle kill = Native.KILL;
        if (kill != null) {
            int rc;
            try {
                rc = (int) kill.invokeExact((int) pid, signal);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IOException("kill(" + pid + ", " + signal + ") failed: " + t, t);
            }
            if (rc != 0) throw new IOException("kill(" + pid + ", " + signal + ") failed (no such process, or not permitted)");
            return;
        }
        try {
            int rc = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start().waitFor();
            if (rc != 0) throw new IOException("kill -" + signal + " " + pid + " exited with status " + rc);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while running kill -" + signal + " " + pid, e);
        }
    }

    /** libc's {@code int kill(pid_t, int)}, looked up once; null without native access. */
    private static final class Native {
        static final MethodHandle KILL = Libc.downcall("kill",
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    }
}
