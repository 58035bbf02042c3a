package org.ftmpi.runtime;

import java.util.Locale;

/**
 * One {@code ftmpirun --inject rank=R,after=T|at-call=N,how=kill|stop} fault. With
 * {@code after=T} the launcher sends SIGKILL or SIGSTOP to rank R's process T milliseconds after
 * it started the ranks. With {@code at-call=N} the launcher passes the fault to the ranks (job
 * option {@code inject-at-call}) and rank R signals itself when it enters its N-th MPI call
 * (what counts as a call: {@code mpi.FaultPoint}, docs/fault-tolerance.md). A production
 * feature (for rehearsing failures), not test-only code.
 *
 * @param rank    the victim's rank in MPI_COMM_WORLD
 * @param afterMs delay after the ranks were started, in milliseconds (-1 with {@code at-call})
 * @param atCall  the 1-based MPI call of the victim at which it fails, or -1 with {@code after}
 * @param how     {@link #KILL} (SIGKILL: a crash) or {@link #STOP} (SIGSTOP: a hang)
 */
public record FaultInjection(int rank, long afterMs, long atCall, String how) {
    public static final String KILL = "kill";
    public static final String STOP = "stop";
    static final String USAGE = "--inject expects rank=R,after=MS|at-call=N,how=kill|stop";

    /** A timed fault ({@code after=MS}). */
    public FaultInjection(int rank, long afterMs, String how) {
        this(rank, afterMs, -1, how);
    }

    /** Whether the rank injects this fault itself at its N-th MPI call. */
    public boolean atCallFault() {
        return atCall > 0;
    }

    /** This fault as an entry of the job option {@code inject-at-call}: {@code R:N:how}. */
    String optionEntry() {
        return rank + ":" + atCall + ":" + how;
    }

    /** Parses {@code rank=R,after=T,how=kill|stop} (keys in any order). */
    public static FaultInjection parse(String spec) throws UsageException {
        Integer rank = null;
        Long after = null;
        Long atCall = null;
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
                case "at-call" -> {
                    atCall = number(k, v, spec);
                    if (atCall < 1) throw new UsageException("--inject at-call=" + v + ": expected N >= 1 in '" + spec + "'");
                }
                default -> throw new UsageException("--inject: unknown key '" + k + "'; " + USAGE);
            }
        }
        if (rank == null || (after == null) == (atCall == null)) {
            throw new UsageException(USAGE + " (rank and exactly one of after, at-call are required), got '"
                    + spec + "'");
        }
        return new FaultInjection(rank, after == null ? -1 : after, atCall == null ? -1 : atCall,
                how == null ? KILL : how);
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
