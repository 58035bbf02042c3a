package org.ftmpi.transport.shm.it;

import org.ftmpi.testutil.Await;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import mpi.MPI;
import org.ftmpi.runtime.RuntimeEnv;
import org.ftmpi.runtime.SharedMemoryFiles;

/**
 * Rank program of {@link ShmCleanupSystemTest}: two ranks exchange a small and a large message
 * (run with {@code --transports shm}, so only shared memory can carry them). With the argument
 * {@code kill}, rank 1 then leaves a file with the job's prefix behind (as a rank killed before
 * it unlinked its segment would) and kills itself with SIGKILL while rank 0 waits for it.
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
}
