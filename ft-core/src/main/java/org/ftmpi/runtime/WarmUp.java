package org.ftmpi.runtime;

import java.nio.ByteBuffer;
import java.util.Map;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.Request;
import mpi.Status;

/**
 * Runs the library's communication and recovery code once before it is needed, so that a first
 * recovery (and a warm spare's takeover) does not pay for class loading, lambda and method-handle
 * linking and interpretation of cold code: a small MPI job of two threads-as-ranks
 * ({@link org.ftmpi.LocalJob}) over the real TCP transport, through the {@code mpi} facade —
 * point-to-point (blocking, non-blocking, {@code sendRecv}, probe), the common collectives, and
 * the ULFM {@code agree} and {@code shrink} that every recovery runs.
 *
 * <ul>
 * <li>A warm spare ({@link Spare}) runs {@link #SPARE_ROUNDS} rounds before it reports ready.</li>
 * <li>With the job option {@code ft-warmup=true}, a rank of a job that recovers ({@code
 *     --comm-mode shrink|blank|rebuild}) runs {@link #RANK_ROUNDS} rounds on a background daemon
 *     thread of minimum priority while the program starts ({@link RankMain}; not a REBUILD
 *     replacement, whose start-up is on the recovery path). Off by default: on the loaded 2-core
 *     development VM it did not measurably shorten a first SHRINK recovery (see
 *     docs/fault-tolerance.md, "Warm-up") and it costs CPU at start-up.</li>
 * </ul>
 * The warm-up job has engines and connections of its own (the library keeps no static state),
 * is not counted by {@code --inject at-call}, and a failure of it only means that the first
 * recovery starts cold.
 */
final class WarmUp {
    /** Rounds a warm spare runs before it reports ready (about 1 s at a load average of 25 on 2 cores). */
    static final int SPARE_ROUNDS = 60;
    /** Rounds a rank runs in the background: the classes and a first compilation of the recovery path. */
    static final int RANK_ROUNDS = 40;

    private WarmUp() {}

    /** Runs the warm-up job of {@code rounds} rounds; {@code report}: print a failure on stderr. */
    static void run(int rounds, boolean report) {
        try {
            org.ftmpi.LocalJob.run(2, Map.of("transports", "tcp"), w -> exercise(w, rounds));
        } catch (Exception | LinkageError e) {
            if (report) System.err.println("ftmpi: warm-up job failed (the first recovery will start cold): " + e);
        }
    }

    /** Starts {@link #run} on a daemon thread of minimum priority (a rank of a recovering job); returns it. */
    static Thread inBackground() {
        return Thread.ofPlatform().name("ftmpi-warmup").daemon().priority(Thread.MIN_PRIORITY)
                .start(() -> run(RANK_ROUNDS, false));
    }

    /** Whether a rank started with these job options warms up in the background. */
    static boolean wanted(Map<String, String> options) {
        String mode = options.getOrDefault("comm-mode", "abort");
        return !mode.equals("abort") && !options.getOrDefault("recovery-mode", "manual").equals("ignore")
                && !Boolean.parseBoolean(options.getOrDefault("restarted", "false"))
                && Boolean.parseBoolean(options.getOrDefault("ft-warmup", "false"));
    }

    /** The body of each of the two ranks. */
    private static void exercise(Intracomm w, int rounds) throws MPIException {
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
