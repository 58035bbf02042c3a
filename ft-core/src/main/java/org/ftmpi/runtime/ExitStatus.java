package org.ftmpi.runtime;

/**
 * Describes a process exit status as Java reports it on POSIX systems: {@code 128 + s} for a
 * process killed by signal {@code s}, the exit code otherwise.
 */
public final class ExitStatus {
    private ExitStatus() {}

    /** True when {@code status} denotes death by a signal (129..192). */
    public static boolean isSignal(int status) {
        return status > 128 && status <= 128 + 64;
    }

    /** For example "killed by signal 9 (SIGKILL)" or "exited with status 3". */
    public static String describe(int status) {
        if (isSignal(status)) {
            int s = status - 128;
            String name = signalName(s);
            return "killed by signal " + s + (name == null ? "" : " (" + name + ")");
        }
        return "exited with status " + status;
    }

    public static String signalName(int s) {
        return switch (s) {
            case 1 -> "SIGHUP";
            case 2 -> "SIGINT";
            case 3 -> "SIGQUIT";
            case 4 -> "SIGILL";
            case 5 -> "SIGTRAP";
            case 6 -> "SIGABRT";
            case 7 -> "SIGBUS";
            case 8 -> "SIGFPE";
            case 9 -> "SIGKILL";
            case 10 -> "SIGUSR1";
            case 11 -> "SIGSEGV";
            case 12 -> "SIGUSR2";
            case 13 -> "SIGPIPE";
            case 14 -> "SIGALRM";
            case 15 -> "SIGTERM";
            default -> null;
        };
    }
}
