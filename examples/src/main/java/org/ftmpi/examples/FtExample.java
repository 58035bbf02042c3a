package org.ftmpi.examples;

import java.util.Locale;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.ProcFailedException;
import org.ftmpi.ckpt.CheckpointException;
import org.ftmpi.ckpt.DisklessCheckpoint;

/**
 * What the fault-tolerant examples ({@link GameOfLife}, {@link PoissonCG}) share: argument
 * parsing, the loop that rolls back after a failure, the block split of rows and the report line.
 */
final class FtExample {
    private FtExample() {}

    /** The part of a program that a failure makes start again from its last checkpoint. */
    interface Body {
        /** Runs to the end; {@code rollBack}: restore the last checkpoint first (after a failure). */
        void run(boolean rollBack) throws MPIException;
    }

    /**
     * Runs {@code body} until it completes without a process failure; returns the number of
     * failures recovered. A failure surfaces as {@code ProcFailedException} in a survivor (under
     * {@code --recovery-mode auto} COMM_WORLD is already rebuilt then; under {@code manual} the
     * loop calls {@code MPI.recover()}, which returns at once when auto did it), and the body
     * runs again with {@code rollBack} true. A REBUILD replacement starts with {@code rollBack}
     * true ({@code MPI.isRestarted()}).
     */
    static int runRecovering(Body body) throws MPIException {
        boolean rollBack = MPI.isRestarted();
        int failures = 0;
        while (true) {
            try {
                body.run(rollBack);
                return failures;
            } catch (ProcFailedException e) {
                failures++;
                MPI.recover();
                rollBack = true;
            }
        }
    }

    /** Starts MPI with errors returned (the examples handle failures themselves). */
    static void init(String[] args) throws MPIException {
        MPI.Init(args);
        MPI.COMM_WORLD.setErrhandler(MPI.ERRORS_RETURN);
    }

    /** Integer argument {@code i} or {@code dflt}; a non-number ends the program (exit 2). */
    static int arg(String[] args, int i, int dflt) throws MPIException {
        if (args.length <= i) return dflt;
        try {
            return Integer.parseInt(args[i]);
        } catch (NumberFormatException e) {
            return usage("argument " + (i + 1) + " '" + args[i] + "' is not a number");
        }
    }

    /** Prints {@code message} (rank 0) and ends the program with status 2. */
    static int usage(String message) throws MPIException {
        if (MPI.COMM_WORLD.getRank() == 0) System.err.println(message);
        MPI.Finalize();
        System.exit(2);
        return 0;
    }

    /** {first row, row count} of this rank's block when {@code rows} rows are split over {@code comm}. */
    static int[] block(int rows, Intracomm comm) throws MPIException {
        int size = comm.getSize(), rank = comm.getRank();
        int lo = blockStart(rows, size, rank);
        return new int[] {lo, blockStart(rows, size, rank + 1) - lo};
    }

    private static int blockStart(int n, int parts, int part) {
        return (int) ((long) n * part / parts);
    }

    /** Rank 0 prints the line the benchmarks and tests read. */
    static void report(int failures, double startMillis, long calls) throws MPIException {
        if (MPI.COMM_WORLD.getRank() != 0) return;
        System.out.printf(Locale.ROOT, "failures recovered %d, time to solution %.1f ms, mpi-calls %d%n", failures,
                System.currentTimeMillis() - startMillis, calls);
    }

    /**
     * Every rank rolls back to the agreed checkpoint ({@link DisklessCheckpoint#restore}); null:
     * nothing was saved yet. If the checkpoint cannot be rebuilt (more processes failed than its
     * redundancy covers), rank 0 says why and the job ends with exit code 3.
     */
    static DisklessCheckpoint.State restore(DisklessCheckpoint ckpt, Intracomm world) throws MPIException {
        try {
            return ckpt.restore(world);
        } catch (CheckpointException e) {
            if (world.getRank() == 0) System.err.println(e.getMessage());
            world.abort(3);
            throw e; // abort does not return
        }
    }
}
