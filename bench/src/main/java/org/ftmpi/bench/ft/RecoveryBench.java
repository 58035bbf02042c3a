package org.ftmpi.bench.ft;

import java.io.PrintStream;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.ProcFailedException;

/**
 * {@code bench ft-recover [ITERATIONS]}: the program of the recovery-time benchmark
 * ({@code bench/ft/run-ft-bench.sh --only recover}). Every rank runs ITERATIONS (default 600)
 * one-int {@code allReduce}s; the script kills a rank part-way with {@code --inject
 * rank=R,at-call=N} and runs the job with {@code --comm-mode shrink|blank|rebuild
 * --recovery-mode auto --opt ft-trace=true}, so that every survivor prints the time from its
 * failure notice to COMM_WORLD rebuilt. After a failure the survivors (and, under REBUILD, the
 * replacement) agree on the iteration to continue from (an {@code allReduce(MAX)}) and finish
 * the loop; rank 0 prints one {@code RESULT} line with the size and the failures it saw.
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
        int iterations = 600;
        if (args.length > 1) {
            try {
                iterations = Integer.parseInt(args[1]);
            } catch (NumberFormatException e) {
                iterations = -1;
            }
            if (iterations < 1) {
                err.println("bench ft-recover: ITERATIONS must be a positive integer, got '" + args[1] + "'");
                return 2;
            }
        }
        MPI.Init(args);
        try {
            FtBench.awaitWarmUp(); // the injected failure comes after it (at-call counts from here)
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Intracomm world = MPI.COMM_WORLD;
        world.setErrhandler(MPI.ERRORS_RETURN);
        int[] done = {0}, sum = new int[1];
        int failures = 0;
        boolean sync = MPI.isRestarted();
        while (true) {
            try {
                if (sync) {
                    world.allReduce(done, 1, MPI.INT, MPI.MAX);
                    sync = false;
                }
                while (done[0] < iterations) {
                    world.allReduce(new int[] {1}, sum, 1, MPI.INT, MPI.SUM);
                    done[0]++;
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
        MPI.Finalize();
        return 0;
    }
}
