package org.ftmpi.bench.ft;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.Arrays;
import java.util.Locale;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.ProcFailedException;
import mpi.Request;

/**
 * Fault-tolerance benchmarks (issue 7), each one MPI program run by {@code bin/ftmpirun ... bench
 * ft-*}; the interleaved repetitions and medians across jobs are done by
 * {@code bench/ft/run-ft-bench.sh}. Every program prints one {@code RESULT} line on rank 0.
 * <ul>
 * <li>{@code ft-overhead}: 8-byte ping-pong latency and 64 KiB windowed bandwidth between ranks 0
 *     and 1, and an application loop (compute + one-double allreduce) on every rank, each the
 *     median of {@value #OVERHEAD_BLOCKS} interleaved blocks; run with {@code --hb-period 50}
 *     (the default) and {@code --hb-period 0} (detector off).</li>
 * <li>{@code ft-detect kill|stop [cold-wait]}: rank 0 sends SIGKILL/SIGSTOP to the last rank while every
 *     other rank waits in a receive from it; prints, per survivor, the time from the signal to
 *     the receive's {@code ProcFailedException} (wall clock of this machine, microseconds).</li>
 * <li>{@code ft-agree}: agree, one-int allreduce and shrink without failures, then right after
 *     a SIGKILL of the last rank: the first agree (raises: unacknowledged), agree after
 *     {@code ackFailed}, shrink; then the same shrink and agree repeated (warm, the dead member
 *     still in the communicator). Each operation timed alone after a barrier; its time is the
 *     maximum over the ranks; medians over the repetitions, after an untimed warm-up pass of the
 *     failure-free agree/allreduce pairs and of the shrinks (the JIT: 8 JVMs on 2 cores compile
 *     slowly, and ULFM's figures are C). The three operations right after the failure are made
 *     (their lambdas linked) before it; one {@code TRACE ft-agree} line per survivor gives, in us
 *     after the kill, when it was told and when each of the three started and returned.</li>
 * </ul>
 * Run under {@code --recovery-mode ignore} (the detect and agree programs kill a rank).
 */
public final class FtBench {
    private FtBench() {}

    /** Runs {@code args[0]} (an {@code ft-*} name); returns the exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) throws MPIException {
        String name = args[0];
        if (!name.equals("ft-overhead") && !name.equals("ft-detect") && !name.equals("ft-agree")) {
            err.println("bench: unknown benchmark '" + name + "' (ft-overhead, ft-detect kill|stop, ft-agree, ft-sim, ft-agree-sim, ft-coll, ft-recover, ft-after, ft-teardown)");
            return 2;
        }
        if (name.equals("ft-overhead") && args.length > 1 && !args[1].equals("paired")) {
            err.println("bench ft-overhead: the only argument is 'paired', got '" + args[1] + "'");
            return 2;
        }
        if (name.equals("ft-detect") && (args.length < 2 || !(args[1].equals("kill") || args[1].equals("stop"))
                || args.length > 2 && !(args.length == 3 && args[2].equals("cold-wait")))) {
            err.println("bench ft-detect: expected kill or stop as the argument, then optionally cold-wait");
            return 2;
        }
        MPI.Init(args);
        Intracomm world = MPI.COMM_WORLD;
        world.setErrhandler(MPI.ERRORS_RETURN);
        int status = 0;
        try {
            if (world.getSize() < 2) {
                if (world.getRank() == 0) err.println("bench " + name + ": needs at least 2 processes");
                status = 1;
            } else {
                switch (name) {
                    case "ft-overhead" -> {
                        if (args.length > 1 && args[1].equals("paired")) status = overheadPaired(world, out, err);
                        else overhead(world, out);
                    }
                    case "ft-detect" -> detect(world, args[1].equals("stop"), args.length < 3, out);
                    default -> agree(world, out);
                }
            }
        } catch (Exception e) {
            err.println("bench " + name + ": rank " + world.getRank() + ": " + e);
            status = 1;
        } finally {
            out.flush();
            MPI.Finalize();
        }
        return status;
    }

    // ------------------------------------------------------------------ overhead

    /** Blocks of the measured pass of ft-overhead: each metric is the median over them. */
    static final int OVERHEAD_BLOCKS = 11;

    static void overhead(Intracomm world, PrintStream out) throws MPIException {
        int rank = world.getRank();
        // warm-up pass for the JIT
        latency(world, rank, 5_000);
        bandwidth(world, rank, 50);
        appLoop(world, 300);
        // Measured pass: blocks of the three metrics, interleaved, so that a burst of load from
        // elsewhere lands in one block of each rather than in the whole of one metric; medians.
        long start = System.nanoTime(), cpu0 = detectorCpuNs(), wakes0 = detectorWakeups();
        double[] lats = new double[OVERHEAD_BLOCKS], bws = new double[OVERHEAD_BLOCKS], apps = new double[OVERHEAD_BLOCKS];
        for (int b = 0; b < OVERHEAD_BLOCKS; b++) {
            lats[b] = latency(world, rank, 2_000);
            bws[b] = bandwidth(world, rank, 20);
            apps[b] = appLoop(world, 100);
        }
        double lat = median(lats), bw = median(bws), app = median(apps);
        // CPU time of the detector's own threads during the measured pass, as a share of one core:
        // a direct measure of its cost, independent of the run-to-run noise of the A/B comparison.
        long wallNs = System.nanoTime() - start;
        double share = (detectorCpuNs() - cpu0) / (double) wallNs * 100;
        // Its wake-ups (context switches of the ftmpi-detector thread, from /proc): each one can
        // push a polling rank off its core on a machine with as many busy ranks as cores.
        double wakes = (detectorWakeups() - wakes0) / (wallNs / 1e9);
        double[] max = new double[2];
        world.reduce(new double[] {share, wakes}, max, 2, MPI.DOUBLE, MPI.MAX, 0);
        if (rank == 0) {
            out.printf(Locale.ROOT, "RESULT ft-overhead np %d lat8_us %.3f bw64k_MBps %.1f app_us_per_iter %.2f"
                    + " detector_cpu_pct %.4f detector_wakeups_per_s %.1f%n", world.getSize(), lat, bw, app, max[0], max[1]);
        }
    }

    /** Pairs of blocks of {@code ft-overhead paired}. */
    static final int PAIRS = 21;
    /** Target length of one block of one metric in {@code ft-overhead paired}, ms. */
    static final int PAIRED_BLOCK_MS = 150;

    /**
     * {@code ft-overhead paired}: the detector's cost within one job. {@value #PAIRS} pairs of
     * blocks of the three metrics, each pair once with every rank's detector running and once
     * with it paused ({@code HeartbeatDetector.pauseForBenchmark}, right after a barrier), the
     * order alternating per pair; each block about {@value #PAIRED_BLOCK_MS} ms per metric, so that
     * it spans several detector periods. Same processes, same placement on the cores, same JIT
     * state in both halves: what a separate job with {@code --hb-period 0} cannot give. Prints
     * the median of each half, the median of the per-pair on/off ratios and their quartiles
     * (the spread at which the job resolves a cost), and the detector's CPU share in the
     * running halves. Returns 1 (and says why) when the job runs no detector.
     */
    static int overheadPaired(Intracomm world, PrintStream out, PrintStream err) throws MPIException {
        int rank = world.getRank();
        int[] running = {org.ftmpi.ft.detect.HeartbeatDetector.pauseForBenchmark(false) ? 1 : 0};
        world.allReduce(running, 1, MPI.INT, MPI.MIN);
        if (running[0] == 0) {
            if (rank == 0) err.println("bench ft-overhead paired: needs the heartbeat detector on every rank (ranks started by"
                    + " bin/ftmpirun with --hb-period > 0, the default)");
            return 1;
        }
        // warm-up (the JIT), then a second pass that sizes the blocks to about PAIRED_BLOCK_MS on rank 0
        double lat = 0, bw = 0, app = 0;
        for (int pass = 0; pass < 2; pass++) {
            lat = latency(world, rank, 20_000);
            bw = bandwidth(world, rank, 100);
            app = appLoop(world, 500);
        }
        int[] iters = {
            (int) Math.max(100, Math.min(5_000_000, PAIRED_BLOCK_MS * 1e3 / (2 * lat))),
            (int) Math.max(2, Math.min(100_000, bw * 1e6 * PAIRED_BLOCK_MS / 1e3 / (16 << 16))),
            (int) Math.max(5, Math.min(100_000, PAIRED_BLOCK_MS * 1e3 / app))};
        world.bcast(iters, 3, MPI.INT, 0);
        double[][] on = new double[3][PAIRS], off = new double[3][PAIRS];
        long onWallNs = 0, onCpuNs = 0, onWaiterNs = 0, onWaiterRounds = 0;
        try {
            for (int p = 0; p < PAIRS; p++) {
                for (int half = 0; half < 2; half++) {
                    boolean detectorOn = (p % 2 == 0) == (half == 0);
                    world.barrier();
                    org.ftmpi.ft.detect.HeartbeatDetector.pauseForBenchmark(!detectorOn);
                    long t0 = System.nanoTime(), c0 = detectorCpuNs();
                    long[] w0 = org.ftmpi.ft.detect.HeartbeatDetector.waiterWork();
                    double[][] to = detectorOn ? on : off;
                    to[0][p] = latency(world, rank, iters[0]);
                    to[1][p] = bandwidth(world, rank, iters[1]);
                    to[2][p] = appLoop(world, iters[2]);
                    if (detectorOn) {
                        onWallNs += System.nanoTime() - t0;
                        onCpuNs += detectorCpuNs() - c0;
                        long[] w1 = org.ftmpi.ft.detect.HeartbeatDetector.waiterWork();
                        onWaiterRounds += w1[0] - w0[0];
                        onWaiterNs += w1[1] - w0[1];
                    }
                }
            }
        } finally {
            world.barrier();
            org.ftmpi.ft.detect.HeartbeatDetector.pauseForBenchmark(false);
        }
        double[] share = {onCpuNs / (double) onWallNs * 100, onWaiterNs / (double) onWallNs * 100,
            onWaiterRounds / (onWallNs / 1e9)}, maxShare = new double[3];
        world.reduce(share, maxShare, 3, MPI.DOUBLE, MPI.MAX, 0);
        if (rank == 0) {
            StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "RESULT ft-overhead-paired np %d pairs %d", world.getSize(), PAIRS));
            String[] names = {"lat8_us", "bw64k_MBps", "app_us_per_iter"};
            for (int m = 0; m < 3; m++) {
                double[] r = new double[PAIRS];
                for (int p = 0; p < PAIRS; p++) r[p] = on[m][p] / off[m][p];
                Arrays.sort(r);
                String k = names[m];
                sb.append(String.format(Locale.ROOT, " %s_on %.4g %s_off %.4g %s_paired %.4f %s_q1 %.4f %s_q3 %.4f",
                        k, median(on[m]), k, median(off[m]), k, median(r), k, r[PAIRS / 4], k, r[(3 * PAIRS) / 4]));
            }
            sb.append(String.format(Locale.ROOT, " detector_cpu_pct %.4f waiter_duty_pct %.4f waiter_rounds_per_s %.1f",
                    maxShare[0], maxShare[1], maxShare[2]));
            out.println(sb);
        }
        return 0;
    }

    /** CPU time used so far by this process's threads named ftmpi-detector* and ftmpi-notify*. */
    static long detectorCpuNs() {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        long ns = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("ftmpi-detector") || t.getName().startsWith("ftmpi-notify")) {
                long c = mx.getThreadCpuTime(t.threadId());
                if (c > 0) ns += c;
            }
        }
        return ns;
    }

    /**
     * Context switches so far (voluntary and not) of this process's {@code ftmpi-detector}
     * thread, from {@code /proc/self/task/*}: 0 where there is no such file system or thread.
     */
    static long detectorWakeups() {
        long n = 0;
        try (var tasks = java.nio.file.Files.newDirectoryStream(java.nio.file.Path.of("/proc/self/task"))) {
            for (var t : tasks) {
                try {
                    if (!java.nio.file.Files.readString(t.resolve("comm")).strip().equals("ftmpi-detector")) continue;
                    for (String line : java.nio.file.Files.readAllLines(t.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:") || line.startsWith("nonvoluntary_ctxt_switches:")) {
                            n += Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
                        }
                    }
                } catch (java.io.IOException | NumberFormatException e) {
                    // a thread that ended meanwhile
                }
            }
        } catch (java.io.IOException e) {
            return 0;
        }
        return n;
    }

    /** Half round trip of an 8-byte ping-pong, microseconds. */
    static double latency(Intracomm c, int rank, int iters) throws MPIException {
        byte[] b = new byte[8];
        c.barrier();
        long t0 = System.nanoTime();
        if (rank < 2) {
            int peer = 1 - rank;
            for (int i = 0; i < iters; i++) {
                if (rank == 0) {
                    c.send(b, 8, MPI.BYTE, peer, 1);
                    c.recv(b, 8, MPI.BYTE, peer, 1);
                } else {
                    c.recv(b, 8, MPI.BYTE, peer, 1);
                    c.send(b, 8, MPI.BYTE, peer, 1);
                }
            }
        }
        long t1 = System.nanoTime();
        c.barrier();
        return (t1 - t0) / 1e3 / iters / 2;
    }

    /** Windowed (16 x 64 KiB) unidirectional bandwidth from rank 0 to 1, MB/s. */
    static double bandwidth(Intracomm c, int rank, int iters) throws MPIException {
        int size = 64 << 10, window = 16;
        ByteBuffer[] bufs = new ByteBuffer[window];
        for (int i = 0; i < window; i++) bufs[i] = MPI.newByteBuffer(size);
        ByteBuffer ack = MPI.newByteBuffer(4);
        Request[] reqs = new Request[window];
        c.barrier();
        long t0 = System.nanoTime();
        if (rank < 2) {
            for (int i = 0; i < iters; i++) {
                for (int w = 0; w < window; w++) {
                    reqs[w] = rank == 0 ? c.iSend(bufs[w], size, MPI.BYTE, 1, 2) : c.iRecv(bufs[w], size, MPI.BYTE, 0, 2);
                }
                Request.waitAll(reqs);
                if (rank == 0) c.iRecv(ack, 4, MPI.BYTE, 1, 3).waitFor();
                else c.iSend(ack, 4, MPI.BYTE, 0, 3).waitFor();
            }
        }
        long t1 = System.nanoTime();
        c.barrier();
        return (double) size * window * iters / ((t1 - t0) / 1e9) / 1e6;
    }

    static volatile double sink;

    /** An application loop: about 100 us of arithmetic, then a one-double allreduce; us per iteration. */
    static double appLoop(Intracomm c, int iters) throws MPIException {
        double[] in = new double[1], res = new double[1];
        double x = 1;
        c.barrier();
        long t0 = System.nanoTime();
        for (int i = 0; i < iters; i++) {
            for (int k = 0; k < 40_000; k++) x = x * 1.0000001 + 1e-9;
            in[0] = x;
            c.allReduce(in, res, 1, MPI.DOUBLE, MPI.SUM);
        }
        long t1 = System.nanoTime();
        sink = res[0];
        c.barrier();
        return (t1 - t0) / 1e3 / iters;
    }

    // ------------------------------------------------------------------ detection

    /**
     * Waits until this rank's background warm-up (thread {@code ftmpi-warmup}, see
     * docs/fault-tolerance.md, "Warm-up") has ended and the JIT has gone quiet, so that a measured
     * failure competes with neither for the cores, as a failure long after start-up would not.
     * Every measured program calls it after MPI.Init, so A/B runs with and without the warm-up
     * start their measurements alike.
     */
    static void awaitWarmUp() throws InterruptedException {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("ftmpi-warmup")) t.join();
        }
        // then until the JIT has had nothing to compile for 200 ms (at most 20 s): the compilations
        // that start-up (and a warm-up) queued would otherwise compete with the measured failure
        var jit = java.lang.management.ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) return;
        long last = -1, end = System.nanoTime() + 20_000_000_000L;
        while (System.nanoTime() < end) {
            long now = jit.getTotalCompilationTime();
            if (now == last) return;
            last = now;
            Thread.sleep(200);
        }
    }

    static long epochMicros() {
        Instant t = Instant.now();
        return t.getEpochSecond() * 1_000_000L + t.getNano() / 1_000;
    }

    /**
     * Two rounds when np >= 3: the last rank is signalled first ("cold": the survivors' failure
     * path runs for the first time in their JVMs), then the last of the remaining ranks ("warm").
     */
    static void detect(Intracomm world, boolean stop, boolean warmWait, PrintStream out) throws Exception {
        org.ftmpi.runtime.Signals.prepare(); // not linked while the clock runs
        awaitWarmUp();
        int n = world.getSize(), rank = world.getRank();
        if (warmWait) {
            // The survivors are told in a receive's wait. A running application has waited in
            // receives long before its first failure, and a C program's wait is compiled code
            // from the start; here the wait loop would otherwise run hot for the first time right
            // at the kill, with the JIT compiling it on the 2 cores the notice needs (session 19;
            // `cold-wait` keeps it that way). The failure path itself stays cold in round 1.
            int[] token = new int[1];
            for (int i = 0; i < WARM_WAITS; i++) {
                Request r = world.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, (rank + n - 1) % n, 78);
                if (rank == 0) world.send(token, 1, MPI.INT, 1, 78);
                r.waitFor();
                if (rank != 0) world.send(token, 1, MPI.INT, (rank + 1) % n, 78);
            }
            awaitWarmUp();
        }
        long[] pids = new long[n];
        world.allGather(new long[] {ProcessHandle.current().pid()}, 1, MPI.LONG, pids, 1, MPI.LONG);
        Intracomm cur = world;
        for (int round = 0; round < (n >= 3 ? 2 : 1); round++) {
            int size = cur.getSize(), victim = size - 1; // rank in cur = world rank (ranks drop from the top)
            Intracomm alive = cur.split(cur.getRank() == victim ? MPI.UNDEFINED : 0, rank);
            cur.barrier();
            if (rank == victim) {
                cur.recv(new int[1], 1, MPI.INT, 0, 77); // never sent: it dies or is stopped and fenced here
                return;
            }
            Request r = cur.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, victim, 77);
            alive.barrier(); // every survivor left the barrier of cur and posted its receive
            long t0 = 0, t0Ns = 0;
            if (rank == 0) {
                if (stop) {
                    t0 = epochMicros();
                    t0Ns = System.nanoTime();
                    sigstop(pids[victim]);
                } else {
                    t0 = epochMicros();
                    t0Ns = System.nanoTime();
                    ProcessHandle.of(pids[victim]).orElseThrow().destroyForcibly(); // SIGKILL
                }
            }
            long told, toldNs;
            try {
                r.waitFor();
                throw new IllegalStateException("the receive from the victim completed");
            } catch (ProcFailedException e) {
                toldNs = System.nanoTime();
                told = epochMicros();
            }
            int m = alive.getSize();
            long[] all = new long[2 * m];
            alive.gather(new long[] {told, toldNs}, 2, MPI.LONG, all, 2, MPI.LONG, 0);
            if (rank == 0) {
                double[] ms = new double[m];
                StringBuilder ns = new StringBuilder();
                for (int i = 0; i < m; i++) {
                    ms[i] = (all[2 * i] - t0) / 1e3;
                    ns.append(' ').append(all[2 * i + 1]);
                }
                // System.nanoTime is CLOCK_MONOTONIC, comparable with --opt death-trace=true lines
                out.printf(Locale.ROOT, "TRACE ft-detect round %s victim %d kill_ns %d told_ns%s%n",
                        round == 0 ? "cold" : "warm", victim, t0Ns, ns);
                double[] sorted = ms.clone();
                Arrays.sort(sorted);
                StringBuilder per = new StringBuilder();
                for (double d : ms) per.append(String.format(Locale.ROOT, " %.2f", d));
                out.printf(Locale.ROOT, "RESULT ft-detect np %d round %s alive %d sig %s first_ms %.2f every_ms %.2f"
                                + " per_survivor_ms%s%n", n, round == 0 ? "cold" : "warm", size,
                        stop ? "STOP" : "KILL", sorted[0], sorted[m - 1], per);
                out.flush();
            }
            cur = alive;
        }
        if (cur != world) cur.free();
    }

    /** SIGSTOP through libc's kill (no kill(1) child process: a fork of a rank JVM under load took milliseconds). */
    private static void sigstop(long pid) {
        try {
            org.ftmpi.runtime.Signals.send(pid, org.ftmpi.runtime.Signals.SIGSTOP);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    // ------------------------------------------------------------------ agree and shrink

    interface Op {
        void run() throws MPIException;
    }

    /** {@code op} {@code n} times in a row, as one operation. */
    static Op times(int n, Op op) {
        return () -> {
            for (int i = 0; i < n; i++) op.run();
        };
    }

    /** Times op alone after a barrier of {@code sync}; returns the maximum over the ranks of {@code sync}, in us. */
    static double timed(Intracomm sync, Op op) throws MPIException {
        sync.barrier();
        long t0 = System.nanoTime();
        op.run();
        long t1 = System.nanoTime();
        lastStart = t0;
        lastEnd = t1;
        double[] max = new double[1];
        sync.allReduce(new double[] {(t1 - t0) / 1e3}, max, 1, MPI.DOUBLE, MPI.MAX);
        return max[0];
    }

    /** {@link System#nanoTime()} when the last {@link #timed} operation of this rank started and returned. */
    private static long lastStart, lastEnd;

    static double median(double[] a) {
        double[] s = a.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    /** ft-detect's untimed ring passes of a receive waited for, before the failure (unless {@code cold-wait}). */
    static final int WARM_WAITS = 2000;

    /** ft-agree's untimed agree/allreduce pairs and shrinks before the measured ones. */
    static final int WARM_PAIRS = 2000, WARM_SHRINKS = 200;
    /** ft-agree's back-to-back form: calls per timed loop, untimed and timed loops per operation. */
    static final int LOOP_CALLS = 500, WARM_LOOPS = 40, LOOP_ROUNDS = 11;

    static void agree(Intracomm world, PrintStream out) throws Exception {
        awaitWarmUp();
        int n = world.getSize(), rank = world.getRank(), victim = n - 1;
        long[] pids = new long[n];
        world.allGather(new long[] {ProcessHandle.current().pid()}, 1, MPI.LONG, pids, 1, MPI.LONG);
        int[] one = {1}, res = new int[1];
        int iters = 200, shrinks = 30;
        double[] ag = new double[iters], ar = new double[iters], sh = new double[shrinks];
        Op agreeOp = () -> world.agree(1), allReduceOp = () -> world.allReduce(one, res, 1, MPI.INT, MPI.SUM);
        Op shrinkOp = () -> world.shrink().free();
        // Warm-up until steady state, as a C program is from its first call: WARM_PAIRS untimed
        // pairs, WARM_SHRINKS shrinks, then until the JIT is quiet. With 50 pairs the agreement's
        // path was still being compiled while it was measured: 90 against 18-29 us at np 4
        // (docs/benchmarks.md, "Session 19").
        for (int i = 0; i < WARM_PAIRS; i++) {
            timed(world, agreeOp);
            timed(world, allReduceOp);
        }
        for (int i = 0; i < WARM_SHRINKS; i++) timed(world, shrinkOp);
        // Back to back (the OSU and ULFM benchmarks' other form): LOOP_CALLS calls timed together,
        // per call, the maximum over the ranks; rounds interleaved, median. Its steady state
        // needs a warm-up of its own (4 fresh JVMs at np 4: 290 us per agree over the first 5 000).
        Op agreeLoop = times(LOOP_CALLS, agreeOp), allReduceLoop = times(LOOP_CALLS, allReduceOp);
        for (int round = 0; round < WARM_LOOPS; round++) {
            timed(world, agreeLoop);
            timed(world, allReduceLoop);
        }
        awaitWarmUp();
        world.barrier();
        for (int i = 0; i < iters; i++) { // interleaved
            ag[i] = timed(world, agreeOp);
            ar[i] = timed(world, allReduceOp);
        }
        for (int i = 0; i < shrinks; i++) sh[i] = timed(world, shrinkOp);
        double[] agL = new double[LOOP_ROUNDS], arL = new double[LOOP_ROUNDS];
        for (int round = 0; round < LOOP_ROUNDS; round++) {
            agL[round] = timed(world, agreeLoop) / LOOP_CALLS;
            arL[round] = timed(world, allReduceLoop) / LOOP_CALLS;
        }
        awaitWarmUp(); // nothing the loops queued compiles while the failure is measured
        Intracomm alive = world.split(rank == victim ? MPI.UNDEFINED : 0, rank);
        world.barrier();
        if (rank == victim) {
            world.recv(new int[1], 1, MPI.INT, 0, 77); // killed here
            return;
        }
        // The operations after the failure, made before it: a lambda is linked (a hidden class
        // spun, and the JIT queued compilations of the class-file API) where it is first
        // evaluated, which would otherwise be between the failure and the measured calls, where
        // a C program measured by ULFM's anchor has nothing of the kind.
        Intracomm[] s = new Intracomm[1];
        Op firstAgree = () -> {
            try {
                world.agree(1);
            } catch (ProcFailedException e) {
                // expected: the failure is not acknowledged yet
            }
        };
        Op agreeOnWorld = () -> world.agree(1);
        Op shrinkWorld = () -> s[0] = world.shrink();
        alive.barrier(); // every survivor left the world barrier before the kill
        long killNs = System.nanoTime();
        if (rank == 0) ProcessHandle.of(pids[victim]).orElseThrow().destroyForcibly();
        while (world.getFailed().getSize() == 0) Thread.onSpinWait();
        long[] stamps = new long[8]; // kill (rank 0), told, then start and return of the three operations
        stamps[0] = killNs;
        stamps[1] = System.nanoTime();
        double first = timed(alive, firstAgree);
        stamps[2] = lastStart;
        stamps[3] = lastEnd;
        world.ackFailed();
        double acked = timed(alive, agreeOnWorld);
        stamps[4] = lastStart;
        stamps[5] = lastEnd;
        double shrinkAfter = timed(alive, shrinkWorld);
        stamps[6] = lastStart;
        stamps[7] = lastEnd;
        long[] allStamps = new long[8 * alive.getSize()];
        alive.gather(stamps, 8, MPI.LONG, allStamps, 8, MPI.LONG, 0);
        if (rank == 0) {
            // per survivor, us after the kill (System.nanoTime: one clock for the processes of a host)
            for (int r = 0; r < alive.getSize(); r++) {
                StringBuilder t = new StringBuilder();
                for (int i = 1; i < 8; i++) t.append(String.format(Locale.ROOT, " %.1f", (allStamps[8 * r + i] - killNs) / 1e3));
                out.printf(Locale.ROOT, "TRACE ft-agree np %d rank %d us_after_kill: told first_agree(start end) acked(start end)"
                        + " shrink(start end)%s kill_ns %d%n", n, r, t, killNs);
            }
        }
        Intracomm shrunk = s[0];
        // Steady state again, the failed member still in world: shrink and agree (the
        // acknowledgement round included), each after untimed calls as many as the fault-free
        // figures had and the JIT quiet, as a C program is from its first call. The code with a
        // failed member (the coordinator protocol at every size, the acknowledgement round) is
        // compiled only now: timed at once, a shrink at np 8 took 0.6-3.4 ms for about 80
        // calls, then 0.07 ms (docs/benchmarks.md, "Session 28").
        Intracomm[] t = new Intracomm[1];
        Op shrinkFailed = () -> t[0] = world.shrink(), agreeFailed = () -> world.agree(1);
        for (int i = 0; i < WARM_SHRINKS; i++) {
            timed(alive, shrinkFailed);
            t[0].free();
            timed(alive, agreeFailed);
        }
        awaitWarmUp();
        double[] shF = new double[shrinks], agF = new double[50];
        for (int i = 0; i < shF.length; i++) {
            shF[i] = timed(alive, shrinkFailed);
            t[0].free();
        }
        for (int i = 0; i < agF.length; i++) agF[i] = timed(alive, agreeFailed);
        double[] ag2 = new double[50];
        for (int i = 0; i < ag2.length; i++) ag2[i] = timed(shrunk, () -> shrunk.agree(1));
        if (rank == 0) {
            double a = median(ag), r = median(ar);
            double aL = median(agL), rL = median(arL);
            out.printf(Locale.ROOT, "RESULT ft-agree np %d agree_us %.1f allreduce_us %.1f ratio %.2f shrink_us %.1f"
                            + " back_to_back: loop_agree_us %.2f loop_allreduce_us %.2f loop_ratio %.2f"
                            + " after_failure: first_agree_us %.1f agree_acked_us %.1f shrink_after_us %.1f"
                            + " agree_on_shrunk_us %.1f with_failed_member: shrink_failed_us %.1f agree_failed_us %.1f%n",
                    n, a, r, a / r, median(sh), aL, rL, aL / rL, first, acked, shrinkAfter, median(ag2), median(shF),
                    median(agF));
        }
        shrunk.free();
        alive.free();
    }
}
