package org.ftmpi.runtime;

import java.util.Locale;

/**
 * One {@code ftmpirun --inject rank=R,after=T,how=kill|stop} fault: the launcher sends SIGKILL
 * or SIGSTOP to rank R's process T milliseconds after it started the ranks. A production
 * feature (for rehearsing failures), not test-only code.
 *
 * @param rank    the victim's rank in MPI_COMM_WORLD
 * @param afterMs delay after the ranks were started, in milliseconds
 * @param how     {@link #KILL} (SIGKILL: a crash) or {@link #STOP} (SIGSTOP: a hang)
 */
public record FaultInjection(int rank, long afterMs, String how) {
    public static final String KILL = "kill";
    public static final String STOP = "stop";
    static final String USAGE = "--inject expects rank=R,after=MS,how=kill|stop";

    /** Parses {@code rank=R,after=T,how=kill|stop} (keys in any order). */
    public static FaultInjection parse(String spec) throws UsageException {
        Integer rank = null;
        Long after = null;
        String how = null;
        for (String part : spec.split(",")) {
            int eq = part.indexOf('=');
            if (eq <= 0) {
                throw new UsageException(USAGE + ", got '" + spec + "'");
            }
            String k = part.substring(0, eq).trim().toLowerCase(Locale.ROOT);
            String v = part.substring(eq + 1).trim();
            switch (k) {
                case "rank" -> rank = (int) number(k, v, spec);
                case "after" -> after = number(k, v, spec);
                case "how" -> {
                    how = v.toLowerCase(Locale.ROOT);
                    if (!how.equals(KILL) && !how.equals(STOP)) {
                        throw new UsageException("--inject how=" + v + ": expected kill or stop");
                    }
                }
                case "at-call" -> throw new UsageException("--inject at-call=N is not supported in"
                        + " this version (the launcher cannot see MPI calls); use after=MS");
                default -> throw new UsageException("--inject: unknown key '" + k + "'; " + USAGE);
            }
        }
        if (rank == null || after == null) {
            throw new UsageException(USAGE + " (rank and after are required), got '" + spec + "'");
        }
        return new FaultInjection(rank, after, how == null ? KILL : how);
    }

    private static long number(String key, String v, String spec) throws UsageException {
        try {
            long x = Long.parseLong(v);
            if (x >= 0 && x <= Integer.MAX_VALUE) {
                return x;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new UsageException("--inject " + key + "=" + v + ": expected a non-negative integer in '"
                + spec + "'");
    }

    /** The signal's name as the launcher reports it. */
    String signalName() {
        return how.equals(STOP) ? "SIGSTOP" : "SIGKILL";
    }
}
