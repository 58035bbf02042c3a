package org.ftmpi.p2p;

import java.io.PrintStream;

/**
 * The recovery timeline of one process (job option {@code ft-trace}): {@code true} records each
 * phase of a failure's handling, {@code messages} also every message of the recovery's
 * agreement sent and received (the application's own agreements are not recorded), {@code all}
 * also the application's agreements ({@code agree}, {@code shrink}: start, messages, decision),
 * printed when the engine closes (MPI_Finalize). Each event is a {@link System#nanoTime()} stamp (CLOCK_MONOTONIC on Linux: one
 * clock for every process of a host) and two integers, written into a preallocated array, so
 * recording costs no allocation, string building or I/O on the failure path; the events are
 * printed afterwards, one line each ({@code ftmpi: trace: rank R: t=NS EVENT ...}), and
 * {@code bench/ft/timeline.sh} merges the lines of all processes of a job into one timeline.
 * "Afterwards" is {@link #printLater}: {@link #PRINT_DELAY_MS} later on a thread of the trace's
 * own, or at MPI_Finalize ({@link #flush}), whichever comes first. Printed at once, the lines
 * of a survivor that had recovered took a core from the survivors still recovering: building
 * them with {@code String.format} in code the JIT had never seen ran 1-1.4 ms on one of the 2
 * CPUs of the test machine while a slower survivor waited for it (session 20).
 *
 * <p><b>Note:</b> thread-safe (records come from the control thread, the progress agent and
 * the recovering thread).
 */
public final class FtTrace {
    /** Event kinds; their names are {@link #NAMES}. */
    public static final int NOTICE = 0, RECOVERY = 1, AGREE = 2, SENT = 3, RECEIVED = 4, DECIDED = 5,
            ANNOUNCED = 6, REPLACEMENTS = 7, CONNECT = 8, CONNECTED = 9, REBUILT = 10, DONE = 11,
            ASSIGNED = 12, INIT = 13, EXCHANGED = 14, WELCOMED = 15, HEARD = 16, MAIN = 17, CONTROL = 18,
            PREMADE = 19, ADOPTED = 20, REGISTERED = 21, SHM = 22;
    private static final String[] NAMES = {"notice of rank", "recovery entered, generation",
        "agreement started, context", "sent", "received", "decided, value", "replacement announced for rank",
        "every replacement announced", "connecting to the replacement of rank", "connected to rank",
        "COMM_WORLD rebuilt, generation", "recovery done, generation", "spare assigned rank", "MPI_Init started",
        "endpoints exchanged", "welcomed, generation", "told of the failure of rank", "user main started",
        "control connection authenticated", "connected to rank (made ahead)",
        "pre-made connections taken from the warm spare's listener:", "registered at the assignment as rank",
        "replacement reached over shm: rank"};
    /** Who told of a failure ({@link #HEARD}): the job (controller notice or heartbeat ring), or a transport. */
    private static final String[] SOURCES = {"by the job (controller or heartbeat ring)", "by a transport",
        "by another survivor"};
    /** Agreement message kinds by {@link FtProtocol} kind number. */
    private static final String[] KINDS = {"?", "REVOKE", "CONTRIB", "PROPOSE", "ACK", "COMMIT", "FAST"};
    /** Events kept until printed; {@link #ALL_CAPACITY} with {@code ft-trace=all}. */
    private static final int CAPACITY = 4096;
    /**
     * Events kept with {@code ft-trace=all} (5 MiB): {@code bench ft-agree} at np 8 records about
     * 40,000 (some 1,300 agreements before and after its failure).
     */
    static final int ALL_CAPACITY = 1 << 18;

    /**
     * A warm spare's events before its rank's engine exists: the assignment, the user's main
     * started, the control connection made ({@link #early}); the engine takes them over.
     */
    private static final long[] EARLY_TIME = new long[8];
    private static final int[] EARLY_KIND = new int[8], EARLY_ARG = new int[8];
    private static int early;
    private static volatile boolean spare;

    /** How long {@link #printLater} waits before it prints: longer than a warm recovery takes. */
    public static final long PRINT_DELAY_MS = 200;

    private final boolean on;
    private final boolean messages;
    private final boolean all;
    private final long[] time;
    private final int[] what, a, b;
    private int count, dropped;
    /** Printings handed to {@link #printLater}, oldest first (guarded by itself). */
    private final java.util.ArrayDeque<Late> late = new java.util.ArrayDeque<>();
    /** Held while printing, so that the printer thread and {@link #flush} keep each printing's lines together. */
    private final Object printing = new Object();

    /** One {@link #printLater}: a header line (its {@code toString}, built when printed), then the events. */
    private record Late(long dueNanos, PrintStream out, int rank, Object header) {}

    /** A trace for the value of job option {@code ft-trace}: {@code true}, {@code messages}, {@code all}, or off. */
    public FtTrace(String option) {
        all = "all".equals(option);
        messages = all || "messages".equals(option);
        on = messages || "true".equals(option);
        int capacity = !on ? 0 : all ? ALL_CAPACITY : CAPACITY;
        time = new long[capacity];
        what = new int[capacity];
        a = new int[capacity];
        b = new int[capacity];
        if (on) Thread.ofPlatform().daemon().name("ftmpi-trace").start(new Printer(this));
    }

    /** The {@code ftmpi-trace} thread's body: a class, not a lambda (a REBUILD replacement makes its trace in MPI_Init). */
    private record Printer(FtTrace trace) implements Runnable {
        @Override
        public void run() {
            trace.printLoop();
        }
    }

    /** Whether phases are recorded. */
    public boolean on() {
        return on;
    }

    /** Whether agreement messages are recorded. */
    boolean messages() {
        return messages;
    }

    /** Whether the application's agreements are recorded too ({@code ft-trace=all}), not only the recoveries'. */
    boolean all() {
        return all;
    }

    /** A warm spare was assigned {@code rank}: its later {@link #early} events are kept too. */
    public static void spareAssigned(int rank) {
        spare = true;
        early(ASSIGNED, rank);
    }

    /** Keeps a warm spare's event {@code kind} until its engine's trace takes it (nothing in other processes). */
    public static synchronized void early(int kind, int arg) {
        if (!spare || early == EARLY_TIME.length) return;
        EARLY_TIME[early] = System.nanoTime();
        EARLY_KIND[early] = kind;
        EARLY_ARG[early] = arg;
        early++;
    }

    /** Records event {@code kind} now. */
    public void record(int kind, int x, int y) {
        if (on) record(System.nanoTime(), kind, x, y);
    }

    /** Records event {@code kind} at {@code t}. */
    public synchronized void record(long t, int kind, int x, int y) {
        if (!on) return;
        if (count == time.length) {
            dropped++;
            return;
        }
        time[count] = t;
        what[count] = kind;
        a[count] = x;
        b[count] = y;
        count++;
    }

    /** Takes the spare assignment recorded before this process's engine existed. */
    void takeSpareAssignment() {
        synchronized (FtTrace.class) {
            for (int i = 0; i < early; i++) record(EARLY_TIME[i], EARLY_KIND[i], EARLY_ARG[i], 0);
            early = 0;
            spare = false;
        }
    }

    /**
     * Prints {@code header} (unless null; its {@code toString} is called then) and the events
     * recorded by then, {@link #PRINT_DELAY_MS} from now on the trace's thread or at
     * {@link #flush}, whichever comes first. Costs the failure path one small allocation.
     */
    public void printLater(PrintStream out, int rank, Object header) {
        if (!on) return;
        synchronized (late) {
            late.addLast(new Late(System.nanoTime() + PRINT_DELAY_MS * 1_000_000L, out, rank, header));
            late.notifyAll();
        }
    }

    /** Prints every {@link #printLater} still waiting, now (MPI_Finalize). */
    public void flush() {
        if (!on) return;
        synchronized (printing) {
            while (true) {
                Late l;
                synchronized (late) {
                    l = late.pollFirst();
                }
                if (l == null) return;
                emit(l);
            }
        }
    }

    /** The trace thread: prints each {@link #printLater} when it is due. */
    private void printLoop() {
        try {
            while (true) {
                synchronized (late) {
                    while (late.isEmpty()) late.wait();
                    long wait = late.peekFirst().dueNanos() - System.nanoTime();
                    if (wait > 0) {
                        late.wait(Math.max(1, wait / 1_000_000L));
                        continue;
                    }
                }
                synchronized (printing) {
                    Late l;
                    synchronized (late) {
                        l = late.pollFirst(); // null if flush took it meanwhile
                    }
                    if (l != null) emit(l);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void emit(Late l) {
        if (l.header() != null) l.out().println(l.header());
        print(l.out(), l.rank());
    }

    /** Prints the events recorded since the last call, one line each, and forgets them. */
    public void print(PrintStream out, int rank) {
        if (!on) return;
        StringBuilder s = new StringBuilder();
        synchronized (this) {
            for (int i = 0; i < count; i++) {
                s.append("ftmpi: trace: rank ").append(rank).append(": t=").append(time[i]).append(' ');
                int k = what[i];
                if (k == SENT || k == RECEIVED) {
                    s.append(k == SENT ? "sent " : "received ").append(a[i] >= 0 && a[i] < KINDS.length ? KINDS[a[i]] : "?")
                            .append(k == SENT ? " to rank " : " from rank ").append(b[i]);
                } else if (k == AGREE) {
                    s.append(NAMES[k]).append(' ').append(a[i]).append(", instance ").append(b[i]);
                } else if (k == HEARD) {
                    s.append(NAMES[k]).append(' ').append(a[i]).append(' ').append(SOURCES[b[i]]);
                } else if (k == PREMADE) {
                    s.append("connected to rank ").append(a[i]).append(" over the connection made ahead to the warm spare");
                } else if (k == SHM) {
                    s.append("replacement of rank ").append(a[i]).append(" reached over shm")
                            .append(b[i] == 1 ? " (pair file made ahead for the warm spare)" : "");
                } else if (k == DECIDED) {
                    s.append(NAMES[k]).append(' ').append(a[i]).append(", failed ").append(b[i]);
                } else {
                    s.append(NAMES[k]).append(' ').append(a[i]);
                }
                s.append('\n');
            }
            if (dropped > 0) s.append("ftmpi: trace: rank ").append(rank).append(": ").append(dropped)
                    .append(" events not recorded (buffer full)\n");
            count = 0;
            dropped = 0;
        }
        out.print(s);
        out.flush();
    }
}
