package org.ftmpi.runtime;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Locale;

/**
 * One {@code ftmpirun --inject rank=R,after=T|at-call=N|at-step=NAME,how=kill|stop} fault. With
 * {@code after=T} the launcher sends SIGKILL or SIGSTOP to rank R's process T milliseconds after
 * it started the ranks. With {@code at-call=N} the launcher passes the fault to the ranks (job
 * option {@code inject-at-call}) and rank R signals itself when it enters its N-th MPI call
 * (what counts as a call: {@code mpi.FaultPoint}, docs/fault-tolerance.md). With {@code
 * at-step=NAME} (one of {@link #STEPS}) rank R signals itself the first time it reaches that
 * point inside the library, which no call count can reach. A production feature (for rehearsing
 * failures), not test-only code.
 *
 * @param rank    the victim's rank in MPI_COMM_WORLD
 * @param afterMs delay after the ranks were started, in milliseconds (-1 with {@code at-call})
 * @param atCall  the 1-based MPI call of the victim at which it fails, or -1
 * @param atStep  the step inside the library at which it fails ({@link #STEPS}), or null
 * @param how     {@link #KILL} (SIGKILL: a crash) or {@link #STOP} (SIGSTOP: a hang)
 */
public record FaultInjection(int rank, long afterMs, long atCall, String atStep, String how) {
    public static final String KILL = "kill";
    public static final String STOP = "stop";
    static final String USAGE = "--inject expects rank=R,after=MS|at-call=N|at-step=NAME,how=kill|stop";

    /** {@code createIntercomm}: a leader has swapped the groups' lists with the other group's leader and has not broadcast them in its group. */
    public static final String STEP_INTERCOMM_LISTS = "createIntercomm.lists";
    /** {@code createIntercomm}: a leader has swapped with the other leader whether the new context id is free (the leaders' last exchange) and has not told its group. */
    public static final String STEP_INTERCOMM_IDS = "createIntercomm.ids";
    /** FT-MPI recovery: a survivor is about to contribute to the recovery's agreement (the others may be waiting in it). */
    public static final String STEP_RECOVERY_AGREEMENT = "recovery.agreement";
    /** FT-MPI recovery: the recovery's agreement has decided at this survivor, which has not rebuilt COMM_WORLD yet. */
    public static final String STEP_RECOVERY_AGREED = "recovery.agreed";
    /** The steps {@code at-step} accepts. */
    public static final List<String> STEPS = List.of(STEP_INTERCOMM_LISTS, STEP_INTERCOMM_IDS, STEP_RECOVERY_AGREEMENT,
            STEP_RECOVERY_AGREED);

    /** A timed fault ({@code after=MS}). */
    public FaultInjection(int rank, long afterMs, String how) {
        this(rank, afterMs, -1, null, how);
    }

    /** Whether the rank injects this fault itself (at its N-th MPI call or at a step). */
    public boolean atCallFault() {
        return atCall > 0 || atStep != null;
    }

    /** This fault as an entry of the job option {@link #AT_CALL_OPTION}: {@code R:N:how} or {@code R:@STEP:how}. */
    String optionEntry() {
        return rank + ":" + (atStep != null ? "@" + atStep : String.valueOf(atCall)) + ":" + how;
    }

    /**
     * Job option that hands the {@code at-call} and {@code at-step} faults to the ranks: {@code
     * R:N:how} or {@code R:@STEP:how} entries separated by {@code ;}.
     */
    public static final String AT_CALL_OPTION = "inject-at-call";

    /** File name after the job prefix of the mark an at-call victim leaves ({@link #markInjecting}). */
    static final String MARK = "inject-";

    private static Path markFile(Path dir, long jobId, long pid) {
        return dir.resolve(SharedMemoryFiles.prefix(jobId) + MARK + pid);
    }

    /**
     * The victim's side of an {@code at-call} fault, just before it signals itself: leaves a
     * mark (a file of the job's shared-memory directory, mode 0600, removed with the job's other
     * files) that says what it injects, so that the launcher's line for its death says so too
     * ({@link #injectedMark}), whatever becomes of the victim's own line. A mark that cannot be
     * written only leaves the launcher's line without it.
     */
    public static void markInjecting(JobInfo job, long pid, String what) {
        Path f = markFile(SharedMemoryFiles.dir(job.options()), job.jobId(), pid);
        try {
            Files.writeString(Files.createFile(f, PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rw-------"))), what);
        } catch (IOException | RuntimeException e) {
            // no mark: the launcher's death line just does not name the injection
        }
    }

    /** What process {@code pid} of job {@code jobId} said it injects ({@link #markInjecting}), or null. */
    static String injectedMark(Path dir, long jobId, long pid) {
        try {
            String s = Files.readString(markFile(dir, jobId, pid)).strip();
            return s.isEmpty() || s.length() > 200 ? null : s;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Parses {@code rank=R,after=T,how=kill|stop} (keys in any order). */
    public static FaultInjection parse(String spec) throws UsageException {
        Integer rank = null;
        Long after = null;
        Long atCall = null;
        String atStep = null;
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
                case "at-step" -> {
                    if (!STEPS.contains(v)) {
                        throw new UsageException("--inject at-step=" + v + ": expected one of " + String.join(", ", STEPS));
                    }
                    atStep = v;
                }
                default -> throw new UsageException("--inject: unknown key '" + k + "'; " + USAGE);
            }
        }
        int when = (after == null ? 0 : 1) + (atCall == null ? 0 : 1) + (atStep == null ? 0 : 1);
        if (rank == null || when != 1) {
            throw new UsageException(USAGE + " (rank and exactly one of after, at-call, at-step are required), got '"
                    + spec + "'");
        }
        return new FaultInjection(rank, after == null ? -1 : after, atCall == null ? -1 : atCall, atStep,
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
