package org.ftmpi.examples;

import java.util.Locale;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import org.ftmpi.ckpt.DisklessCheckpoint;
import mpi.ProcFailedException;

/**
 * Conjugate gradients on the 2-D Poisson problem that survives failures by shrinking (FT-MPI
 * comm-mode SHRINK, msg-mode RESET):
 *
 * <pre>
 * bin/ftmpirun -np 4 --comm-mode shrink --recovery-mode auto --inject rank=2,at-call=300 \
 *     org.ftmpi.examples.PoissonCG [N checkpointEvery tolerance [buddy|rs|rs:M]]
 * </pre>
 *
 * Solves {@code A x = b} for the 5-point Laplacian on an {@code N x N} grid (default 128, zero
 * Dirichlet boundary), where {@code b = A x*} for a known pseudo-random {@code x*}, from {@code x
 * = 0} until the residual norm falls below {@code tolerance} (default 1e-10) times that of {@code
 * b}. The grid rows are split in blocks over the ranks; each iteration exchanges one boundary row
 * with each neighbour and makes two {@code allReduce} dot products. Every {@code checkpointEvery}
 * iterations (default 25; 0: none, the fault-free baseline) the ranks keep their blocks of
 * {@code x, r, p} in memory with a buddy copy at the next rank ({@link DisklessCheckpoint#buddy}), or with
 * {@code rs:M} protected by M Reed-Solomon parity shards per stripe spread over the ranks
 * ({@link DisklessCheckpoint#reedSolomon}: survives any M failures between two checkpoints). When a
 * rank dies, SHRINK leaves the survivors a smaller COMM_WORLD (their old order); they roll back
 * to the newest checkpoint they all hold, <i>redistribute</i> the rows over the survivors and
 * continue. Rank 0 prints the iterations, the error against {@code x*} (the same as without a
 * failure, within the tolerance), the sum of {@code x}, the failures recovered, the time to
 * solution and the MPI calls each rank made.
 */
public final class PoissonCG {
    private final Intracomm world = MPI.COMM_WORLD;
    private final int grid, every;
    private final double tolerance;
    private final DisklessCheckpoint ckpt;
    private int lo, n; // my first grid row and my row count
    private double[] x, r, p, q, b;
    private final double[] ghostUp, ghostDown, bottom;
    private int iteration, savedAt = -1;
    private double rho, bnorm2, startMillis;
    private long calls;
    private boolean started;

    private PoissonCG(int grid, int every, double tolerance, int parity) throws MPIException {
        this.grid = grid;
        this.every = every;
        this.tolerance = tolerance;
        this.ckpt = parity > 0 ? DisklessCheckpoint.reedSolomon(3, grid * grid, 4, parity)
                : DisklessCheckpoint.buddy(3, grid * grid, 4);
        this.ghostUp = new double[grid];
        this.ghostDown = new double[grid];
        this.bottom = new double[grid];
    }

    public static void main(String[] args) throws MPIException {
        FtExample.init(args);
        int grid = FtExample.arg(args, 0, 128), every = FtExample.arg(args, 1, 25);
        double tol = 1e-10;
        try {
            if (args.length > 2) tol = Double.parseDouble(args[2]);
        } catch (NumberFormatException e) {
            tol = -1;
        }
        int parity = args.length > 3 ? parity(args[3]) : 0;
        if (grid < MPI.COMM_WORLD.getSize() || every < 0 || !(tol > 0 && tol < 1) || parity < 0) {
            FtExample.usage("PoissonCG [N checkpointEvery tolerance buddy|rs|rs:M]: need N >= ranks, checkpointEvery"
                    + " >= 0, 0 < tolerance < 1, checkpoint buddy (default), rs (Reed-Solomon, 1 parity) or rs:M"
                    + " (M >= 1 parity); got " + String.join(" ", args));
        }
        PoissonCG cg = new PoissonCG(grid, every, tol, parity);
        cg.startMillis = System.currentTimeMillis();
        int failures = FtExample.runRecovering(cg::solve);
        if (cg.world.getRank() == 0) {
            System.out.printf(Locale.ROOT, "PoissonCG %dx%d on %d ranks: %d iterations, relative residual %.3e,"
                    + " max error %.3e, sum(x) %.12e%n", grid, grid, cg.world.getSize(), cg.iteration,
                    Math.sqrt(cg.rho / cg.bnorm2), cg.result[0], cg.result[1]);
        }
        FtExample.report(failures, cg.startMillis, cg.calls + cg.ckpt.mpiCalls());
        MPI.Finalize();
    }

    private final double[] result = new double[2];

    /** 0 for "buddy", M for "rs:M" ("rs": 1), -1 for anything else. */
    private static int parity(String how) {
        if (how.equals("buddy")) return 0;
        if (how.equals("rs")) return 1;
        if (how.matches("rs:[1-9]\\d{0,2}")) return Integer.parseInt(how.substring(3));
        return -1;
    }

    private void solve(boolean rollBack) throws MPIException {
        layout();
        if (rollBack) {
            rollBack();
        } else if (!started) {
            initial();
        }
        started = true;
        while (rho > tolerance * tolerance * bnorm2 && iteration < 50 * grid) {
            if (every > 0 && iteration % every == 0 && iteration != savedAt) save();
            iterate();
        }
        double[] err = {0}, sum = {0};
        for (int i = 0; i < n * grid; i++) {
            err[0] = Math.max(err[0], Math.abs(x[i] - exact(lo * grid + i)));
            sum[0] += x[i];
        }
        world.allReduce(err, 1, MPI.DOUBLE, MPI.MAX);
        world.allReduce(sum, 1, MPI.DOUBLE, MPI.SUM);
        calls += 2;
        result[0] = err[0];
        result[1] = sum[0];
    }

    /** Splits the rows over the current COMM_WORLD (again after a shrink). */
    private void layout() throws MPIException {
        int[] block = FtExample.block(grid, world);
        lo = block[0];
        n = block[1];
        x = new double[n * grid];
        r = new double[n * grid];
        p = new double[n * grid];
        q = new double[n * grid];
        b = new double[n * grid];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < grid; j++) {
                int gi = lo + i;
                double v = 4 * exact(gi * grid + j);
                if (gi > 0) v -= exact((gi - 1) * grid + j);
                if (gi < grid - 1) v -= exact((gi + 1) * grid + j);
                if (j > 0) v -= exact(gi * grid + j - 1);
                if (j < grid - 1) v -= exact(gi * grid + j + 1);
                b[i * grid + j] = v;
            }
        }
    }

    /** x = 0, r = p = b. One allReduce. */
    private void initial() throws MPIException {
        java.util.Arrays.fill(x, 0);
        System.arraycopy(b, 0, r, 0, b.length);
        System.arraycopy(b, 0, p, 0, b.length);
        double[] d = {dot(b, b)};
        world.allReduce(d, 1, MPI.DOUBLE, MPI.SUM);
        calls++;
        rho = bnorm2 = d[0];
        iteration = 0;
    }

    private void save() throws MPIException {
        ckpt.save(world, new double[][] {x, r, p}, lo * grid, n * grid,
                new double[] {iteration, rho, bnorm2, startMillis});
        savedAt = iteration;
    }

    /** Survivors roll back to the agreed checkpoint and take their rows under the new layout. */
    private void rollBack() throws MPIException {
        DisklessCheckpoint.State s = FtExample.restore(ckpt, world);
        if (s == null) { // failed before the first checkpoint: start again
            initial();
        } else {
            int off = lo * grid, len = n * grid;
            System.arraycopy(s.vectors()[0], off, x, 0, len);
            System.arraycopy(s.vectors()[1], off, r, 0, len);
            System.arraycopy(s.vectors()[2], off, p, 0, len);
            iteration = (int) s.scalars()[0];
            rho = s.scalars()[1];
            bnorm2 = s.scalars()[2];
            startMillis = s.scalars()[3];
        }
        savedAt = -1; // save again at once: the buddies changed with the layout
    }

    /** One CG iteration: q = A p (2 sendRecv), two dot products (2 allReduce). */
    private void iterate() throws MPIException {
        int size = world.getSize(), rank = world.getRank();
        int up = rank > 0 ? rank - 1 : MPI.PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI.PROC_NULL;
        world.sendRecv(p, grid, MPI.DOUBLE, up, 1, ghostDown, grid, MPI.DOUBLE, down, 1);
        System.arraycopy(p, (n - 1) * grid, bottom, 0, grid);
        world.sendRecv(bottom, grid, MPI.DOUBLE, down, 2, ghostUp, grid, MPI.DOUBLE, up, 2);
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < grid; j++) {
                int k = i * grid + j;
                double v = 4 * p[k];
                v -= i > 0 ? p[k - grid] : ghostUp[j];
                v -= i < n - 1 ? p[k + grid] : ghostDown[j];
                if (j > 0) v -= p[k - 1];
                if (j < grid - 1) v -= p[k + 1];
                q[k] = v;
            }
        }
        double[] pq = {dot(p, q)};
        world.allReduce(pq, 1, MPI.DOUBLE, MPI.SUM);
        double alpha = rho / pq[0];
        for (int k = 0; k < x.length; k++) {
            x[k] += alpha * p[k];
            r[k] -= alpha * q[k];
        }
        double[] rr = {dot(r, r)};
        world.allReduce(rr, 1, MPI.DOUBLE, MPI.SUM);
        calls += 4;
        double beta = rr[0] / rho;
        for (int k = 0; k < p.length; k++) p[k] = r[k] + beta * p[k];
        rho = rr[0];
        iteration++;
    }

    private static double dot(double[] a, double[] c) {
        double s = 0;
        for (int k = 0; k < a.length; k++) s += a[k] * c[k];
        return s;
    }

    /** The known solution x* at global index k: pseudo-random in [0, 1). */
    private static double exact(int k) {
        return (GameOfLife.mix(k) % 1_000_003) / 1_000_003.0;
    }
}
