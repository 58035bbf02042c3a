package org.ftmpi.bench.ft;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Locale;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.ProcFailedException;
import org.ftmpi.runtime.Signals;

/**
 * {@code bench ft-after [CALLS [ROUNDS]]}: whether a job that recovered from a process failure
 * computes as fast as it did before the failure. Run it with {@code --comm-mode
 * shrink|blank|rebuild --recovery-mode auto} (REBUILD with {@code -sp 1} or a cold respawn) on at
 * least 3 ranks:
 * <ol>
 * <li>before the failure, ROUNDS timed rounds (after one untimed) of CALLS 8-byte ping-pongs
 *     between ranks 0 and 1 and of CALLS one-int {@code allReduce(SUM)}s over the members the
 *     job will have after the recovery (REBUILD: every rank; SHRINK and BLANK: all but the last,
 *     which sleeps meanwhile, so that both phases share the cores among the same processes);
 * <li>the last rank SIGKILLs itself; every survivor's next {@code allReduce} fails, and the
 *     failing call recovers COMM_WORLD (AUTO);
 * <li>the same rounds on the recovered COMM_WORLD (REBUILD: with the replacement), one more than
 *     before: the first is reported alone (the JIT compiles again what the failure sent back to
 *     the interpreter), the median of the others is compared.
 * </ol>
 * Rank 0 prints one line: {@code RESULT ft-after np N mode M ping_us B A ratio R first F
 * allreduce_us B A ratio R first F} (one-way microseconds per message, microseconds per call;
 * medians over rounds; ratio = after / before).
 */
public final class AfterRecoveryBench {
    private AfterRecoveryBench() {}

    public static int run(String[] args, PrintStream out, PrintStream err) throws MPIException, IOException {
        int calls = args.length > 1 ? RecoveryBench.count(args[1]) : 100_000;
        int rounds = args.length > 2 ? RecoveryBench.count(args[2]) : 5;
        if (calls < 1 || rounds < 1 || args.length > 3) {
            err.println("bench ft-after: usage: ft-after [CALLS >= 1 [ROUNDS >= 1]], got "
                    + String.join(" ", Arrays.asList(args).subList(1, args.length)));
            return 2;
        }
        MPI.Init(args);
        Intracomm world = MPI.COMM_WORLD;
        world.setErrhandler(MPI.ERRORS_RETURN);
        int mode = MPI.getCommMode();
        if (MPI.getRecoveryMode() != MPI.FTMPI_RECOVERY_MODE_AUTO || mode == MPI.FTMPI_COMM_MODE_ABORT
                || world.getSize() < 3) {
            if (world.getRank() == 0) {
                err.println("bench ft-after: run it on at least 3 ranks with --comm-mode shrink|blank|rebuild"
                        + " --recovery-mode auto (got " + world.getSize() + " ranks)");
            }
            MPI.Finalize();
            return 2;
        }
        boolean rebuild = mode == MPI.FTMPI_COMM_MODE_REBUILD;
        ByteBuffer b = MPI.newByteBuffer(8);
        int[] one = {1}, sum = new int[1];
        double[] pingBefore = new double[rounds], reduceBefore = new double[rounds];
        if (!MPI.isRestarted()) {
            int n = world.getSize(), rank = world.getRank(), victim = n - 1;
            Intracomm after = rebuild ? world : world.split(rank < victim ? 0 : MPI.UNDEFINED, rank);
            Signals.prepare(); // the kill below is a system call, nothing linked
            if (after != null) {
                for (int r = -1; r < rounds; r++) {
                    double p = ping(after, b, calls), a = reduce(after, one, sum, calls);
                    if (r >= 0) {
                        pingBefore[r] = p;
                        reduceBefore[r] = a;
                    }
                }
            }
            if (!rebuild) { // the victim, not a member of 'after', sleeps meanwhile: it takes no core from them
                if (rank == 0) world.send(one, 1, MPI.INT, victim, 99);
                if (rank == victim) {
                    while (world.iProbe(0, 99) == null) sleep();
                    world.recv(sum, 1, MPI.INT, 0, 99);
                }
            }
            try {
                // a survivor may still be in this barrier when the victim, already out of it, dies
                world.barrier();
                if (rank == victim) Signals.send(ProcessHandle.current().pid(), Signals.SIGKILL);
                while (true) world.allReduce(one, sum, 1, MPI.INT, MPI.SUM); // until the failure is known
            } catch (ProcFailedException e) {
                MPI.recover(); // done already under AUTO
            }
        }
        double[] pingAfter = new double[rounds + 1], reduceAfter = new double[rounds + 1];
        for (int r = 0; r <= rounds; r++) {
            pingAfter[r] = ping(world, b, calls);
            reduceAfter[r] = reduce(world, one, sum, calls);
        }
        if (world.getRank() == 0) {
            String m = rebuild ? "rebuild" : mode == MPI.FTMPI_COMM_MODE_BLANK ? "blank" : "shrink";
            out.println(String.format(Locale.ROOT, "RESULT ft-after np %d mode %s ping_us %s allreduce_us %s",
                    world.getSize() + (mode == MPI.FTMPI_COMM_MODE_SHRINK ? 1 : 0), m,
                    compare(pingBefore, pingAfter), compare(reduceBefore, reduceAfter)));
        }
        MPI.Finalize();
        return 0;
    }

    private static void sleep() {
        try {
            Thread.sleep(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** "BEFORE AFTER ratio R first F": medians (after: without its first round). */
    private static String compare(double[] before, double[] after) {
        double b = FtBench.median(before), a = FtBench.median(Arrays.copyOfRange(after, 1, after.length));
        return String.format(Locale.ROOT, "%.3f %.3f ratio %.2f first %.3f", b, a, a / b, after[0]);
    }

    /** One round of {@code calls} 8-byte ping-pongs between ranks 0 and 1: microseconds one way (rank 0's clock). */
    private static double ping(Intracomm c, ByteBuffer b, int calls) throws MPIException {
        int rank = c.getRank();
        c.barrier();
        long t0 = System.nanoTime();
        for (int i = 0; i < calls; i++) {
            if (rank == 0) {
                c.send(b, 8, MPI.BYTE, 1, 1);
                c.recv(b, 8, MPI.BYTE, 1, 1);
            } else if (rank == 1) {
                c.recv(b, 8, MPI.BYTE, 0, 1);
                c.send(b, 8, MPI.BYTE, 0, 1);
            }
        }
        return (System.nanoTime() - t0) / 2e3 / calls;
    }

    /** One round of {@code calls} one-int allReduces: microseconds per call. */
    private static double reduce(Intracomm c, int[] one, int[] sum, int calls) throws MPIException {
        c.barrier();
        long t0 = System.nanoTime();
        for (int i = 0; i < calls; i++) c.allReduce(one, sum, 1, MPI.INT, MPI.SUM);
        return (System.nanoTime() - t0) / 1e3 / calls;
    }
}
