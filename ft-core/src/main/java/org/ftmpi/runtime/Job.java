package org.ftmpi.runtime;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One ftmpirun job: spawns the rank JVMs, feeds them the secret, forwards their output, watches
 * their exits, aborts and kills. Exit status rules in {@link LauncherOptions#HELP}.
 *
 * <p><b>Note:</b> thread-safe; job state is guarded by {@code this}. Exit callbacks run on
 * one {@code ftmpirun-wait-*} thread per process ({@link #watchExit}), timers on {@code ftmpirun-timer}.
 */
final class Job implements Controller.Events {
    /** Time between SIGTERM and SIGKILL when stopping ranks. */
    static final long KILL_GRACE_MS = 300;
    static final int TIMEOUT_EXIT = 124;
    private static final long DEATH_GRACE_NS = TimeUnit.MILLISECONDS.toNanos(250);

    private final LaunchSpec spec;
    private final List<String> rankCommand;
    /** The job options handed to the processes: the command line's, with the binding resolved ({@link Binding#jobOptions}). */
    private final Map<String, String> jobOptions;
    private final LauncherConsole console;
    private final int n;
    private final long jobId;
    private final byte[] secret = new byte[SecretLine.SECRET_BYTES];
    private final long[] procIds;
    private final Process[] procs;
    /** Ranks whose failure the survivors were told of (by exit or by a detector report). */
    private final boolean[] declaredFailed;
    /** Comm-mode rebuild: the rank is run by a replacement (a new process or a spare). */
    private final boolean[] replaced;
    /** Whether a failure aborts the job (see {@link #abortsOnFailure}). */
    private final boolean abortOnFailure;
    /** Whether the survivors recover from failures (see {@link #recoversFromFailure}). */
    private final boolean recovering;
    private final List<ProcessHandle> killList = new ArrayList<>();
    private final List<OutputForwarder> forwarders = java.util.Collections.synchronizedList(new ArrayList<>());
    /** How long a rank's output stream may stay silent and open after the job's end before ftmpirun stops waiting for it. */
    private static final long OUTPUT_IDLE_MS = 2_000;
    /** Released when every process the job started has exited. */
    private final CountDownLatch allExited = new CountDownLatch(1);
    /** Processes started and not exited yet; {@link #spawning} while the initial ones start. */
    private int running;
    private boolean spawning = true;
    /** Comm-mode rebuild: a failed rank is replaced by a new process. */
    private final boolean rebuild;
    /** Replacements started so far, and the limit (job option {@code max-respawns}, default unlimited). */
    private int respawns;
    private final int maxRespawns;
    /**
     * How long a failed rank waits for a warm spare that is still starting (job option
     * {@code spare-wait}, ms) before a new process is started instead: a spare that has started
     * is ahead of a new process, unless it hangs.
     */
    private final long spareWaitMs;
    static final long DEFAULT_SPARE_WAIT_MS = 10_000;
    /** Next process id: never reused, replacements continue after the initial ranks. */
    private long nextProcId;
    private String host;
    /** Warm spares (ftmpirun -sp) started and not assigned, by process id. */
    private final java.util.Map<Long, Process> spares = new java.util.LinkedHashMap<>();
    /** The job starts warm spares (REBUILD): the ranks make pair files ahead for them, removed after a maker's death. */
    private final boolean withSpares;
    /**
     * Job option {@code idle-teardown}: {@code auto} (the default), {@code true} or {@code false}.
     * When the death watch sees a process die, the controller, right after telling the
     * survivors, moves the dying process's threads to SCHED_IDLE ({@link Signals#idle}): its
     * teardown (the kernel freeing a JVM's memory, 2-6 ms of CPU on the test machine) then runs
     * when a CPU is free, not in turns with the survivors' recovery. {@code auto}: only when this
     * host runs more of the job's processes than ftmpirun may use CPUs, and the job starts no
     * process after a failure (any comm mode but REBUILD; {@link #idleTeardown}). A fresh-clone
     * CI run with {@code auto} on for every mode (session 20) saw a REBUILD job of two
     * simultaneous deaths stall (a starting spare not ready within 10 s, a survivor declared
     * hung). The teardown holds kernel locks that a starting JVM needs too (the mapping locks of
     * the files every JVM of the job maps: the JDK's modules, the AOT cache), and a SCHED_IDLE
     * holder on busy CPUs makes it wait: a priority inversion, not proven but not ruled out
     * either. Under SHRINK, BLANK, IGNORE and ABORT no process starts.
     */
    static final String IDLE_TEARDOWN = "idle-teardown";
    /** The values of {@link #IDLE_TEARDOWN}. */
    static final java.util.List<String> IDLE_TEARDOWN_VALUES = java.util.List.of("auto", "true", "false");

    /**
     * Job option {@code start-timeout} (ms, default {@link #DEFAULT_START_TIMEOUT_MS}; 0: none): a
     * rank, replacement or warm spare that has not reached MPI_Init (registered with the
     * controller) this long after ftmpirun started it is declared failed as a hung process:
     * the job ends (a rank of a job that has not started), or it is killed and replaced (a
     * REBUILD replacement), or it leaves the spare pool. Needs the heartbeats (not with
     * {@code --hb-period 0}).
     */
    static final String START_TIMEOUT = "start-timeout";
    /** Five minutes: far beyond a JVM's start on a loaded host, short of a week-long job's patience. */
    static final long DEFAULT_START_TIMEOUT_MS = 300_000;

    static long startTimeoutMs(java.util.Map<String, String> options) {
        return Long.parseLong(options.getOrDefault(START_TIMEOUT, Long.toString(DEFAULT_START_TIMEOUT_MS)));
    }

    /**
     * Whether a dying process's teardown goes to SCHED_IDLE: {@code value} of {@link
     * #IDLE_TEARDOWN} for a job of {@code processes} (ranks and spares) on a host of {@code cpus}
     * that starts processes after a failure ({@code startsProcesses}: REBUILD) or not.
     * Not by default where every process has a CPU: there it competes with nobody's recovery,
     * and on CPUs that never idle (ranks that busy-poll) a SCHED_IDLE process gets a tiny share,
     * so a large heap would stay allocated for seconds while a replacement starts.
     */
    static boolean idleTeardown(String value, int processes, int cpus, boolean startsProcesses) {
        return switch (value) {
            case "true" -> true;
            case "false" -> false;
            default -> cpus > 0 && processes > cpus && !startsProcesses;
        };
    }

    private boolean idleTeardown; // set in run() before any watcher thread starts
    /** The CPUs ftmpirun may use (its affinity, else the JVM's count), as the ranks are told in {@code host-cpus}. */
    private final int hostCpus;
    /** Spare processes that took over a rank. */
    private final java.util.Set<Process> assignedSpares = new java.util.HashSet<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "ftmpirun-timer");
        t.setDaemon(true);
        return t;
    });
    private Controller controller;
    /** A failure's work that the survivors' recovery does not need, deferred ({@link AfterFailure}). */
    private final AfterFailure afterFailure;
    private boolean ending;
    private Integer forcedCode;
    private int firstNonZero;
    private volatile boolean finished;
    /** The robust-futex death watch ({@link DeathWatch}), or null (off or unavailable). */
    private volatile DeathWatch deathWatch;
    /**
     * Ranks' processes whose death the watch reported before waitpid gave their status, with the
     * time the watch woke ({@link System#nanoTime}): their line is printed when the status arrives.
     */
    private final java.util.Map<Process, Watched> seenByWatch = new java.util.HashMap<>();

    /** A death the watch reported: the rank the process ran, and when the watch woke. */
    private record Watched(int rank, long seenNs) {}

    /** The job's shared-memory directory (job option shm-dir), resolved at the start. */
    private java.nio.file.Path shmDir;
    /** The process whose watched death set the job's status to {@link #WATCHED_STATUS}, until its real status arrives. */
    private Process placeholderOwner;

    /**
     * @param rankCommand the command before the user's main class and arguments:
     *                    {@code java [jvm-options] -cp CP org.ftmpi.runtime.RankMain}
     */
    Job(LaunchSpec spec, List<String> rankCommand, LauncherConsole console) {
        this.spec = spec;
        this.rankCommand = List.copyOf(rankCommand);
        this.console = console;
        this.n = spec.np();
        List<Integer> allowed = Binding.allowedCpus();
        this.jobOptions = Binding.jobOptions(spec.options(), allowed);
        this.hostCpus = allowed.isEmpty() ? Runtime.getRuntime().availableProcessors() : allowed.size();
        SecureRandom rnd = new SecureRandom();
        rnd.nextBytes(secret);
        jobId = rnd.nextLong() & Long.MAX_VALUE;
        procIds = new long[n];
        for (int i = 0; i < n; i++) {
            procIds[i] = i + 1L; // never reused: replacements continue the counter
        }
        nextProcId = n + 1L;
        procs = new Process[n];
        declaredFailed = new boolean[n];
        replaced = new boolean[n];
        abortOnFailure = abortsOnFailure(spec.options());
        recovering = recoversFromFailure(spec.options());
        rebuild = recovering && "rebuild".equals(spec.options().get("comm-mode"));
        withSpares = Integer.parseInt(spec.options().getOrDefault("spares", "0")) > 0;
        maxRespawns = Integer.parseInt(spec.options().getOrDefault("max-respawns", Integer.toString(Integer.MAX_VALUE)));
        spareWaitMs = Long.parseLong(spec.options().getOrDefault("spare-wait", Long.toString(DEFAULT_SPARE_WAIT_MS)));
        afterFailure = new AfterFailure(AfterFailure.delayMs(spec.options()), this::internalError);
    }

    /** Runs the job to its end and returns the launcher's exit status. */
    int run() throws IOException, InterruptedException {
        controller = new Controller(n, procIds, secret, InetAddress.getByName(spec.bindAddress()),
                console, this);
        if (ControlClient.heartbeatPeriodMs(jobOptions) > 0) {
            controller.watchBeats(ControlClient.heartbeatTimeoutMs(jobOptions), startTimeoutMs(spec.options()));
        }
        Thread hook = new Thread(this::onShutdown, "ftmpirun-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        console.log("job " + HexFormat.of().toHexDigits(jobId) + ": controller at " + controller.address()
                + ", " + n + " ranks");
        host = hostName();
        int nSpares = Integer.parseInt(spec.options().getOrDefault("spares", "0"));
        afterFailure.later(new Message(console, null, null)); // loads and runs the failure path's deferral now
        // and loads the death watch's other classes: loading one from the jar on the failure path
        // costs a few hundred us of this C1-only JVM's CPU between a death's notices and a warm
        // spare's ASSIGN (seen with -Xlog:class+load; docs/fault-tolerance.md, "Session 24"); the
        // last is what the JDK's process reaper loads from the runtime image when a rank's process ends
        shmDir = SharedMemoryFiles.dir(spec.options());
        Preload.classes(Job.class.getClassLoader(), Watched.class.getName(), SpareFilesOf.class.getName(),
                "java.lang.ProcessBuilder$NullOutputStream");
        // slot = process id - 1: the ranks, the spares, and room for replacements
        deathWatch = DeathWatch.create(spec.options(), jobId, n + nSpares + 256, this::deathSeen, console);
        if (deathWatch != null) {
            deathWatch.warm();
            controller.warmNotice(WATCHED_HOW);
        }
        idleTeardown = deathWatch != null && idleTeardown(spec.options().getOrDefault(IDLE_TEARDOWN, "auto"), n + nSpares,
                hostCpus, rebuild) && Signals.prepareIdle();
        for (int r = 0; r < n; r++) {
            try {
                spawn(r, host, false);
            } catch (IOException e) {
                synchronized (this) {
                    if (!ending) {
                        console.message("cannot start rank " + r + ": " + e.getMessage());
                    }
                }
                terminate(1);
                break;
            }
        }
        for (int k = 0; k < nSpares; k++) {
            try {
                spawnSpare();
            } catch (IOException e) {
                console.message("cannot start a warm spare: " + e.getMessage() + "; continuing with " + k);
                break;
            }
        }
        synchronized (this) {
            spawning = false;
            if (running == 0) allExited.countDown();
        }
        for (FaultInjection f : spec.injections()) {
            timer.schedule(() -> inject(f), f.afterMs(), TimeUnit.MILLISECONDS);
        }
        if (spec.timeoutSeconds() > 0) {
            timer.schedule(() -> {
                console.message("job timed out after " + spec.timeoutSeconds() + " s; stopping all ranks");
                terminate(TIMEOUT_EXIT);
            }, spec.timeoutSeconds(), TimeUnit.SECONDS);
        }
        allExited.await();
        afterFailure.flush();
        stopSpares();
        for (OutputForwarder f : List.copyOf(forwarders)) {
            f.awaitDrained(OUTPUT_IDLE_MS); // however long a slow reader of ftmpirun's output takes
        }
        controller.close();
        removeSharedMemory();
        int code;
        synchronized (this) {
            code = forcedCode != null ? forcedCode : firstNonZero;
            finished = true;
        }
        return code;
    }

    /** Starts the process of {@code rank}; a {@code replacement} runs with job option {@code restarted=true}. */
    private void spawn(int rank, String host, boolean replacement) throws IOException {
        List<String> cmd = new ArrayList<>(rankCommand);
        if (spec.mainClass() != null) {
            cmd.add(spec.mainClass());
        }
        cmd.addAll(spec.programArgs());
        ProcessBuilder pb = new ProcessBuilder(cmd);
        Map<String, String> env = pb.environment();
        for (String k : List.of(RuntimeEnv.RANK, RuntimeEnv.SIZE, RuntimeEnv.JOB_ID, RuntimeEnv.PROC_ID,
                RuntimeEnv.CONTROLLER, RuntimeEnv.HOST, RuntimeEnv.OPTIONS, RuntimeEnv.DEATH_WATCH)) {
            env.remove(k);
        }
        env.putAll(spec.exportEnv());
        env.put(RuntimeEnv.RANK, Integer.toString(rank));
        env.put(RuntimeEnv.SIZE, Integer.toString(n));
        env.put(RuntimeEnv.JOB_ID, HexFormat.of().toHexDigits(jobId));
        env.put(RuntimeEnv.PROC_ID, Long.toString(procIds[rank]));
        env.put(RuntimeEnv.CONTROLLER, controller.address());
        env.put(RuntimeEnv.HOST, host);
        putDeathWatch(env, procIds[rank]);
        Map<String, String> options = jobOptions;
        if (replacement) {
            // A replacement takes no part in the heartbeat ring (the survivors' rings skip the
            // failed rank for good); the controller still sees its exit at once, and its hang
            // by the beats on its control connection.
            options = replacementOptions(options);
        }
        env.put(RuntimeEnv.OPTIONS, RuntimeEnv.encodeOptions(options));
        Process p;
        synchronized (this) {
            if (ending) {
                throw new IOException("the job is being stopped");
            }
            p = pb.start();
            procs[rank] = p;
            killList.add(p.toHandle());
            running++;
        }
        console.log("started rank " + rank + " as pid " + p.pid());
        controller.watchStart(rank, procIds[rank], p.pid()); // stopped before its first beat
        forwarders.add(OutputForwarder.start(p.getInputStream(), console, false, rank, spec.tagOutput()));
        forwarders.add(OutputForwarder.start(p.getErrorStream(), console, true, rank, spec.tagOutput()));
        watchExit(p, "ftmpirun-wait-" + rank, x -> rankExited(rank, x));
        OutputStream stdin = p.getOutputStream();
        try {
            stdin.write(SecretLine.format(secret));
            stdin.flush();
            if (rank != 0) {
                stdin.close();
            } else {
                pumpStdin(stdin);
            }
        } catch (IOException e) {
            // the rank died at once; its exit is reported by watchExit
        }
    }

    /**
     * The job options of a replacement or warm spare: {@code restarted}, no heartbeat ring, and,
     * when the job runs the ring, beats on the control connection ({@code hb-control}, ms) that
     * the controller watches ({@link Controller#watchBeats}).
     */
    private static Map<String, String> replacementOptions(Map<String, String> job) {
        Map<String, String> o = new java.util.LinkedHashMap<>(job);
        o.put("restarted", "true");
        long period = ControlClient.heartbeatPeriodMs(job);
        if (period > 0) {
            o.put(ControlClient.HB_CONTROL,
                    Long.toString(ControlClient.controlBeatMs(period, ControlClient.heartbeatTimeoutMs(job))));
        }
        o.put("hb-period", "0");
        return o;
    }

    /**
     * Starts a warm spare (ftmpirun -sp): a rank JVM without a rank (FTMPI_SPARE=1) that loads
     * its classes, connects to the controller and waits to take over a failed rank.
     */
    private void spawnSpare() throws IOException {
        List<String> cmd = new ArrayList<>(rankCommand);
        if (spec.mainClass() != null) cmd.add(spec.mainClass());
        cmd.addAll(spec.programArgs());
        ProcessBuilder pb = new ProcessBuilder(cmd);
        Map<String, String> env = pb.environment();
        env.remove(RuntimeEnv.RANK);
        env.remove(RuntimeEnv.DEATH_WATCH);
        env.putAll(spec.exportEnv());
        long id;
        synchronized (this) {
            id = nextProcId++;
        }
        Map<String, String> options = replacementOptions(jobOptions);
        env.put(RuntimeEnv.SPARE, "1");
        putDeathWatch(env, id);
        env.put(RuntimeEnv.SIZE, Integer.toString(n));
        env.put(RuntimeEnv.JOB_ID, HexFormat.of().toHexDigits(jobId));
        env.put(RuntimeEnv.PROC_ID, Long.toString(id));
        env.put(RuntimeEnv.CONTROLLER, controller.address());
        env.put(RuntimeEnv.HOST, host);
        env.put(RuntimeEnv.OPTIONS, RuntimeEnv.encodeOptions(options));
        Process p;
        synchronized (this) {
            if (ending) throw new IOException("the job is being stopped");
            p = pb.start();
            spares.put(id, p);
            killList.add(p.toHandle());
        }
        console.log("started warm spare process id " + id + " as pid " + p.pid());
        controller.watchStart(-1, id, p.pid()); // stopped before it reports ready
        forwarders.add(OutputForwarder.start(p.getInputStream(), console, false, -1, spec.tagOutput()));
        forwarders.add(OutputForwarder.start(p.getErrorStream(), console, true, -1, spec.tagOutput()));
        watchExit(p, "ftmpirun-wait-spare-" + id, x -> spareExited(id, x));
        try (OutputStream stdin = p.getOutputStream()) {
            stdin.write(SecretLine.format(secret));
        } catch (IOException e) {
            // the spare died at once; its exit is reported by watchExit
        }
    }

    private void putDeathWatch(Map<String, String> env, long procId) {
        String v = deathWatch == null ? null : deathWatch.envFor(procId);
        if (v != null) env.put(RuntimeEnv.DEATH_WATCH, v);
    }

    @Override
    public void processJoined(long procId) {
        if (deathWatch != null) deathWatch.watch(procId);
    }

    /**
     * The death watch saw process {@code procId} die (before waitpid can): a rank that had not
     * finalized is declared failed at once, exactly as its exit would be (fence, notice to every
     * survivor, the job's policy); its line, with the exit status, is printed when waitpid
     * returns ({@link #rankExited}), which reports nothing a second time. A dead warm spare is
     * no longer handed out.
     *
     * <p>The survivors are told first, without this job's monitor: the waitpid thread of an
     * earlier death holds that monitor while it logs, and under load it is preempted there for
     * tens of ms (seen with sched_switch tracing: a second death's watcher woke 0.5 ms after the
     * SIGKILL and then waited 54 ms for the monitor, behind the first death's
     * {@code ftmpirun-wait-3}). A notice sent here and again by another path is delivered once
     * (ranks keep the set of delivered process ids).
     */
    private void deathSeen(long procId, long pid, long seenNs) {
        int told = controller.unfinalizedRank(procId);
        if (told >= 0) controller.notifyFailure(told, procId, WATCHED_HOW); // every survivor waits for it
        long sentNs = System.nanoTime();
        boolean eofFirst = controller.connectionEnded(procId);
        Process dead = null;
        synchronized (this) {
            if (ending) return;
            for (int r = 0; r < n && dead == null; r++) {
                Process p = procs[r];
                if (p == null || procIds[r] != procId) continue;
                if (controller.hasFinalized(r)) return;
                if (declaredFailed[r]) {
                    // waitpid's report took the monitor first: its line says how the process ended
                    int rr = r;
                    if (console.verbose()) logLater(() -> "death watch: rank " + rr + " (pid " + pid + ", process id " + procId
                            + ") died before MPI_Finalize; declared failed by waitpid's report first"
                            + (told == rr ? " (the watch's notice to the survivors had gone out already)" : ""));
                    return;
                }
                declaredFailed[r] = true;
                if (r != told) controller.notifyFailure(r, procId, WATCHED_HOW);
                seenByWatch.put(p, new Watched(r, seenNs));
                Integer code = forcedCode;
                int first = firstNonZero;
                actOnDeath(r, WATCHED_STATUS, null);
                if (!java.util.Objects.equals(code, forcedCode) || first != firstNonZero) placeholderOwner = p;
                trace(r, "watch_ns ", seenNs, sentNs);
                int rr = r;
                if (console.verbose()) logLater(() -> "death watch: rank " + rr + " (pid " + pid + ", process id " + procId
                        + ") died before MPI_Finalize; declared failed before its exit status is known; first signal: "
                        + (eofFirst ? "its control connection's end (the watch woke later)" : "the death watch"));
                dead = p;
            }
            if (dead == null && spares.containsKey(procId)) {
                console.log("death watch: warm spare (process id " + procId + ", pid " + pid + ") died");
                controller.dropSpare(procId);
            }
        }
        // It is dying already (the kernel is tearing it down): one kill(2) in case it is not,
        // no walk of /proc for its descendants on the survivors' critical path. A child it
        // started is not a process of the job (it has no rank and could never register) and the
        // kernel hands it to init once the dead process's last thread has exited, a few ms from
        // now, so a later walk would not find it; a death seen through waitpid never killed one
        // either. Processes declared failed while alive (the heartbeat ring) are fenced with
        // their descendants: failureReported.
        // Through its ProcessHandle: Process.destroyForcibly also closes this end of the
        // process's stdout and stderr pipes, and what it wrote before it died and the forwarders
        // had not read yet was lost (its last lines, e.g. an --inject line; session 20).
        if (dead != null) {
            // Its teardown, ms of CPU, runs when nothing else wants one. After the bookkeeping
            // above: lowering it walks /proc/PID/task (one system call per thread), and before,
            // a quick teardown's waitpid report could take the monitor first.
            if (idleTeardown) Signals.idle(pid);
            dead.toHandle().destroyForcibly();
        }
    }

    /**
     * A --verbose line, built and printed {@link AfterFailure later}. Callers test
     * {@code console.verbose()} first: without -v no lambda is linked on the failure path (the
     * first execution of a lambda's call site spins a class, ms of CPU in this C1-only JVM).
     */
    private void logLater(java.util.function.Supplier<String> line) {
        afterFailure.later(() -> console.log(line.get()));
    }

    /**
     * Deferred work of a failure ({@link AfterFailure}): fences {@code fence} if not null, then
     * prints {@code text} if not null. A class, not a lambda, loaded at the job's start.
     */
    private record Message(LauncherConsole console, Process fence, String text) implements Runnable {
        @Override
        public void run() {
            if (fence != null) Job.fence(fence);
            if (text != null) console.message(text);
        }
    }

    /**
     * Deferred work of a failure under REBUILD with warm spares: removes the pair files the dead
     * process {@code procId} made ahead for the spares ({@link SharedMemoryFiles#removeSpareFilesOf}),
     * which only it used and nobody else removes before the job's end (2 MiB each). A class, not
     * a lambda, as {@link Message}.
     */
    private record SpareFilesOf(java.nio.file.Path dir, long jobId, long procId) implements Runnable {
        @Override
        public void run() {
            SharedMemoryFiles.removeSpareFilesOf(dir, jobId, procId);
        }
    }

    /** Under REBUILD with warm spares: removes the files dead process {@code procId} made ahead for them, after the failure's delay. */
    private void removeSpareFilesLater(long procId) {
        if (withSpares) afterFailure.later(new SpareFilesOf(shmDir, jobId, procId));
    }

    /** What survivors are told of a death the watch saw, before its exit status is known. */
    static final String WATCHED_HOW = "died (its process ended before MPI_Finalize)";

    /** Job status for a watched death until its process's real status arrives: as if SIGKILLed. */
    static final int WATCHED_STATUS = 128 + 9;

    /**
     * Runs {@code then} as soon as {@code p} has exited, on a thread of its own that waits in
     * {@link Process#waitFor()}: the JDK's reaper thread (in waitpid) wakes it directly. Not
     * {@code Process.onExit()}, whose callbacks run on the common fork-join pool: its worker
     * threads end after 60 s without work, so the first death of a long job paid for starting one
     * (in this C1-only JVM) between waitpid and the survivors' notice.
     */
    private static void watchExit(Process p, String name, java.util.function.Consumer<Process> then) {
        Thread.ofPlatform().name(name).daemon().start(() -> {
            boolean interrupted = false;
            while (true) {
                try {
                    p.waitFor();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true; // nobody interrupts these threads; keep waiting
                }
            }
            if (interrupted) Thread.currentThread().interrupt();
            then.accept(p);
        });
    }

    @Override
    public void spareSilent(long procId, String how) {
        Process p;
        synchronized (this) {
            p = spares.get(procId);
            if (p == null || ending) return; // taken over meanwhile (its rank's beats watch it now), or the end
        }
        console.message("warm spare (pid " + p.pid() + ", process id " + procId + ") " + how + "; killed it (SIGKILL)");
        fence(p); // its exit takes it out of the job (spareExited)
    }

    /** A spare process ended: unused (the job ended, or it died waiting), or as a rank it took over. */
    private void spareExited(long id, Process p) {
        int rank = -1;
        synchronized (this) {
            if (spares.remove(id) != null) {
                if (!ending && !allDone()) {
                    console.message("warm spare (process id " + id + ", pid " + p.pid() + ") "
                            + ExitStatus.describe(p.exitValue()) + "; " + spares.size() + " spare(s) left");
                }
                if (spares.isEmpty() && !ending) {
                    for (int r : controller.cancelSpareWaits()) {
                        console.message("no warm spare is left for rank " + r + "; starting a new process");
                        startReplacement(r);
                    }
                }
                return;
            }
            for (int r = 0; r < n; r++) if (procs[r] == p) rank = r;
            Watched w = seenByWatch.get(p); // its rank may have been handed on already
            if (w != null) rank = w.rank();
        }
        if (rank >= 0) {
            rankExited(rank, p);
        } else {
            processEnded(); // a spare that took over a rank and was replaced in turn
        }
    }

    private synchronized boolean allDone() {
        return running == 0 && !spawning;
    }

    /** At the end of the job: the waiting spares are released (they exit 0), stragglers killed. */
    private void stopSpares() {
        List<ProcessHandle> left;
        synchronized (this) {
            left = spares.values().stream().map(Process::toHandle).toList();
        }
        controller.releaseSpares();
        waitGone(left, 2_000);
        left.forEach(ProcessHandle::destroyForcibly);
    }

    private static void pumpStdin(OutputStream to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[8192];
            try (InputStream in = new FileInputStream(FileDescriptor.in); to) {
                int k;
                while ((k = in.read(buf)) >= 0) {
                    to.write(buf, 0, k);
                    to.flush();
                }
            } catch (IOException ignored) {
                // rank 0 exited or our stdin failed: stop forwarding
            }
        }, "ftmpirun-stdin");
        t.setDaemon(true);
        t.start();
    }

    private void rankExited(int rank, Process p) {
        int status = p.exitValue();
        long exitedId;
        synchronized (this) {
            Watched seen = seenByWatch.remove(p);
            if (seen != null) {
                watchedExit(rank, p, status, seen.seenNs());
                if (procs[rank] == p) controller.rankExited(rank, procIds[rank]);
                processEnded();
                return;
            }
            if (procs[rank] != p) { // a replaced process (comm-mode rebuild): its failure was handled
                console.log("replaced process of rank " + rank + " (pid " + p.pid() + ") " + ExitStatus.describe(status));
                processEnded();
                return;
            }
            exitedId = procIds[rank];
        }
        try {
            controller.rankExited(rank, exitedId);
            synchronized (this) {
                console.log("rank " + rank + " (pid " + p.pid() + ") " + ExitStatus.describe(status));
                if (ending) {
                    return;
                }
                boolean failed = !controller.hasFinalized(rank)
                        && (status != 0 || controller.isRegistered(rank));
                // Under FT-MPI recovery a failed rank is recovered from: its status is not the job's.
                if (status != 0 && firstNonZero == 0 && !(failed && recovering)) {
                    firstNonZero = status;
                }
                if (failed && !declaredFailed[rank]) {
                    declaredFailed[rank] = true;
                    reportDeathAndAbort(rank, p, status);
                }
            }
        } catch (RuntimeException e) {
            internalError(e);
        } finally {
            processEnded();
        }
    }

    private synchronized void processEnded() {
        if (--running == 0 && !spawning) allExited.countDown();
    }

    /**
     * Names the dead rank and how it died, tells the survivors, and under comm-mode abort stops
     * the job.
     */
    private synchronized void reportDeathAndAbort(int rank, Process p, int status) {
        long seenNs = System.nanoTime();
        controller.notifyFailure(rank, procIds[rank], how(status));
        trace(rank, "waitpid_ns ", seenNs, System.nanoTime());
        deathMessage(deathLine(rank, p, status));
        actOnDeath(rank, status, null);
    }

    /**
     * Prints a death's line: at once when the job aborts, else {@link AfterFailure later}, after
     * the survivors' recovery.
     */
    private void deathMessage(String line) {
        if (abortOnFailure) console.message(line);
        else afterFailure.later(new Message(console, null, line));
    }

    /** The exit status of a death the watch reported arrived: the line it would have had, then the status. */
    private void watchedExit(int rank, Process p, int status, long seenNs) {
        long afterNs = System.nanoTime() - seenNs;
        if (console.verbose()) logLater(() -> String.format("death watch: rank %d (pid %d) %s; waitpid returned %.1f ms after the watch",
                rank, p.pid(), ExitStatus.describe(status), afterNs / 1e6));
        deathMessage(deathLine(rank, p, status));
        if (placeholderOwner == p) {
            placeholderOwner = null;
            int code = status != 0 ? status : 1;
            if (forcedCode != null && forcedCode == WATCHED_STATUS) forcedCode = code;
            if (firstNonZero == WATCHED_STATUS) firstNonZero = code;
        }
    }

    /** Job option death-trace: when the controller saw a death and when its notices were sent. */
    private void trace(int rank, String seenKey, long seenNs, long sentNs) {
        if ("true".equals(spec.options().get(ControlClient.DEATH_TRACE))) {
            console.message("death-trace rank " + rank + " " + seenKey + seenNs + " sent_ns " + sentNs);
        }
    }

    private static String how(int status) {
        return ExitStatus.describe(status) + (ExitStatus.isSignal(status) ? "" : " before MPI_Finalize");
    }

    /** "rank R (pid P) was killed by signal 9 (SIGKILL); the survivors continue (...)". */
    private String deathLine(int rank, Process p, int status) {
        String what = "rank " + rank + " (pid " + p.pid() + ") " + (ExitStatus.isSignal(status) ? "was " : "") + how(status);
        // a victim of --inject at-call marked its injection; a job without such faults reads nothing
        String injected = spec.options().containsKey(FaultInjection.AT_CALL_OPTION)
                ? FaultInjection.injectedMark(SharedMemoryFiles.dir(spec.options()), jobId, p.pid()) : null;
        if (injected != null) what += " (--inject: " + injected + ")";
        return what + "; " + (abortOnFailure ? "aborting the job (comm-mode abort)"
                : recovering ? "the survivors recover (" + modes() + ")"
                : "the survivors continue (recovery-mode ignore)");
    }

    /**
     * The job's policy for a dead rank whose survivors were told: abort, recover (REBUILD:
     * respawn) or continue. With {@code noticeHow} the survivors are told first.
     */
    private synchronized void actOnDeath(int rank, int status, String noticeHow) {
        if (noticeHow != null) controller.notifyFailure(rank, procIds[rank], noticeHow);
        removeSpareFilesLater(procIds[rank]);
        int code = status != 0 ? status : 1;
        if (abortOnFailure) {
            controller.notifyAbort(code, "rank " + rank + " " + (noticeHow != null ? noticeHow : how(status)));
            terminate(code);
        } else if (recovering) {
            if (checkAllLost(code) || !rebuild) return;
            if (controller.exchangeComplete()) {
                respawn(rank);
            } else {
                // A replacement joins a started job (the survivors' recovery connects to it);
                // before every rank had its table there is no job to join, and the ranks
                // waiting in MPI_Init would wait for the lost one's replacement for ever.
                String why = "rank " + rank + " failed before every rank had finished MPI_Init; comm-mode rebuild"
                        + " replaces ranks of a started job only";
                console.message(why + "; aborting the job");
                controller.notifyAbort(code, why);
                terminate(code);
            }
        } else if (firstNonZero == 0) {
            firstNonZero = code;
        }
    }

    /** {@code comm-mode X, recovery-mode Y} of this job, for messages. */
    private String modes() {
        return "comm-mode " + spec.options().get("comm-mode") + ", recovery-mode "
                + spec.options().getOrDefault("recovery-mode", "manual");
    }

    /**
     * FT-MPI's first pathological failure (spec 3.1): every process of the job failed, so nobody
     * is left to recover. The job ends with the status of the last failure.
     */
    private boolean checkAllLost(int status) {
        for (int r = 0; r < n; r++) {
            Process q = procs[r];
            if (!declaredFailed[r] && q != null && (q.isAlive() || controller.hasFinalized(r))) return false;
        }
        console.message("every rank of the job has failed; nothing is left to recover (" + modes() + ")");
        if (firstNonZero == 0) firstNonZero = status;
        return true;
    }

    /**
     * Comm-mode rebuild: starts a new process (new process id) for the failed rank; it joins the
     * job when the survivors' recovery connects to it. Without resources (the spawn fails, or
     * {@code max-respawns} replacements were started) the job cannot recover and is aborted
     * (FT-MPI's second pathological failure, spec 3.1).
     */
    private synchronized void respawn(int rank) {
        if (replaced[rank] && !controller.isRegistered(rank)) {
            // a replacement that ends before MPI_Init (its program cannot start, or fails before
            // MPI_Init) would be followed by another one doing the same, without end
            String why = "the replacement of rank " + rank + " ended before MPI_Init; another one would fail the same way";
            console.message(why + "; the job cannot recover (comm-mode rebuild); aborting the job");
            controller.notifyAbort(1, why);
            terminate(1);
            return;
        }
        replaced[rank] = true;
        // spares not handed out are either ready (assignSpare takes one) or still starting
        boolean starting = !spares.isEmpty() && spareWaitMs > 0;
        long spare = controller.assignSpare(rank, starting);
        if (spare >= 0) {
            takeOver(rank, spare);
        } else if (starting) {
            console.message("no warm spare is ready for rank " + rank + " yet; it waits for one of the "
                    + spares.size() + " starting (at most " + spareWaitMs + " ms)");
            timer.schedule(() -> spareWaitOver(rank), spareWaitMs, TimeUnit.MILLISECONDS);
        } else {
            if (spec.options().containsKey("spares")) {
                console.message("no warm spare is ready for rank " + rank + "; starting a new process");
            }
            startReplacement(rank);
        }
    }

    /** Rank {@code rank} is run by the warm spare {@code spare}, which the controller sent ASSIGN. */
    private synchronized void takeOver(int rank, long spare) {
        Process p = spares.remove(spare);
        if (ending) return;
        if (p == null) {
            console.message("the warm spare for rank " + rank + " (process id " + spare + ") ended; starting a new process");
            startReplacement(rank);
            return;
        }
        procIds[rank] = spare;
        declaredFailed[rank] = false;
        procs[rank] = p;
        assignedSpares.add(p);
        running++;
        int left = spares.size();
        afterFailure.later(new Message(console, null, "rank " + rank + " is taken over by a warm spare (pid " + p.pid()
                + ", process id " + spare + "); " + left + " spare(s) left"));
    }

    @Override
    public void spareAssigned(int rank, long spareProcId) {
        try {
            takeOver(rank, spareProcId);
        } catch (RuntimeException e) {
            internalError(e);
        }
    }

    /** The spare-wait of {@code rank} is over: if no spare took it yet, a new process does. */
    private synchronized void spareWaitOver(int rank) {
        if (!ending && controller.cancelSpareWait(rank)) {
            console.message("no warm spare became ready for rank " + rank + " within " + spareWaitMs
                    + " ms; starting a new process");
            startReplacement(rank);
        }
    }

    /**
     * Starts a new process (new process id) for the failed {@code rank}, or, without resources,
     * aborts the job.
     */
    private synchronized void startReplacement(int rank) {
        String why = null;
        if (respawns >= maxRespawns) {
            why = "no resources to replace rank " + rank + " (max-respawns " + maxRespawns + " reached)";
        } else {
            respawns++;
            long id = nextProcId++;
            procIds[rank] = id;
            controller.replace(rank, id);
            declaredFailed[rank] = false;
            try {
                spawn(rank, host, true);
                console.message("started a replacement for rank " + rank + " (pid " + procs[rank].pid()
                        + ", process id " + id + ")");
                return;
            } catch (IOException e) {
                why = "cannot start a replacement for rank " + rank + ": " + e.getMessage();
            }
        }
        console.message(why + "; the job cannot recover (comm-mode rebuild); aborting the job");
        controller.notifyAbort(1, why);
        terminate(1);
    }

    /**
     * Whether the survivors of a failure recover (FT-MPI comm-mode shrink, blank or rebuild with
     * recovery-mode auto or manual): the job goes on and a recovered failure does not decide the
     * job's exit status.
     */
    static boolean recoversFromFailure(Map<String, String> options) {
        String mode = options.getOrDefault("comm-mode", LauncherOptions.COMM_MODE_ABORT);
        String rec = options.getOrDefault("recovery-mode", "manual");
        return !mode.equals(LauncherOptions.COMM_MODE_ABORT) && !rec.equals("ignore");
    }

    /**
     * Whether a failed rank aborts the job: under comm-mode abort (the default), unless the job
     * runs with recovery-mode ignore (then survivors are told and go on).
     */
    static boolean abortsOnFailure(Map<String, String> options) {
        return LauncherOptions.COMM_MODE_ABORT.equals(options.getOrDefault("comm-mode", LauncherOptions.COMM_MODE_ABORT))
                && !"ignore".equals(options.get("recovery-mode"));
    }

    /**
     * A rank's heartbeat observer declared a rank failed. Suspicion is final: the process is
     * killed (SIGKILL works on a stopped process too), every survivor is told, and under comm-mode
     * abort the job stops.
     */
    @Override
    public synchronized void failureReported(int reporter, int rank, long procId, String how) {
        Process p = procs[rank];
        if (ending || declaredFailed[rank] || procId != procIds[rank] || p == null) {
            return;
        }
        declaredFailed[rank] = true;
        controller.notifyFailure(rank, procId, how); // the survivors first
        String what = "rank " + rank + " (pid " + p.pid() + ") " + how;
        if (abortOnFailure) {
            fence(p);
            console.message(what + "; aborting the job (comm-mode abort)");
            controller.notifyAbort(FENCED_STATUS, "rank " + rank + " " + how);
            terminate(FENCED_STATUS);
            return;
        }
        // Fenced after the survivors' recovery: the process is stopped or hung and every
        // survivor drops its traffic from now on; while it lives its children stay its own
        // (the kernel hands them to init only when it has died), so the walk finds them later
        // as it does now, and its teardown (exit_mmap of a JVM: ms of CPU) is off the recovery too.
        String line = what + "; killed it (SIGKILL), the survivors "
                + (recovering ? "recover (" + modes() + ")" : "continue (recovery-mode ignore)");
        afterFailure.later(new Message(console, p, line));
        removeSpareFilesLater(procId); // after the fence: queued in order
        if (recovering) {
            // declared hung, not ended by itself: no sign that another replacement would fail
            // before MPI_Init the same way (a warm spare stopped as it was handed the rank)
            replaced[rank] = false;
            if (checkAllLost(FENCED_STATUS) || !rebuild) return;
            if (controller.exchangeComplete()) {
                respawn(rank);
            } else { // as actOnDeath: no started job to join
                String why = "rank " + rank + " " + how + "; comm-mode rebuild replaces ranks of a started job only";
                console.message(why + "; aborting the job");
                controller.notifyAbort(FENCED_STATUS, why);
                terminate(FENCED_STATUS);
            }
        } else if (firstNonZero == 0) {
            firstNonZero = FENCED_STATUS;
        }
    }

    /** Job status when a rank declared failed by the detector aborts the job: as if SIGKILLed. */
    static final int FENCED_STATUS = 128 + 9;

    /** Kills a declared-failed process and its descendants (a walk of /proc); it is never re-admitted. */
    private static void fence(Process p) {
        ProcessHandle h = p.toHandle();
        h.descendants().forEach(ProcessHandle::destroyForcibly);
        h.destroyForcibly();
    }

    /** Runs one {@code --inject} fault (on the timer thread). */
    private void inject(FaultInjection f) {
        Process p;
        synchronized (this) {
            p = procs[f.rank()];
            if (ending || p == null || !p.isAlive()) {
                console.log("--inject " + f + ": rank " + f.rank() + " is not running; skipped");
                return;
            }
            console.message("injecting fault: " + f.signalName() + " to rank " + f.rank() + " (pid " + p.pid() + ")");
            if (f.how().equals(FaultInjection.KILL)) {
                p.toHandle().destroyForcibly();
                return;
            }
        }
        try {
            Signals.send(p.pid(), Signals.SIGSTOP);
        } catch (IOException e) {
            console.message("warning: --inject " + f + ": cannot send SIGSTOP: " + e.getMessage());
        }
    }

    /**
     * A rank that sees a peer's connection drop may ask to abort (ERRORS_ARE_FATAL) a moment
     * before this process learns of the peer's exit. Give such a death a short time to show, so
     * that the job reports the root cause (the dead rank) rather than the survivor's error.
     */
    private int deadUnfinalizedRank(int requester) throws InterruptedException {
        long deadline = System.nanoTime() + DEATH_GRACE_NS;
        do {
            for (int r = 0; r < n; r++) {
                Process p = procs[r];
                if (r != requester && p != null && !p.isAlive() && !controller.hasFinalized(r)) return r;
            }
            Thread.sleep(10);
        } while (System.nanoTime() < deadline);
        return -1;
    }

    @Override
    public void abortRequested(int rank, int code, String reason) {
        int dead = -1;
        try {
            // Under recovery an MPI_Abort is the program's own decision, not a survivor's error
            // about a peer's death: it ends the job as asked.
            if (abortOnFailure) dead = deadUnfinalizedRank(rank);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            if (ending) {
                return;
            }
            if (dead >= 0 && !declaredFailed[dead]) {
                declaredFailed[dead] = true;
                reportDeathAndAbort(dead, procs[dead], procs[dead].exitValue());
                return;
            }
            console.message("rank " + rank + " called MPI_Abort with code " + code + ": " + reason);
            controller.notifyAbort(code, "rank " + rank + " called MPI_Abort: " + reason);
            terminate(code);
        }
    }

    @Override
    public void exchangeImpossible(String message) {
        synchronized (this) {
            if (ending) {
                return;
            }
            console.message(message + "; aborting the job");
            controller.notifyAbort(1, message);
            terminate(1);
        }
    }

    /** A controller-internal error: report it and stop the job. */
    void internalError(Throwable e) {
        console.message("internal error: " + e + "; stopping all ranks");
        e.printStackTrace();
        terminate(1);
    }

    /** Stops every rank (SIGTERM, then SIGKILL after the grace time); the job ends with code. */
    synchronized void terminate(int code) {
        if (ending) {
            return;
        }
        ending = true;
        forcedCode = code;
        List<ProcessHandle> targets = snapshotTree();
        targets.forEach(ProcessHandle::destroy);
        timer.schedule(() -> targets.forEach(ProcessHandle::destroyForcibly), KILL_GRACE_MS,
                TimeUnit.MILLISECONDS);
    }

    /** The rank processes and all their descendants that are alive now. */
    private synchronized List<ProcessHandle> snapshotTree() {
        List<ProcessHandle> out = new ArrayList<>();
        for (ProcessHandle h : killList) {
            h.descendants().forEach(out::add);
            out.add(h);
        }
        out.removeIf(h -> !h.isAlive());
        return out;
    }

    private void onShutdown() {
        if (finished) {
            return;
        }
        afterFailure.flush();
        List<ProcessHandle> targets;
        synchronized (this) {
            ending = true;
            targets = snapshotTree();
        }
        if (targets.isEmpty()) {
            return;
        }
        console.message("terminated; stopping all ranks");
        targets.forEach(ProcessHandle::destroy);
        waitGone(targets, KILL_GRACE_MS);
        targets.forEach(ProcessHandle::destroyForcibly);
        waitGone(targets, 1_000);
        removeSharedMemory();
    }

    /** Job-end hook: removes the job's shared-memory files (also those of killed ranks). */
    private void removeSharedMemory() {
        int n = SharedMemoryFiles.removeAll(SharedMemoryFiles.dir(spec.options()), jobId);
        if (n > 0) console.log("removed " + n + " shared-memory file(s) of the job");
    }

    private static void waitGone(List<ProcessHandle> targets, long ms) {
        long end = System.nanoTime() + ms * 1_000_000;
        for (ProcessHandle h : targets) {
            long left = end - System.nanoTime();
            if (left <= 0) {
                return;
            }
            try {
                h.onExit().get(left, TimeUnit.NANOSECONDS);
            } catch (Exception ignored) {
                // timed out or interrupted: the caller escalates
            }
        }
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }
}
