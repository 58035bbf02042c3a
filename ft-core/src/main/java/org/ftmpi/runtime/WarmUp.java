package org.ftmpi.runtime;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.ProcFailedException;
import mpi.Request;
import mpi.Status;

/**
 * Runs the library's communication, failure and recovery code once before it is needed, so that
 * a first failure and a first recovery (and a warm spare's takeover) do not pay for class
 * loading, lambda and method-handle linking, interpretation of cold code and the JIT's
 * deoptimization of code compiled while no peer had failed. Small MPI jobs of threads-as-ranks
 * ({@link org.ftmpi.LocalJob}) over the real TCP transport, through the {@code mpi} facade:
 * <ol>
 * <li>{@link #exercise}: two ranks, point-to-point (blocking, non-blocking, {@code sendRecv},
 *     probe), the common collectives, and the ULFM {@code agree} and {@code shrink};</li>
 * <li>{@link #failures}: the failure paths. A job of four ranks as under {@code --recovery-mode
 *     ignore}: one rank dies ({@link LocalJobRuntime#kill}) while the others wait for it; a
 *     pending receive fails with {@code ProcFailedException}, then a receive and a probe from
 *     {@code ANY_SOURCE}, a send and a collective with the dead rank, {@code getFailed}, an
 *     {@code agree} that raises, {@code ackFailed}, {@code agree}, {@code shrink} and the shrunk
 *     communicator. Then a job of three ranks in the job's own modes (REBUILD as SHRINK: the
 *     replacement is the controller's) with {@code recovery-mode auto}: a rank dies during an
 *     {@code allReduce}, the survivors recover COMM_WORLD (the recovery agreement, the new
 *     generation, COMM_WORLD re-made) and reduce on it.</li>
 * </ol>
 *
 * <ul>
 * <li>A warm spare ({@link Spare}) runs {@link #SPARE_ROUNDS} rounds of the first before it
 *     reports ready.</li>
 * <li>With the job option {@code ft-warmup=true}, a rank runs {@link #RANK_ROUNDS} rounds of the
 *     first and {@link #FAILURE_ROUNDS} of the second on a background daemon thread ({@code
 *     ftmpi-warmup}) while the program starts ({@link RankMain}); never a REBUILD replacement,
 *     whose start-up is on the recovery path. Off by default: measured interleaved (docs/benchmarks.md,
 *     "Issues 7/8, session 5"), it made the first agree and a first SHRINK recovery faster but
 *     the detection of the job's first failure slower, and it costs CPU at start-up (about a second
 *     per rank then; 0.2-0.4 s with the AOT cache, session 21).</li>
 * </ul>
 * The warm-up jobs have engines and connections of their own (the library keeps no static
 * state), are not counted by {@code --inject at-call}, print nothing, and a failure of them only
 * means that the first failure or recovery runs cold.
 */
final class WarmUp {
    /** Rounds a warm spare runs before it reports ready (about 1 s at a load average of 25 on 2 cores). */
    static final int SPARE_ROUNDS = 60;
    /** Rounds a rank runs in the background: the classes and a first compilation of the recovery path. */
    static final int RANK_ROUNDS = 40;
    /** Failure jobs (each: one death under IGNORE, one recovery) a rank runs in the background. */
    static final int FAILURE_ROUNDS = 3;
    /** How long a rank of a failure job waits for the others at a step (a broken warm-up never hangs). */
    private static final long BARRIER_S = 60;

    private WarmUp() {}

    /** Runs the warm-up job of {@code rounds} rounds; {@code report}: print a failure on stderr. */
    static void run(int rounds, boolean report) {
        try {
            org.ftmpi.LocalJob.run(2, Map.of("transports", "tcp"), w -> exercise(w, rounds));
        } catch (Exception | LinkageError e) {
            if (report) System.err.println("ftmpi: warm-up job failed (the first recovery will start cold): " + e);
        }
    }

    /**
     * Runs {@code rounds} rounds of the failure warm-up ({@link #failures}) for a job with the
     * options {@code job}; {@code report}: print a failure on stderr.
     */
    static void runFailures(Map<String, String> job, int rounds, boolean report) {
        try {
            for (int i = 0; i < rounds; i++) failures(job);
        } catch (Exception | LinkageError e) {
            if (report) System.err.println("ftmpi: failure warm-up failed (the first failure will run cold code): " + e);
        }
    }

    /**
     * Starts the warm-up of a rank ({@link #run}, then {@link #runFailures}) on a daemon thread;
     * returns it.
     */
    static Thread inBackground(Map<String, String> job) {
        return Thread.ofPlatform().name("ftmpi-warmup").daemon().priority(Thread.MIN_PRIORITY).start(() -> {
            run(RANK_ROUNDS, false);
            runFailures(job, FAILURE_ROUNDS, false);
        });
    }

    /**
     * Whether a rank started with these job options warms up in the background: with job option
     * {@code ft-warmup=true} (any modes, so that it can be measured under {@code --recovery-mode
     * ignore} too), never in a replacement. Off by default: see the class comment.
     */
    static boolean wanted(Map<String, String> options) {
        return !Boolean.parseBoolean(options.getOrDefault("restarted", "false"))
                && Boolean.parseBoolean(options.getOrDefault("ft-warmup", "false"));
    }

    /** Options of the failure warm-up's jobs that follow the real job's: error classes and modes. */
    private static Map<String, String> failureOptions(Map<String, String> job, String commMode, String recoveryMode) {
        Map<String, String> o = new java.util.HashMap<>();
        o.put("transports", "tcp");
        o.put("comm-mode", commMode);
        o.put("recovery-mode", recoveryMode);
        for (String k : new String[] {"ulfm-error-classes", "msg-mode", "coll-mode"}) {
            if (job.containsKey(k)) o.put(k, job.get(k));
        }
        return o;
    }

    /** One round of the failure paths (class comment): a death under IGNORE, then a recovery. */
    static void failures(Map<String, String> job) throws Exception {
        AtomicReference<LocalJobRuntime> rt = new AtomicReference<>();
        CyclicBarrier posted = new CyclicBarrier(4);
        org.ftmpi.LocalJob.run(4, failureOptions(job, "abort", "ignore"), rt::set, w -> ulfm(w, rt.get(), posted));
        String mode = job.getOrDefault("comm-mode", "shrink");
        String commMode = mode.equals("blank") ? "blank" : "shrink";
        CyclicBarrier entered = new CyclicBarrier(3);
        org.ftmpi.LocalJob.run(3, failureOptions(job, commMode, "auto"), rt::set, w -> recovery(w, rt.get(), entered));
    }

    /** The last rank dies while the others wait for it; the survivors run the ULFM operations. */
    private static void ulfm(Intracomm w, LocalJobRuntime rt, CyclicBarrier posted) throws Exception {
        w.setErrhandler(MPI.ERRORS_RETURN);
        int rank = w.getRank(), victim = w.getSize() - 1;
        w.barrier();
        if (rank == victim) {
            posted.await(BARRIER_S, TimeUnit.SECONDS);
            rt.kill(victim, "ended by the warm-up");
            return;
        }
        Request r = w.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, victim, 7);
        posted.await(BARRIER_S, TimeUnit.SECONDS);
        Intracomm s = survive(w, victim, r);
        s.barrier();
        s.free();
    }

    /**
     * A survivor's side of the death of {@code victim}, for which {@code pending} (a receive from
     * it) waits: the calls that fail with {@code ProcFailedException} (the receive, an {@code
     * ANY_SOURCE} receive and probe, a send to it, a collective, an {@code agree}), then {@code
     * getFailed}, {@code ackFailed}, {@code agree} and {@code shrink}; returns the shrunk
     * communicator after a reduction and an agreement on it. Also the AOT cache's training
     * ({@link AotTraining}), with a real process killed.
     */
    static Intracomm survive(Intracomm w, int victim, Request pending) throws MPIException {
        int[] one = {1}, r1 = new int[1];
        expectFailure(pending::waitFor);
        expectFailure(() -> w.recv(r1, 1, MPI.INT, MPI.ANY_SOURCE, 8));
        expectFailure(() -> w.iProbe(MPI.ANY_SOURCE, 8));
        expectFailure(() -> w.send(one, 1, MPI.INT, victim, 9));
        expectFailure(() -> w.allReduce(one, r1, 1, MPI.INT, MPI.SUM));
        if (w.getFailed().getSize() != 1) throw new IllegalStateException("warm-up: getFailed() is not the dead rank");
        expectFailure(() -> w.agree(1));
        w.ackFailed();
        w.agree(1);
        Intracomm s = w.shrink();
        s.allReduce(one, r1, 1, MPI.INT, MPI.SUM);
        s.agree(1);
        return s;
    }

    /** recovery-mode auto: the last rank dies during an allReduce; the survivors recover and reduce again. */
    private static void recovery(Intracomm w, LocalJobRuntime rt, CyclicBarrier entered) throws Exception {
        w.setErrhandler(MPI.ERRORS_RETURN);
        int rank = w.getRank(), n = w.getSize(), victim = n - 1;
        int[] one = {1}, sum = new int[1];
        w.allReduce(one, sum, 1, MPI.INT, MPI.SUM);
        entered.await(BARRIER_S, TimeUnit.SECONDS);
        if (rank == victim) {
            rt.kill(victim, "ended by the warm-up");
            return;
        }
        expectFailure(() -> {
            while (true) w.allReduce(one, sum, 1, MPI.INT, MPI.SUM); // until the death is known
        });
        w.allReduce(one, sum, 1, MPI.INT, MPI.SUM); // on the recovered COMM_WORLD
        if (sum[0] != n - 1) throw new IllegalStateException("warm-up: the recovered sum is " + sum[0]);
        w.barrier();
    }

    private interface Call {
        void run() throws MPIException;
    }

    /** Runs a call that must fail because a peer died. */
    private static void expectFailure(Call c) throws MPIException {
        try {
            c.run();
        } catch (ProcFailedException expected) {
            return;
        }
        throw new IllegalStateException("warm-up: a call with a dead peer did not fail");
    }

    /** The body of each of the two ranks. */
    static void exercise(Intracomm w, int rounds) throws MPIException {
        int rank = w.getRank(), peer = 1 - rank;
        int[] i1 = new int[1], i2 = new int[2];
        long[] l2 = new long[2];
        double[] d = new double[64], d2 = new double[64];
        byte[] b = new byte[4096], b2 = new byte[4096];
        ByteBuffer in = MPI.newByteBuffer(64), out = MPI.newByteBuffer(64);
        for (int round = 0; round < rounds; round++) {
            w.sendRecv(b, b.length, MPI.BYTE, peer, 1, b2, b2.length, MPI.BYTE, peer, 1);
            w.sendRecv(d, d.length, MPI.DOUBLE, peer, 2, d2, d2.length, MPI.DOUBLE, peer, 2);
            if (rank == 0) {
                w.send(i2, 2, MPI.INT, peer, 3);
                w.recv(l2, 2, MPI.LONG, peer, 4);
            } else {
                Status st = w.probe(MPI.ANY_SOURCE, 3);
                w.recv(i2, st.getCount(MPI.INT), MPI.INT, st.getSource(), 3);
                w.send(l2, 2, MPI.LONG, peer, 4);
            }
            Request r = w.iRecv(in, 64, MPI.BYTE, peer, 5);
            w.iSend(out, 64, MPI.BYTE, peer, 5).waitFor();
            r.waitFor();
            w.barrier();
            w.bcast(i1, 1, MPI.INT, 0);
            w.allReduce(i1, 1, MPI.INT, MPI.SUM);
            w.allReduce(l2, 2, MPI.LONG, MPI.MIN);
            w.allReduce(d, d.length, MPI.DOUBLE, MPI.SUM);
            w.allReduce(d2, 1, MPI.DOUBLE, MPI.MAX);
            w.reduce(d, d2, 8, MPI.DOUBLE, MPI.SUM, 0);
            w.allGather(i1, 1, MPI.INT, i2, 1, MPI.INT);
            if (round % 10 == 0) {
                w.agree(1);
                w.shrink().free();
            }
        }
    }
}
