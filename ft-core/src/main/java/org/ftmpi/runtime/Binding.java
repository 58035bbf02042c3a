package org.ftmpi.runtime;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Process binding ({@code ftmpirun --bind-to core|none}, Open MPI's option of the same name).
 *
 * <p>The launcher decides ({@link #resolve}; not bound unless asked for) and hands the decision to every process as job
 * options: {@code bind-to} ({@code core} or {@code none}), {@code host-cpus} (the CPUs the
 * launcher may use, its {@code sched_getaffinity} set, as a list such as {@code 0-3,6}) and
 * {@code report-bindings}. Under {@code core} the process of rank {@code r} binds itself to
 * the {@code (r mod n)}-th of the {@code n} host CPUs ({@link #cpuOf}): {@link #applyFromOptions}
 * runs in {@link RankMain} before the user's {@code main}, and in a warm spare when it takes over
 * a rank, and calls {@code sched_setaffinity} for every thread of the JVM (threads started later
 * inherit the mask). Binding after the JVM started, rather than with {@code taskset} at exec,
 * keeps the JVM's ergonomics of the whole host (G1 and its GC and compiler threads sized for the
 * host's CPUs; docs/launcher.md, "Process binding", says what was measured).
 *
 * <p>Linux only; elsewhere (or when {@code /proc/self/status} cannot be read) the host offers
 * no CPU list and nothing is bound.
 */
public final class Binding {
    /** Values of {@code --bind-to} and of the job option {@code bind-to}. */
    public static final List<String> MODES = List.of("core", "none");
    /** Job option keys. */
    public static final String BIND_TO = "bind-to", HOST_CPUS = "host-cpus", REPORT = "report-bindings";

    private Binding() {}

    /**
     * The binding of a job: {@code requested} ({@code core} or {@code none}), {@code none} when
     * nothing was asked for or the host offers no CPU list (not Linux).
     *
     * <p>Not Open MPI's default (bind to cores when the ranks fit): measured on the shared
     * 2-CPU machine (docs/benchmarks.md, "Issue 3, session 8: binding"), a rank bound to one CPU
     * shares it with its own helper threads (failure detector, progress agent, GC, JIT) and with
     * whatever else the host runs there, and cannot move: under a load of 20 three of about
     * fifteen bound 2-rank benchmark runs lost a rank to a false "no heartbeat for 2000 ms"
     * (none of the unbound ones), and the mean latency was not better.
     */
    public static String resolve(String requested, List<Integer> hostCpus) {
        return hostCpus.isEmpty() || requested == null ? "none" : requested;
    }

    /**
     * {@code options} with the binding resolved ({@link #resolve}): {@code bind-to} is
     * {@code core} or {@code none}, and {@code host-cpus} lists {@code hostCpus} when known.
     */
    public static Map<String, String> jobOptions(Map<String, String> options, List<Integer> hostCpus) {
        Map<String, String> o = new LinkedHashMap<>(options);
        o.put(BIND_TO, resolve(options.get(BIND_TO), hostCpus));
        if (!hostCpus.isEmpty()) o.put(HOST_CPUS, formatList(hostCpus));
        return Map.copyOf(o);
    }

    /** The CPU of rank {@code rank}: consecutive CPUs of the host's set, round-robin. */
    public static int cpuOf(int rank, List<Integer> hostCpus) {
        return hostCpus.get(Math.floorMod(rank, hostCpus.size()));
    }

    /** The CPUs this process may run on ({@code Cpus_allowed_list} of /proc/self/status), or empty when unknown. */
    public static List<Integer> allowedCpus() {
        return allowedCpus(Path.of("/proc/self/status"));
    }

    static List<Integer> allowedCpus(Path status) {
        try (Stream<String> lines = Files.lines(status)) {
            return lines.filter(l -> l.startsWith("Cpus_allowed_list:")).findFirst()
                    .map(l -> parseList(l.substring(l.indexOf(':') + 1).trim())).orElse(List.of());
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }

    /**
     * Parses a kernel CPU list ({@code 0-3,6,8-9}) into ascending CPU numbers.
     *
     * @throws IllegalArgumentException naming the list when it is not one
     */
    public static List<Integer> parseList(String list) {
        TreeSet<Integer> cpus = new TreeSet<>();
        if (!list.isBlank()) {
            for (String part : list.split(",")) {
                String p = part.trim();
                int dash = p.indexOf('-');
                try {
                    int lo = Integer.parseInt(dash < 0 ? p : p.substring(0, dash));
                    int hi = dash < 0 ? lo : Integer.parseInt(p.substring(dash + 1));
                    if (lo < 0 || hi < lo || hi > 65535) throw new NumberFormatException();
                    for (int c = lo; c <= hi; c++) cpus.add(c);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("'" + list + "' is not a CPU list (such as 0-3,6)");
                }
            }
        }
        if (cpus.isEmpty()) throw new IllegalArgumentException("'" + list + "' is not a CPU list (such as 0-3,6)");
        return List.copyOf(cpus);
    }

    /** The kernel's list form of ascending CPU numbers: {@code [0,1,2,3,6]} is {@code 0-3,6}. */
    public static String formatList(List<Integer> cpus) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < cpus.size(); ) {
            int j = i;
            while (j + 1 < cpus.size() && cpus.get(j + 1) == cpus.get(j) + 1) j++;
            if (!sb.isEmpty()) sb.append(',');
            sb.append(cpus.get(i));
            if (j > i) sb.append('-').append(cpus.get(j));
            i = j + 1;
        }
        return sb.toString();
    }

    /**
     * Binds this process as the job options say for {@code rank} and, with
     * {@code report-bindings}, prints the outcome on stderr (Open MPI's {@code --report-bindings}).
     * A failure to bind is reported on stderr and the process runs unbound.
     */
    public static void applyFromOptions(Map<String, String> options, int rank, long pid) {
        String mode = options.getOrDefault(BIND_TO, "none");
        boolean report = Boolean.parseBoolean(options.get(REPORT));
        String cpus = options.get(HOST_CPUS);
        if (!mode.equals("core") && !report) return; // the default: nothing to do or say
        String outcome;
        if (!mode.equals("core") || cpus == null) {
            outcome = "not bound (cpus " + formatList(allowedCpus()) + ")";
        } else {
            int cpu = cpuOf(rank, parseList(cpus));
            try {
                bindAllThreads(cpu);
                outcome = "bound to cpu " + cpu;
            } catch (IOException e) {
                System.err.println("ftmpi: rank " + rank + " (pid " + pid + ") could not bind to cpu " + cpu
                        + " (" + e.getMessage() + "); running unbound");
                return;
            }
        }
        if (report) {
            System.err.println("ftmpirun: rank " + rank + " (pid " + pid + ") " + outcome);
            System.err.flush();
        }
    }

    /**
     * Binds every thread of this JVM to {@code cpu} with {@code sched_setaffinity}; repeats the
     * walk over /proc/self/task until it finds no thread it has not bound (a thread started by an
     * unbound one during the walk is caught by the next walk; later ones inherit the mask).
     *
     * @throws IOException when the kernel refuses (CPU not in the process's cpuset) or not on Linux
     */
    static void bindAllThreads(int cpu) throws IOException {
        MethodHandle set = Native.SET_AFFINITY;
        if (set == null) throw new IOException("sched_setaffinity is not available");
        Set<Integer> done = new HashSet<>();
        try (Arena arena = Arena.ofConfined()) {
            long bytes = Math.max(128, (cpu / 64 + 1) * 8L); // the kernel's cpumask_t of 1024 CPUs or more
            MemorySegment mask = arena.allocate(bytes, 8);
            mask.setAtIndex(ValueLayout.JAVA_LONG, cpu / 64, 1L << (cpu % 64));
            while (true) {
                List<Integer> fresh = new ArrayList<>();
                try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
                    tasks.forEach(t -> {
                        int tid = Integer.parseInt(t.getFileName().toString());
                        if (!done.contains(tid)) fresh.add(tid);
                    });
                }
                if (fresh.isEmpty()) return;
                for (int tid : fresh) {
                    int rc;
                    try {
                        rc = (int) set.invokeExact(tid, bytes, mask);
                    } catch (Throwable t) {
                        throw new IOException("sched_setaffinity: " + t, t);
                    }
                    // a thread that ended since the walk (ESRCH) needs nothing; any other refusal is
                    // the cpuset's (the first call, for a live thread, tells)
                    if (rc != 0 && Files.exists(Path.of("/proc/self/task/" + tid))) {
                        throw new IOException("sched_setaffinity refused cpu " + cpu);
                    }
                    done.add(tid);
                }
            }
        }
    }

    /** libc's {@code sched_setaffinity(pid_t, size_t, const cpu_set_t *)}, looked up once; null when absent. */
    private static final class Native {
        // null without native access (or not Linux): nothing can be bound
        static final MethodHandle SET_AFFINITY = Libc.downcall("sched_setaffinity",
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));
    }
}
