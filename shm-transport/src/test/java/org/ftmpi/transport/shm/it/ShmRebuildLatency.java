package org.ftmpi.transport.shm.it;

import java.nio.ByteBuffer;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.ProcFailedException;
import org.ftmpi.testutil.Await;

/**
 * Measurement probe (not a test; docs/benchmarks.md, "Issue 8, session 8"): ping-pong latency
 * of small messages between rank 0 and rank 1, OSU-style (half the round trip, averaged), first
 * between the original processes, then after rank 1 was killed with SIGKILL and replaced
 * (comm-mode REBUILD, recovery AUTO) between rank 0 and the replacement. Run with
 * {@code bin/ftmpirun -np 2 --comm-mode rebuild --recovery-mode auto [-sp 1] -cp
 * shm-transport/target/test-classes:ft-core/target/test-classes
 * org.ftmpi.transport.shm.it.ShmRebuildLatency [BYTES [ITERATIONS]]}.
 */
public final class ShmRebuildLatency {
    private ShmRebuildLatency() {}

    public static void main(String[] args) throws Exception {
        int bytes = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        int iterations = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
        MPI.Init(args);
        Intracomm world = MPI.COMM_WORLD;
        world.setErrhandler(MPI.ERRORS_RETURN);
        int me = world.getRank();
        ByteBuffer buf = MPI.newByteBuffer(Math.max(1, bytes));
        if (!MPI.isRestarted()) {
            double before = pingPong(world, me, buf, bytes, iterations);
            if (me == 0) System.out.printf("original rank 1: %d B %.3f us%n", bytes, before);
            try {
                world.barrier();
            } catch (ProcFailedException e) {
                // rank 1 died while this rank was in the barrier: recovered already
            }
            if (me == 1) Await.killSelf();
            while (true) {
                try {
                    world.barrier();
                    break;
                } catch (ProcFailedException e) {
                    // recovered (AUTO): rank 1 has its replacement now
                }
            }
        } else {
            world.barrier();
        }
        double after = pingPong(world, me, buf, bytes, iterations);
        if (me == 0) System.out.printf("replacement of rank 1: %d B %.3f us%n", bytes, after);
        MPI.Finalize();
    }

    /** Half the mean round trip in microseconds, after {@code iterations / 10} warm-up round trips. */
    private static double pingPong(Intracomm world, int me, ByteBuffer buf, int bytes, int iterations)
            throws MPIException {
        int warm = iterations / 10;
        long start = 0;
        for (int i = 0; i < warm + iterations; i++) {
            if (i == warm) start = System.nanoTime();
            if (me == 0) {
                world.send(buf, bytes, MPI.BYTE, 1, 1);
                world.recv(buf, bytes, MPI.BYTE, 1, 1);
            } else {
                world.recv(buf, bytes, MPI.BYTE, 0, 1);
                world.send(buf, bytes, MPI.BYTE, 0, 1);
            }
        }
        return (System.nanoTime() - start) / 2.0 / iterations / 1000.0;
    }
}
