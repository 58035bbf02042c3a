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
        MethodHandle kill = Native.KILL;
        if (kill == null) return false;
        try {
            int rc = (int) kill.invokeExact((int) ProcessHandle.current().pid(), 0); // signal 0: a check, nothing sent
            return rc == 0;
        } catch (Throwable t) {
            return false;
        }
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

    /**
     * Links {@link #idle}'s native call and runs it once on no process, so that its first real
     * use is system calls only (a first {@code invokeExact} waits for the JIT to compile its
     * native stub: 0.5-3 ms on the 2-vCPU test machine); returns whether it is available.
     */
    public static boolean prepareIdle() {
        MethodHandle h = Native.SCHED_SETSCHEDULER;
        if (h == null) return false;
        try {
            int unused = (int) h.invokeExact(-1, Native.SCHED_IDLE, Native.ZERO_PARAM); // EINVAL: no such thread
            return true;
        } catch (Throwable t) {
            return false;
        }
    }

    /**
     * Moves every thread of process {@code pid} to the scheduling policy SCHED_IDLE, so that it
     * runs only on a CPU nothing else wants (one call per thread: Linux's scheduling calls name
     * a thread, not a process). Lowering one's own or a same-user process's policy needs no
     * privilege. Returns how many threads it moved: 0 where the native call or {@code /proc} is
     * missing or the process is gone.
     */
    public static int idle(long pid) {
        MethodHandle h = Native.SCHED_SETSCHEDULER;
        if (h == null || pid <= 0 || pid > Integer.MAX_VALUE) return 0;
        String[] tasks = new java.io.File("/proc/" + pid + "/task").list();
        if (tasks == null) return 0;
        int done = 0;
        for (String t : tasks) {
            int tid;
            try {
                tid = Integer.parseInt(t);
            } catch (NumberFormatException e) {
                continue;
            }
            try {
                if ((int) h.invokeExact(tid, Native.SCHED_IDLE, Native.ZERO_PARAM) == 0) done++;
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                return done;
            }
        }
        return done;
    }

    /** libc's {@code int kill(pid_t, int)}, looked up once; null without native access. */
    private static final class Native {
        static final MethodHandle KILL = Libc.downcall("kill",
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        /** Linux's SCHED_IDLE. */
        static final int SCHED_IDLE = 5;
        /** {@code int sched_setscheduler(pid_t, int policy, const struct sched_param *)}. */
        static final MethodHandle SCHED_SETSCHEDULER = Libc.downcall("sched_setscheduler",
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
        /** A {@code struct sched_param} with priority 0 (the only one SCHED_IDLE takes). */
        static final java.lang.foreign.MemorySegment ZERO_PARAM = java.lang.foreign.Arena.global().allocate(ValueLayout.JAVA_INT);
    }
}
