package org.ftmpi.bench.ft;

import java.io.PrintStream;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.ProcFailedException;

/**
 * {@code bench ft-recover [ITERATIONS [QUIET_AT]]}: the program of the recovery-time benchmark
 * ({@code bench/ft/run-ft-bench.sh --only recover}). Every rank runs ITERATIONS (default 600)
 * one-int {@code allReduce}s; the script kills a rank part-way with {@code --inject
 * rank=R,at-call=N} and runs the job with {@code --comm-mode shrink|blank|rebuild
 * --recovery-mode auto --opt ft-trace=true}, so that every survivor prints the time from its
 * failure notice to COMM_WORLD rebuilt. After a failure the survivors (and, under REBUILD, the
 * replacement) agree on the iteration to continue from (an {@code allReduce(MAX)}) and finish
 * the loop; rank 0 prints one {@code RESULT} line with the size and the failures it saw. Every
 * rank that took part in that first {@code allReduce} after a recovery prints when it returned
 * ({@code ft-recover: rank R: t=NANOS resumed after the recovery} on stderr, at the end): the
 * job computes again only once every rank, a REBUILD replacement included, is through it.
 *
 * <p>With QUIET_AT, every rank stops once after that many iterations until its JIT compiler has
 * had nothing to compile for 200 ms (at most 20 s), so that a kill a few hundred calls later
 * ({@code ft-recover 21000 20000} with {@code at-call=20300}) comes in the steady state of a long
 * run, as a failure of a week-long solver does: the loop's code is compiled and nothing else
 * competes for the cores but the failure's own handling. Without it (the default) a kill at call
 * 300 comes while the JIT compiles the loop it has just found hot (docs/benchmarks.md, "Session
 * 21").
 */
public final class RecoveryBench {
    private RecoveryBench() {}

    /** {@code ... org.ftmpi.bench.ft.RecoveryBench [ITERATIONS]}, the same as {@code bench ft-recover}. */
    public static void main(String[] args) throws MPIException {
        String[] a = new String[args.length + 1];
        a[0] = "ft-recover";
        System.arraycopy(args, 0, a, 1, args.length);
        System.exit(run(a, System.out, System.err));
    }

    /** Runs the benchmark; returns the exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) throws MPIException {
        int iterations = args.length > 1 ? count(args[1]) : 600;
        if (iterations < 1) {
            err.println("bench ft-recover: ITERATIONS must be a positive integer, got '" + args[1] + "'");
            return 2;
        }
        int quietAt = args.length > 2 ? count(args[2]) : -1;
        if (args.length > 2 && (quietAt < 1 || quietAt >= iterations)) {
            err.println("bench ft-recover: QUIET_AT must be a positive integer below ITERATIONS (" + iterations + "), got '"
                    + args[2] + "'");
            return 2;
        }
        if (args.length > 3) {
            err.println("bench ft-recover: expected [ITERATIONS [QUIET_AT]], got " + (args.length - 1) + " arguments");
            return 2;
        }
        MPI.Init(args);
        // the injected failure comes after it (at-call counts from here); not in a replacement,
        // which the survivors wait for in their first allReduce after the recovery
        if (!MPI.isRestarted()) awaitQuietJit();
        Intracomm world = MPI.COMM_WORLD;
        world.setErrhandler(MPI.ERRORS_RETURN);
        int[] done = {0}, sum = new int[1];
        int failures = 0;
        boolean sync = MPI.isRestarted();
        long resumedNs = 0; // when the first allReduce after the first recovery returned
        while (true) {
            try {
                if (sync) {
                    world.allReduce(done, 1, MPI.INT, MPI.MAX);
                    sync = false;
                    if (resumedNs == 0) resumedNs = System.nanoTime();
                }
                while (done[0] < iterations) {
                    world.allReduce(new int[] {1}, sum, 1, MPI.INT, MPI.SUM);
                    if (++done[0] == quietAt) awaitQuietJit();
                }
                break;
            } catch (ProcFailedException e) {
                failures++;
                MPI.recover(); // at once under --recovery-mode auto
                sync = true;
            }
        }
        if (world.getRank() == 0) {
            out.println("RESULT ft-recover np " + world.getSize() + " failures " + failures + " last_sum " + sum[0]);
        }
        out.flush();
        if (resumedNs != 0) {
            // System.nanoTime is one clock for the processes of a host, as in the library's
            // ft-trace lines: bench/ft/timeline.sh and run-ft-bench.sh merge them
            err.println("ft-recover: rank " + world.getRank() + ": t=" + resumedNs + " resumed after the recovery");
            err.flush();
        }
        MPI.Finalize();
        return 0;
    }

    /** A whole number of at least 1, or -1 (also for {@link AfterRecoveryBench}). */
    static int count(String s) {
        try {
            int v = Integer.parseInt(s);
            return v >= 1 ? v : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** Waits for the library's warm-up thread and then for 200 ms without JIT compilations ({@link FtBench#awaitWarmUp}). */
    private static void awaitQuietJit() {
        try {
            FtBench.awaitWarmUp();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
