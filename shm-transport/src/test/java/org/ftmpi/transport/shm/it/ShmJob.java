package org.ftmpi.transport.shm.it;

import org.ftmpi.testutil.Await;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import mpi.MPI;
import mpi.MPIException;
import mpi.Request;
import org.ftmpi.runtime.RuntimeEnv;
import org.ftmpi.runtime.SharedMemoryFiles;

/**
 * Rank program of {@link ShmCleanupSystemTest}: two ranks exchange a small and a large message
 * (run with {@code --transports shm}, so only shared memory can carry them). With the argument
 * {@code kill}, rank 1 then leaves a file with the job's prefix behind (as a rank killed before
 * it unlinked its segment would) and kills itself with SIGKILL while rank 0 waits for it.
 * With {@code stream-kill} (run with {@code --recovery-mode ignore}), rank 1 streams windows of
 * 4 MiB messages from direct buffers (the single-copy path: one process_vm_readv per message)
 * and kills itself after posting the sends of its fourth window; rank 0 checks every message it
 * gets and reports the error its receive ends with.
 */
public final class ShmJob {
    private ShmJob() {}

    public static void main(String[] args) throws Exception {
        MPI.Init(args);
        int me = MPI.COMM_WORLD.getRank();
        long jobId = Long.parseUnsignedLong(System.getenv(RuntimeEnv.JOB_ID), 16);
        if (me == 0) System.out.println("job " + SharedMemoryFiles.prefix(jobId));
        for (int size : new int[] {8, 1 << 20}) {
            ByteBuffer b = MPI.newByteBuffer(size);
            if (me == 0) {
                b.put(size - 1, (byte) 42);
                MPI.COMM_WORLD.send(b, size, MPI.BYTE, 1, 1);
                MPI.COMM_WORLD.recv(b, size, MPI.BYTE, 1, 2);
                if (b.get(size - 1) != 43) throw new AssertionError("bad echo");
            } else {
                MPI.COMM_WORLD.recv(b, size, MPI.BYTE, 0, 1);
                b.put(size - 1, (byte) (b.get(size - 1) + 1));
                MPI.COMM_WORLD.send(b, size, MPI.BYTE, 0, 2);
            }
        }
        System.out.println("rank " + me + " transferred");
        if (args.length > 0 && args[0].equals("stream-kill")) {
            streamThenKill(me);
            return;
        }
        if (args.length > 0 && args[0].equals("kill")) {
            if (me == 1) {
                Files.createFile(Path.of(SharedMemoryFiles.DEFAULT_DIR, SharedMemoryFiles.prefix(jobId) + "leftover-1"));
                Await.killSelf();
            } else {
                MPI.COMM_WORLD.recv(new byte[1], 1, MPI.BYTE, 1, 3);
            }
        }
        MPI.Finalize();
    }

    private static final int STREAM_BYTES = 4 << 20;
    private static final int STREAM_WINDOW = 4;

    private static void streamThenKill(int me) throws MPIException {
        MPI.COMM_WORLD.setErrhandler(MPI.ERRORS_RETURN);
        ByteBuffer[] bufs = new ByteBuffer[STREAM_WINDOW];
        for (int w = 0; w < STREAM_WINDOW; w++) bufs[w] = MPI.newByteBuffer(STREAM_BYTES);
        Request[] reqs = new Request[STREAM_WINDOW];
        int received = 0;
        for (int round = 0; ; round++) {
            for (int w = 0; w < STREAM_WINDOW; w++) {
                int message = round * STREAM_WINDOW + w;
                if (me == 1) {
                    bufs[w].put(0, (byte) message).put(STREAM_BYTES - 1, (byte) ~message);
                    reqs[w] = MPI.COMM_WORLD.iSend(bufs[w], STREAM_BYTES, MPI.BYTE, 0, 5);
                } else {
                    reqs[w] = MPI.COMM_WORLD.iRecv(bufs[w], STREAM_BYTES, MPI.BYTE, 1, 5);
                }
            }
            if (me == 1 && round == 3) Await.killSelf(); // its sends are posted, the receiver is reading
            try {
                Request.waitAll(reqs);
            } catch (MPIException e) {
                System.out.println("rank " + me + " stream ended after " + received + " good messages: class "
                        + e.getErrorClass() + " " + e.getClass().getSimpleName());
                System.exit(0);
            }
            for (int w = 0; w < STREAM_WINDOW && me == 0; w++) {
                int message = round * STREAM_WINDOW + w;
                if (bufs[w].get(0) != (byte) message || bufs[w].get(STREAM_BYTES - 1) != (byte) ~message) {
                    throw new AssertionError("message " + message + " arrived corrupt");
                }
                received++;
            }
        }
    }
}
