package org.ftmpi.bench.ft;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.Locale;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;

/**
 * {@code bench ft-coll}: the fault-free cost of FT-MPI's collective mode. One job measures
 * allReduce (8 B and 64 KiB), bcast 64 KiB, allGather 1 KiB per rank, barrier, and (np >= 2)
 * {@code createIntercomm} between the even and the odd ranks followed by {@code free} (under
 * ATOMIC it ends in the agreement over both groups) under the
 * collective mode it was started with; run it once with {@code --coll-mode nonatomic} (the
 * default) and once with {@code --coll-mode atomic}, interleaved, and compare. Each operation:
 * a warm-up pass, then {@code reps} timed passes of {@code iters} calls after a barrier; the time
 * of a pass is the maximum over the ranks; prints the median pass time per call, microseconds, in
 * one {@code RESULT} line on rank 0.
 */
public final class CollModeBench {
    private CollModeBench() {}

    /** {@code ft-coll [iters]}; returns the exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) throws MPIException {
        int iters = 200;
        if (args.length > 1) {
            try {
                iters = Integer.parseInt(args[1]);
            } catch (NumberFormatException e) {
                iters = -1;
            }
            if (iters <= 0) {
                err.println("bench ft-coll: iters must be a positive integer, not '" + args[1] + "'");
                return 2;
            }
        }
        MPI.Init(args);
        Intracomm w = MPI.COMM_WORLD;
        try {
            int n = w.getSize();
            double[] small = new double[1], smallOut = new double[1];
            double[] big = new double[8192], bigOut = new double[8192];
            byte[] block = new byte[1024], gathered = new byte[1024 * n];
            int colour = w.getRank() % 2;
            Intracomm half = n >= 2 ? w.split(colour, w.getRank()) : null;
            Op[] ops = {
                () -> w.allReduce(small, smallOut, 1, MPI.DOUBLE, MPI.SUM),
                () -> w.allReduce(big, bigOut, big.length, MPI.DOUBLE, MPI.SUM),
                () -> w.bcast(big, big.length, MPI.DOUBLE, 0),
                () -> w.allGather(block, block.length, MPI.BYTE, gathered, block.length, MPI.BYTE),
                w::barrier,
                () -> {
                    if (half != null) w.createIntercomm(half, 0, 1 - colour, 9).free();
                },
            };
            double[] us = new double[ops.length];
            for (int i = 0; i < ops.length; i++) us[i] = median(w, ops[i], iters);
            if (w.getRank() == 0) {
                out.printf(Locale.ROOT, "RESULT ft-coll np %d mode %s allreduce8_us %.2f allreduce64k_us %.2f"
                        + " bcast64k_us %.2f allgather1k_us %.2f barrier_us %.2f intercomm_us %s%n", n,
                        MPI.getCollMode() == MPI.FTMPI_COLL_MODE_ATOMIC ? "atomic" : "nonatomic",
                        us[0], us[1], us[2], us[3], us[4], half == null ? "-" : String.format(Locale.ROOT, "%.2f", us[5]));
            }
            return 0;
        } finally {
            out.flush();
            MPI.Finalize();
        }
    }

    @FunctionalInterface
    private interface Op {
        void call() throws MPIException;
    }

    /** Median over 7 passes of the per-call time (max over ranks), after one untimed pass. */
    private static double median(Intracomm w, Op op, int iters) throws MPIException {
        int reps = 7;
        double[] t = new double[reps];
        for (int pass = -1; pass < reps; pass++) {
            w.barrier();
            long t0 = System.nanoTime();
            for (int i = 0; i < iters; i++) op.call();
            double mine = (System.nanoTime() - t0) / 1e3 / iters;
            double[] max = new double[1];
            w.allReduce(new double[] {mine}, max, 1, MPI.DOUBLE, MPI.MAX);
            if (pass >= 0) t[pass] = max[0];
        }
        Arrays.sort(t);
        return t[reps / 2];
    }
}
