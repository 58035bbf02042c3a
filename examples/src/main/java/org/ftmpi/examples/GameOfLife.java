package org.ftmpi.examples;

import java.util.Locale;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import org.ftmpi.ckpt.DisklessCheckpoint;
import mpi.ProcFailedException;

/**
 * SPMD Game of Life that survives failures (seed 000's Model-IIa; FT-MPI comm-mode REBUILD,
 * msg-mode RESET):
 *
 * <pre>
 * bin/ftmpirun -np 4 -sp 1 --comm-mode rebuild --msg-mode reset --recovery-mode auto \
 *     --inject rank=2,at-call=500 org.ftmpi.examples.GameOfLife [rows cols generations checkpointEvery]
 * </pre>
 *
 * The torus of {@code rows x cols} cells (default 512 x 512, random start from a fixed seed) is
 * split in blocks of rows; each generation exchanges the boundary rows with the two neighbours.
 * Every {@code checkpointEvery} generations (default 20; 0: no checkpoints, the fault-free
 * baseline) the ranks keep their block in memory and a buddy copy at the next rank
 * ({@link DisklessCheckpoint#buddy}). When a rank dies, the recovery (REBUILD) gives its rank to a warm
 * spare or a new process, which starts {@code main} again with {@code MPI.isRestarted()} true;
 * the survivors see the failure as a {@code ProcFailedException} (after the recovery under
 * {@code --recovery-mode auto}; under {@code manual} they call {@code MPI.recover()}). Then all
 * ranks roll back to the newest checkpoint every survivor holds, and go on. The final grid is the
 * fault-free one: rank 0 prints its live-cell count and an order-independent checksum, the
 * failures recovered, the time to solution (from the start of the first generation, across
 * recoveries: the start time is part of the checkpoint) and the MPI calls each rank made.
 */
public final class GameOfLife {
    private final Intracomm world = MPI.COMM_WORLD;
    private final int rows, cols, generations, every;
    private final DisklessCheckpoint ckpt;
    private int lo, n; // my first global row and my row count
    private byte[] grid, next; // n rows of cols cells
    private final byte[] ghostUp, ghostDown, bottom;
    private int generation;
    private double startMillis;
    private long calls;

    private GameOfLife(int rows, int cols, int generations, int every) throws MPIException {
        this.rows = rows;
        this.cols = cols;
        this.generations = generations;
        this.every = every;
        this.ckpt = DisklessCheckpoint.buddy(1, rows * cols, 2);
        this.ghostUp = new byte[cols];
        this.ghostDown = new byte[cols];
        this.bottom = new byte[cols];
    }

    public static void main(String[] args) throws MPIException {
        FtExample.init(args);
        int rows = FtExample.arg(args, 0, 512), cols = FtExample.arg(args, 1, 512);
        int gens = FtExample.arg(args, 2, 400), every = FtExample.arg(args, 3, 20);
        if (rows < MPI.COMM_WORLD.getSize() || cols < 1 || gens < 0 || every < 0) {
            FtExample.usage("GameOfLife [rows cols generations checkpointEvery]: need rows >= ranks, cols >= 1,"
                    + " generations >= 0, checkpointEvery >= 0; got " + String.join(" ", args));
        }
        GameOfLife g = new GameOfLife(rows, cols, gens, every);
        g.startMillis = System.currentTimeMillis();
        int failures = FtExample.runRecovering(g::solve);
        if (g.world.getRank() == 0) {
            System.out.printf(Locale.ROOT, "GameOfLife %dx%d, %d generations, %d ranks: live cells %d, checksum %016x%n",
                    rows, cols, gens, g.world.getSize(), g.result[0], g.result[1]);
        }
        FtExample.report(failures, g.startMillis, g.calls + g.ckpt.mpiCalls());
        MPI.Finalize();
    }

    private final long[] result = new long[2];
    private int savedAt = -1;
    private boolean started;

    private void solve(boolean rollBack) throws MPIException {
        int[] block = FtExample.block(rows, world);
        lo = block[0];
        n = block[1];
        grid = new byte[n * cols];
        next = new byte[n * cols];
        if (rollBack) {
            rollBack();
        } else if (!started) {
            initial();
        }
        started = true;
        while (generation < generations) {
            if (every > 0 && generation % every == 0 && generation != savedAt) save();
            step();
        }
        world.allReduce(checksum(), result, 2, MPI.LONG, MPI.SUM);
        calls++;
    }

    private void initial() {
        for (int r = 0; r < n; r++) {
            for (int c = 0; c < cols; c++) grid[r * cols + c] = (byte) (mix((long) (lo + r) * cols + c) % 100 < 30 ? 1 : 0);
        }
        generation = 0;
    }

    private void save() throws MPIException {
        double[] cells = new double[n * cols];
        for (int i = 0; i < cells.length; i++) cells[i] = grid[i];
        ckpt.save(world, new double[][] {cells}, lo * cols, n * cols, new double[] {generation, startMillis});
        savedAt = generation;
    }

    /** Every rank (survivors and replacements) rolls back to the agreed checkpoint. */
    private void rollBack() throws MPIException {
        DisklessCheckpoint.State s = FtExample.restore(ckpt, world);
        if (s == null) { // failed before the first checkpoint: start again
            initial();
        } else {
            double[] cells = s.vectors()[0];
            for (int i = 0; i < n * cols; i++) grid[i] = (byte) cells[lo * cols + i];
            generation = (int) s.scalars()[0];
            startMillis = s.scalars()[1];
        }
        savedAt = -1; // save again at once: the replacement holds no buddy copy yet
    }

    private void step() throws MPIException {
        int size = world.getSize(), rank = world.getRank();
        int up = (rank - 1 + size) % size, down = (rank + 1) % size;
        // my top row goes up and the row below me comes from down; then the other way
        world.sendRecv(grid, cols, MPI.BYTE, up, 1, ghostDown, cols, MPI.BYTE, down, 1);
        System.arraycopy(grid, (n - 1) * cols, bottom, 0, cols);
        world.sendRecv(bottom, cols, MPI.BYTE, down, 2, ghostUp, cols, MPI.BYTE, up, 2);
        calls += 2;
        for (int r = 0; r < n; r++) {
            for (int c = 0; c < cols; c++) {
                int alive = 0;
                for (int dr = -1; dr <= 1; dr++) {
                    for (int dc = -1; dc <= 1; dc++) {
                        if (dr != 0 || dc != 0) alive += cell(r + dr, (c + dc + cols) % cols);
                    }
                }
                int me = grid[r * cols + c];
                next[r * cols + c] = (byte) (alive == 3 || (alive == 2 && me == 1) ? 1 : 0);
            }
        }
        byte[] t = grid;
        grid = next;
        next = t;
        generation++;
    }

    private int cell(int r, int c) {
        if (r < 0) return ghostUp[c];
        if (r >= n) return ghostDown[c];
        return grid[r * cols + c];
    }

    /** {live cells, sum of a hash of every live cell's position}: independent of the split. */
    private long[] checksum() {
        long live = 0, sum = 0;
        for (int r = 0; r < n; r++) {
            for (int c = 0; c < cols; c++) {
                if (grid[r * cols + c] != 0) {
                    live++;
                    sum += mix((long) (lo + r) * cols + c);
                }
            }
        }
        return new long[] {live, sum};
    }

    /** A 64-bit mixer (SplitMix64's finaliser), non-negative. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return (z ^ (z >>> 31)) >>> 1;
    }
}
