package org.ftmpi.examples;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.ProcFailedException;
import mpi.Status;

/**
 * Master/worker Mandelbrot set (MPI/FT's Model-Ia, seed 000) that survives the loss of workers
 * under FT-MPI comm-mode BLANK and message mode CONT:
 *
 * <pre>
 * bin/ftmpirun -np 4 --comm-mode blank --msg-mode cont --recovery-mode auto \
 *     [--inject rank=2,at-call=10] org.ftmpi.examples.Mandelbrot [width height maxIter rowsPerTask [out.pgm]]
 * </pre>
 *
 * <p>Rank 0 is the master: it cuts the image into tasks of {@code rowsPerTask} rows and hands
 * them to the live workers in turn (round-robin, at most two outstanding per worker), collecting
 * results from {@code MPI.ANY_SOURCE}. When a worker dies, the recovery (AUTO: inside the call
 * that saw the failure) keeps COMM_WORLD's size and makes the dead worker a blank; a recovery
 * listener re-queues the tasks the dead worker had not returned, and every call the failure
 * interrupted is simply repeated: under CONT the messages that survivors had already sent are
 * still delivered, so no finished work is lost and nothing arrives twice. The image therefore
 * equals the fault-free one. The master prints one line with the image's CRC-32 and how many
 * tasks it re-issued, and writes a PGM file if asked to. The master itself must survive.
 */
public final class Mandelbrot {
    private static final int TASK = 1, RESULT = 2, STOP = -1, WINDOW = 2;

    private final int width, height, maxIter, rowsPerTask;

    private Mandelbrot(int width, int height, int maxIter, int rowsPerTask) {
        this.width = width;
        this.height = height;
        this.maxIter = maxIter;
        this.rowsPerTask = rowsPerTask;
    }

    public static void main(String[] args) throws Exception {
        MPI.Init(args);
        Intracomm world = MPI.COMM_WORLD;
        world.setErrhandler(MPI.ERRORS_RETURN);
        int[] v = {512, 384, 2000, 4};
        String out = null;
        try {
            for (int i = 0; i < Math.min(args.length, 4); i++) {
                v[i] = Integer.parseInt(args[i]);
                if (v[i] <= 0) throw new NumberFormatException("not positive");
            }
        } catch (NumberFormatException e) {
            if (world.getRank() == 0) {
                System.err.println("Mandelbrot: arguments are width height maxIter rowsPerTask [out.pgm],"
                        + " positive integers (" + e.getMessage() + ")");
            }
            MPI.Finalize();
            System.exit(2);
        }
        if (args.length > 4) out = args[4];
        Mandelbrot m = new Mandelbrot(v[0], v[1], v[2], v[3]);
        if (world.getSize() < 2) {
            System.err.println("Mandelbrot: needs a master and at least one worker (-np 2 or more)");
            MPI.Finalize();
            System.exit(2);
        }
        if (world.getRank() == 0) {
            if (MPI.getCommMode() != MPI.FTMPI_COMM_MODE_BLANK || MPI.getMsgMode() != MPI.FTMPI_MSG_MODE_CONT) {
                System.err.println("Mandelbrot: without --comm-mode blank --msg-mode cont a lost worker ends the job");
            }
            m.master(world, out);
        } else {
            m.worker(world);
        }
        MPI.Finalize();
    }

    // ------------------------------------------------------------------ master

    private void master(Intracomm world, String out) throws MPIException, IOException {
        int n = world.getSize();
        int tasks = (height + rowsPerTask - 1) / rowsPerTask;
        int[] image = new int[width * height];
        boolean[] done = new boolean[tasks], alive = new boolean[n];
        java.util.Arrays.fill(alive, 1, n, true);
        List<List<Integer>> outstanding = new ArrayList<>();
        for (int w = 0; w < n; w++) outstanding.add(new ArrayList<>());
        ArrayDeque<Integer> queue = new ArrayDeque<>();
        for (int t = 0; t < tasks; t++) queue.add(t);
        int[] reissued = {0};
        MPI.addRecoveryListener(failed -> { // the lost workers' tasks go back to the front of the queue
            for (int f : failed) {
                if (f <= 0 || !alive[f]) continue;
                alive[f] = false;
                List<Integer> lost = outstanding.get(f);
                for (int i = lost.size() - 1; i >= 0; i--) {
                    if (!done[lost.get(i)]) {
                        queue.addFirst(lost.get(i));
                        reissued[0]++;
                    }
                }
                lost.clear();
            }
        });
        int[] result = new int[1 + rowsPerTask * width];
        int finished = 0, next = 1;
        while (finished < tasks) {
            int w = nextLive(alive, next);
            if (w < 0) { // no worker left: the master computes the rest itself
                Integer t = queue.poll();
                if (t != null && !done[t]) {
                    compute(t, result);
                    store(result, image);
                    done[t] = true;
                    finished++;
                }
                continue;
            }
            if (!queue.isEmpty() && outstanding.get(w).size() < WINDOW) {
                int t = queue.poll();
                // counted before the send: a recovery inside it (AUTO) re-queues it with w's other tasks if w died
                outstanding.get(w).add(t);
                try {
                    world.send(new int[] {t}, 1, MPI.INT, w, TASK);
                } catch (ProcFailedException e) {
                    // not sent: the recovery has run. w alive (another worker died): hand it out again;
                    // w dead: the recovery listener has re-queued it already
                    if (alive[w] && outstanding.get(w).remove((Integer) t) && !done[t]) queue.addFirst(t);
                }
                next = w + 1;
                continue;
            }
            Status s;
            try {
                s = world.recv(result, result.length, MPI.INT, MPI.ANY_SOURCE, RESULT);
            } catch (ProcFailedException e) {
                continue; // a worker died; the listener re-queued its tasks
            }
            int t = result[0] / rowsPerTask;
            outstanding.get(s.getSource()).remove((Integer) t);
            if (!done[t]) {
                store(result, image);
                done[t] = true;
                finished++;
            }
        }
        for (int w = 1; w < n; w++) {
            if (alive[w]) world.send(new int[] {STOP}, 1, MPI.INT, w, TASK);
        }
        CRC32 crc = new CRC32();
        for (int px : image) crc.update(new byte[] {(byte) (px >>> 24), (byte) (px >>> 16), (byte) (px >>> 8), (byte) px});
        System.out.printf("mandelbrot %dx%d maxIter %d tasks %d workers %d crc32 %08x reissued %d%n", width, height,
                maxIter, tasks, n - 1, crc.getValue(), reissued[0]);
        if (out != null) writePgm(Path.of(out), image);
    }

    private static int nextLive(boolean[] alive, int from) {
        int n = alive.length;
        for (int k = 0; k < n; k++) {
            int w = (from + k) % n;
            if (alive[w]) return w;
        }
        return -1;
    }

    private void store(int[] result, int[] image) {
        int first = result[0];
        int rows = Math.min(rowsPerTask, height - first);
        System.arraycopy(result, 1, image, first * width, rows * width);
    }

    private void writePgm(Path file, int[] image) throws IOException {
        try (OutputStream o = Files.newOutputStream(file)) {
            o.write(("P5\n" + width + " " + height + "\n255\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            byte[] px = new byte[image.length];
            for (int i = 0; i < image.length; i++) px[i] = (byte) (image[i] >= maxIter ? 0 : 255 - (image[i] * 255 / maxIter));
            o.write(px);
        }
    }

    // ------------------------------------------------------------------ worker

    private void worker(Intracomm world) throws MPIException {
        int[] task = new int[1];
        int[] result = new int[1 + rowsPerTask * width];
        while (true) {
            Status s;
            try {
                s = world.recv(task, 1, MPI.INT, 0, TASK);
            } catch (ProcFailedException e) {
                continue; // interrupted by another worker's death (recovered, AUTO): wait again
            }
            if (s.getSource() == MPI.PROC_NULL) { // the master is a blank: nobody collects the image
                System.err.println("Mandelbrot: rank " + world.getRank() + ": the master (rank 0) failed; giving up");
                System.exit(1);
            }
            if (task[0] == STOP) return;
            compute(task[0], result);
            while (true) {
                try {
                    world.send(result, result.length, MPI.INT, 0, RESULT);
                    break;
                } catch (ProcFailedException e) {
                    // not sent (a failure was being recovered): send it again
                }
            }
        }
    }

    /** Escape iteration counts of task {@code t}'s rows into {@code result[1..]}; {@code result[0]} is its first row. */
    private void compute(int t, int[] result) {
        int first = t * rowsPerTask;
        result[0] = first;
        int rows = Math.min(rowsPerTask, height - first);
        for (int r = 0; r < rows; r++) {
            double ci = -1.2 + 2.4 * (first + r) / height;
            for (int x = 0; x < width; x++) {
                double cr = -2.2 + 3.2 * x / width;
                double zr = 0, zi = 0;
                int it = 0;
                while (it < maxIter && zr * zr + zi * zi <= 4) {
                    double tmp = zr * zr - zi * zi + cr;
                    zi = 2 * zr * zi + ci;
                    zr = tmp;
                    it++;
                }
                result[1 + r * width + x] = it;
            }
        }
    }
}
