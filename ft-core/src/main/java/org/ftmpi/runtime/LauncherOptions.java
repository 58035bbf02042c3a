package org.ftmpi.runtime;

import java.io.File;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Parses the ftmpirun command line into a {@link LaunchSpec}. Stateless. */
public final class LauncherOptions {
    /** Short-form aliases for main classes. */
    public static final Map<String, String> ALIASES = Map.of("bench", "org.ftmpi.bench.Main");
    /** The default communicator mode: a death aborts the job. */
    public static final String COMM_MODE_ABORT = "abort";
    /** FT-MPI communicator modes (seed 001 Appendix A, chapter 4). */
    public static final List<String> COMM_MODES = List.of("abort", "rebuild", "blank", "shrink");
    /** FT-MPI recovery modes (chapter 3); {@code abort} (of part 1) is kept as a synonym of {@code manual}, the default. */
    public static final List<String> RECOVERY_MODES = List.of("auto", "manual", "ignore", "abort");
    /** FT-MPI message modes (chapter 5). */
    public static final List<String> MSG_MODES = List.of("reset", "cont");
    /** FT-MPI collective modes (chapter 5.2). */
    public static final List<String> COLL_MODES = List.of("atomic", "nonatomic");
    /** JVM options that take the next token as their value. */
    private static final Set<String> JVM_TWO_TOKEN = Set.of("--add-modules", "--add-opens",
            "--add-exports", "--add-reads", "--module-path", "-p", "--upgrade-module-path",
            "--limit-modules", "--enable-native-access", "--patch-module", "--source");

    public static final String HELP = """
            Usage: ftmpirun -np N [options] java [jvm-options] MainClass [args...]
                   ftmpirun -np N [options] java [jvm-options] -jar app.jar [args...]
                   ftmpirun -np N [options] MainClass [args...]

            Starts N rank JVMs of an FT-MPI/J job on this machine and runs a job controller
            that exchanges their endpoints, forwards their output and watches them.

            Options:
              -np N, -n N           number of ranks (required)
              -cp PATH, --classpath PATH
                                    user class path (default: $CLASSPATH, else "."); also
                                    honoured as -cp/-classpath/--class-path after "java"
              --tag-output          prefix every output line with "[rank] "
              --comm-mode MODE      what a rank's death does (FT-MPI): "abort" (default) ends
                                    the job; "shrink" rebuilds MPI.COMM_WORLD from the
                                    survivors (contiguous, old order); "blank" keeps its size,
                                    failed ranks act as MPI.PROC_NULL; "rebuild" starts a new
                                    process for each failed rank (same rank; at most
                                    --opt max-respawns=N of them)
              --recovery-mode MODE  how recovery starts: "manual" (default: at MPI.recover()
                                    or MPI.COMM_WORLD.dup()), "auto" (in the first call that
                                    sees the failure); "ignore": never, the survivors go on
                                    without recovery (ULFM revoke/agree/shrink; the exit
                                    status still names the dead rank). After a failure the
                                    controller tells the survivors at once and defers its
                                    other work (killing a declared-failed process and its
                                    descendants, the death's lines) by --opt fence-delay=MS
                                    (default 200)
              -sp S, --spares S     start S warm spare JVMs (loaded, connected, waiting) that
                                    take over failed ranks under --comm-mode rebuild; when
                                    they run out, new processes are started; a rank that
                                    fails while spares still start waits for one (at most
                                    --opt spare-wait=MS, default 10000)
              --msg-mode MODE       "reset" (default): no message of an older epoch is ever
                                    delivered after a recovery; "cont": every point-to-point
                                    operation that returned success completes after it
              --coll-mode MODE      "nonatomic" (default): the plain algorithms; "atomic":
                                    every survivor gets the same outcome and receive
                                    buffers are all correct or all untouched
              --tcp-bind ADDR       address for the controller and TCP transport
                                    (default 127.0.0.1; job option tcp-bind)
              --transports LIST     comma-separated transports to use (job option transports)
              --bind-to core|none   core: each rank's threads run on one CPU of those
                                    ftmpirun may use (its affinity set; rank r on the r-th,
                                    round-robin); none (the default): the kernel places
                                    them (see docs/launcher.md); job option bind-to
              --report-bindings     each rank prints its binding on stderr
              --opt KEY=VALUE       pass a job option to every rank (repeatable)
              --mca KEY VALUE       same as --opt KEY=VALUE
              -x VAR, -x VAR=VALUE  export VAR (from this environment, or with VALUE) to ranks
              --timeout SECONDS     abort the job after SECONDS; exit status 124
              --hb-period MS        heartbeat period of the failure detector ring
                                    (default 50; 0 turns the ring off, and the beats of
                                    REBUILD replacements and warm spares to ftmpirun)
              --hb-timeout MS       declare a rank failed after MS without its heartbeat
                                    (default 2000; at least 2 x the period)
              --inject rank=R,after=MS,how=kill|stop
                                    fault injection: send SIGKILL (kill, the default) or
                                    SIGSTOP (stop, a hang) to rank R, MS milliseconds after
                                    the ranks started (repeatable)
              --inject rank=R,at-call=N,how=kill|stop
                                    rank R signals itself when it enters its N-th MPI call
                                    (point-to-point, probe, collective, communicator
                                    construction, agree/shrink; see docs/fault-tolerance.md)
              --inject rank=R,at-step=STEP,how=kill|stop
                                    rank R signals itself when it first reaches STEP inside
                                    the library: createIntercomm.lists, createIntercomm.ids
                                    (a leader after its exchange with the other leader),
                                    recovery.agreement (a survivor entering the recovery's
                                    agreement), recovery.agreed (it decided, not rebuilt)
              --aot auto|off        auto (the default): the rank JVMs map an AOT cache of the
                                    library (JDK 25), made once per build and JDK by a short
                                    training job before the first job that needs it, in
                                    $FTMPI_AOT_DIR or ~/.cache/ftmpi/aot; they start with
                                    its classes loaded and linked, which makes the first
                                    calls and the first failure fast; off: no cache
                                    (default: $FTMPI_AOT, else auto)
              --verbose, -v         controller logs to stderr
              --version             print the library version and exit
              -h, --help            print this help and exit

            Short-form aliases: bench = org.ftmpi.bench.Main

            Exit status: 0 when every rank exited 0 after MPI_Finalize; otherwise the status of
            the first rank that failed (128+s for a rank killed by signal s), the code given to
            MPI_Abort, 124 on --timeout, 130/143 on SIGINT/SIGTERM, 2 on a usage error, 1 on a
            launcher error.
            """;

    private LauncherOptions() {}

    public static LaunchSpec parse(String[] args, Map<String, String> env) throws UsageException {
        int np = -1;
        List<String> cp = new ArrayList<>();
        boolean tag = false;
        boolean verbose = false;
        boolean help = false;
        boolean version = false;
        String bind = null;
        long timeout = 0;
        Map<String, String> options = new LinkedHashMap<>();
        options.put("comm-mode", COMM_MODE_ABORT);
        String aotEnv = env.get("FTMPI_AOT");
        if (aotEnv != null && !aotEnv.isEmpty()) options.put(AotCache.OPTION, aotEnv); // --aot wins
        Map<String, String> export = new LinkedHashMap<>();
        List<String> jvm = new ArrayList<>();
        String main = null;
        String jar = null;
        List<String> progArgs = new ArrayList<>();
        List<FaultInjection> injections = new ArrayList<>();
        long hbPeriod = org.ftmpi.ft.detect.HeartbeatDetector.DEFAULT_PERIOD_MS;
        long hbTimeout = org.ftmpi.ft.detect.HeartbeatDetector.DEFAULT_TIMEOUT_MS;

        int i = 0;
        while (i < args.length) {
            String a = args[i];
            if (a.equals("java")) {
                String[] mainOrJar = parseJava(args, i + 1, jvm, cp, progArgs);
                main = mainOrJar[0];
                jar = mainOrJar[1];
                break;
            }
            if (!a.startsWith("-")) {
                main = ALIASES.getOrDefault(a, a);
                progArgs.addAll(List.of(args).subList(i + 1, args.length));
                break;
            }
            String name = a;
            String inline = null;
            if (a.startsWith("--") && a.indexOf('=') > 0) {
                name = a.substring(0, a.indexOf('='));
                inline = a.substring(a.indexOf('=') + 1);
            }
            i++;
            switch (name) {
                case "-np", "-n", "--np", "--n" -> {
                    String v = inline != null ? inline : value(args, i++, name);
                    np = positiveInt(name, v);
                }
                case "-cp", "--classpath", "-classpath", "--class-path" ->
                        cp.add(inline != null ? inline : value(args, i++, name));
                case "--tag-output", "-tag-output" -> tag = true;
                case "--comm-mode", "--recovery-mode", "--msg-mode", "--coll-mode" -> {
                    String key = name.substring(2);
                    options.put(key, mode(key, (inline != null ? inline : value(args, i++, name)).toLowerCase()));
                }
                case "-sp", "--sp", "--spares" -> {
                    String v = inline != null ? inline : value(args, i++, name);
                    if (!v.matches("\\d{1,4}")) {
                        throw new UsageException("option " + name + " needs a number of spare processes, got '" + v + "'");
                    }
                    options.put("spares", Integer.toString(Integer.parseInt(v)));
                }
                case "--tcp-bind" -> {
                    bind = inline != null ? inline : value(args, i++, name);
                    options.put("tcp-bind", bind);
                }
                case "--aot" -> options.put(AotCache.OPTION, inline != null ? inline : value(args, i++, name));
                case "--transports" -> options.put("transports", inline != null ? inline : value(args, i++, name));
                case "--bind-to", "-bind-to" -> options.put(Binding.BIND_TO, inline != null ? inline : value(args, i++, name));
                case "--report-bindings", "-report-bindings" -> options.put(Binding.REPORT, "true");
                case "--opt" -> {
                    String kv = inline != null ? inline : value(args, i++, name);
                    int eq = kv.indexOf('=');
                    if (eq <= 0) {
                        throw new UsageException("--opt expects KEY=VALUE, got '" + kv + "'");
                    }
                    options.put(kv.substring(0, eq), kv.substring(eq + 1));
                }
                case "--mca", "-mca" -> {
                    String k = value(args, i++, name);
                    options.put(k, value(args, i++, name + " " + k));
                }
                case "-x" -> {
                    String v = value(args, i++, name);
                    int eq = v.indexOf('=');
                    if (eq == 0) {
                        throw new UsageException("-x expects VAR or VAR=VALUE, got '" + v + "'");
                    }
                    if (eq > 0) {
                        export.put(v.substring(0, eq), v.substring(eq + 1));
                    } else if (env.get(v) != null) {
                        export.put(v, env.get(v));
                    }
                }
                case "--timeout", "-timeout" -> timeout = positiveInt(name, inline != null ? inline : value(args, i++, name));
                case "--hb-period" -> hbPeriod = millis(name, inline != null ? inline : value(args, i++, name), true);
                case "--hb-timeout" -> hbTimeout = millis(name, inline != null ? inline : value(args, i++, name), false);
                case "--inject" -> injections.add(FaultInjection.parse(inline != null ? inline : value(args, i++, name)));
                case "--verbose", "-v" -> verbose = true;
                case "--help", "-h", "-help" -> help = true;
                case "--version", "-V" -> version = true;
                default -> throw new UsageException("unknown option '" + a + "' (see ftmpirun --help)");
            }
            if (inline != null && (name.equals("--tag-output") || name.equals("--verbose")
                    || name.equals("--help") || name.equals("--version") || name.equals("--report-bindings"))) {
                throw new UsageException("option " + name + " takes no value");
            }
        }
        if (help || version) {
            return new LaunchSpec(Math.max(np, 0), jvm, ".", main, jar, progArgs, tag, verbose,
                    "127.0.0.1", timeout, options, export, help, version, List.of());
        }
        if (hbPeriod > 0 && hbTimeout < 2 * hbPeriod) {
            throw new UsageException("--hb-timeout " + hbTimeout + " must be at least twice --hb-period "
                    + hbPeriod);
        }
        options.put("hb-period", Long.toString(hbPeriod));
        options.put("hb-timeout", Long.toString(hbTimeout));
        if (np < 0) {
            throw new UsageException("missing -np N (number of ranks)");
        }
        for (String k : List.of("max-respawns", "spare-wait", AfterFailure.OPTION, Job.START_TIMEOUT)) {
            String v = options.get(k);
            if (v != null && !v.matches("\\d{1,9}")) {
                throw new UsageException("job option " + k + " needs a whole number >= 0, got '" + v + "'");
            }
        }
        String idle = options.get(Job.IDLE_TEARDOWN);
        if (idle != null && !Job.IDLE_TEARDOWN_VALUES.contains(idle)) {
            throw new UsageException("job option " + Job.IDLE_TEARDOWN + " is one of " + String.join(", ", Job.IDLE_TEARDOWN_VALUES)
                    + ", got '" + idle + "'");
        }
        String aot = options.get(AotCache.OPTION);
        if (aot != null && !AotCache.MODES.contains(aot)) {
            throw new UsageException("--aot (or $FTMPI_AOT) " + aot + " is not one of " + String.join(", ", AotCache.MODES));
        }
        String bindTo = options.get(Binding.BIND_TO);
        if (bindTo != null && !Binding.MODES.contains(bindTo)) {
            throw new UsageException("--bind-to " + bindTo + " is not a binding (" + String.join(", ", Binding.MODES) + ")");
        }
        if (options.containsKey(Binding.HOST_CPUS)) {
            throw new UsageException("job option " + Binding.HOST_CPUS + " is set by ftmpirun from its own CPU affinity;"
                    + " to restrict the CPUs, start ftmpirun under taskset -c LIST");
        }
        if (options.containsKey("spares") && !"rebuild".equals(options.get("comm-mode"))) {
            throw new UsageException("-sp (warm spares) needs --comm-mode rebuild");
        }
        if (main == null && jar == null) {
            throw new UsageException("missing the main class to run");
        }
        for (FaultInjection f : injections) {
            if (f.rank() >= np) {
                throw new UsageException("--inject rank=" + f.rank() + " but the job has " + np + " ranks");
            }
        }
        // at-call faults are injected by the ranks themselves (mpi.FaultPoint): a job option
        List<String> atCall = injections.stream().filter(FaultInjection::atCallFault)
                .map(FaultInjection::optionEntry).toList();
        if (!atCall.isEmpty()) options.put(FaultInjection.AT_CALL_OPTION, String.join(";", atCall));
        injections.removeIf(FaultInjection::atCallFault);
        String classpath = cp.isEmpty() ? defaultClasspath(env) : String.join(File.pathSeparator, cp);
        return new LaunchSpec(np, List.copyOf(jvm), classpath, main, jar, List.copyOf(progArgs), tag,
                verbose, bind == null ? "127.0.0.1" : bind, timeout, Map.copyOf(options),
                Map.copyOf(export), false, false, List.copyOf(injections));
    }

    /** Parses the tokens after "java"; returns {main class or null, jar or null}. */
    private static String[] parseJava(String[] args, int j, List<String> jvm, List<String> cp,
                                              List<String> progArgs) throws UsageException {
        String main = null;
        String jar = null;
        while (j < args.length) {
            String t = args[j];
            if (t.equals("-cp") || t.equals("-classpath") || t.equals("--class-path")) {
                cp.add(value(args, j + 1, t));
                j += 2;
            } else if (t.startsWith("--class-path=")) {
                cp.add(t.substring("--class-path=".length()));
                j++;
            } else if (t.equals("-jar")) {
                jar = value(args, j + 1, t);
                progArgs.addAll(List.of(args).subList(j + 2, args.length));
                break;
            } else if (t.equals("-m") || t.equals("--module") || t.startsWith("--module=")) {
                throw new UsageException("java " + t + " (module launch) is not supported by ftmpirun;"
                        + " use -cp PATH MainClass");
            } else if (JVM_TWO_TOKEN.contains(t)) {
                jvm.add(t);
                jvm.add(value(args, j + 1, t));
                j += 2;
            } else if (t.startsWith("-")) {
                jvm.add(t);
                j++;
            } else {
                main = t;
                progArgs.addAll(List.of(args).subList(j + 1, args.length));
                break;
            }
        }
        if (main == null && jar == null) {
            throw new UsageException("missing the main class (or -jar FILE) after 'java'");
        }
        return new String[] {main, jar};
    }

    /** Checks a value of {@code --comm-mode}, {@code --recovery-mode}, {@code --msg-mode} or {@code --coll-mode}. */
    static String mode(String key, String v) throws UsageException {
        List<String> valid = switch (key) {
            case "comm-mode" -> COMM_MODES;
            case "recovery-mode" -> RECOVERY_MODES;
            case "msg-mode" -> MSG_MODES;
            default -> COLL_MODES;
        };
        if (!valid.contains(v)) {
            String kind = key.substring(0, key.indexOf('-'));
            kind = switch (kind) {
                case "comm" -> "communicator";
                case "msg" -> "message";
                case "coll" -> "collective";
                default -> kind;
            };
            throw new UsageException("--" + key + " " + v + " is not a " + kind + " mode ("
                    + String.join(", ", valid) + ")");
        }
        return v;
    }

    private static String value(String[] args, int i, String option) throws UsageException {
        if (i >= args.length) {
            throw new UsageException("option " + option + " needs a value");
        }
        return args[i];
    }

    private static int positiveInt(String option, String v) throws UsageException {
        try {
            int n = Integer.parseInt(v);
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new UsageException("option " + option + " needs a positive integer, got '" + v + "'");
    }

    /** A duration in milliseconds: positive, or also 0 when {@code zeroOk}. */
    private static long millis(String option, String v, boolean zeroOk) throws UsageException {
        try {
            long n = Long.parseLong(v);
            if (n >= (zeroOk ? 0 : 1) && n <= 3_600_000) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new UsageException("option " + option + " needs milliseconds (" + (zeroOk ? "0" : "1")
                + " to 3600000), got '" + v + "'");
    }

    static String defaultClasspath(Map<String, String> env) {
        String c = env.get("CLASSPATH");
        return c == null || c.isEmpty() ? "." : c;
    }
}
