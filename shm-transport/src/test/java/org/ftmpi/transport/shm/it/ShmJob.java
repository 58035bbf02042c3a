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
 * gets and reports the error its receive ends with. {@code batch-kill} is the same with windows
 * of 64 messages of 64 KiB, which the receiver reads in batches (several PINNED records with one
 * process_vm_readv). With {@code announced-kill} (also {@code --recovery-mode ignore}), rank 1
 * sends one 64 KiB message (its announcement, the RTS, travels first; the data only when the
 * receiver asks for it) and kills itself once rank 0 has told it that the announcement is here
 * (CI once saw the death noticed before the RTS was read); rank 0 holds the announcement unmatched, waits until it
 * knows of the death, then posts the receive, and reports the error the receive ends with.
 * With {@code full-ring-kill} (also {@code --recovery-mode ignore}), rank 0 posts 1000 sends of
 * 32 KiB (the eager limit) to rank 1, 32 times what the ring holds, and rank 1 dies after
 * receiving the first: rank 0 reports how many of its sends failed, from which on, and with
 * which error.
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
            streamThenKill(me, 4 << 20, 4);
            return;
        }
        if (args.length > 0 && args[0].equals("batch-kill")) {
            streamThenKill(me, 64 << 10, 64);
            return;
        }
        if (args.length > 0 && args[0].equals("announced-kill")) {
            announcedThenKill(me, 64 << 10);
            return;
        }
        if (args.length > 0 && args[0].equals("full-ring-kill")) {
            fullRingThenKill(me, 32 << 10, 1000);
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

    private static void announcedThenKill(int me, int bytes) throws MPIException {
        MPI.COMM_WORLD.setErrhandler(MPI.ERRORS_RETURN);
        ByteBuffer b = MPI.newByteBuffer(bytes);
        if (me == 1) {
            MPI.COMM_WORLD.iSend(b, bytes, MPI.BYTE, 0, 6);
            // Dies only once rank 0 holds the announcement: a death noticed before the RTS was
            // read drops it (nothing can complete it), and the probe would see the failure instead.
            MPI.COMM_WORLD.recv(new byte[1], 1, MPI.BYTE, 0, 8);
            Await.killSelf();
        }
        Await.until("rank 1's announcement is here", java.time.Duration.ofSeconds(60), () -> probe(6) != null);
        MPI.COMM_WORLD.send(new byte[1], 1, MPI.BYTE, 1, 8);
        Await.until("rank 1's death is known", java.time.Duration.ofSeconds(60), () -> {
            try {
                MPI.COMM_WORLD.iProbe(1, 7); // no such message: raises once rank 1 is known failed
                return false;
            } catch (MPIException e) {
                return true;
            }
        });
        try {
            MPI.COMM_WORLD.iRecv(b, bytes, MPI.BYTE, 1, 6).waitFor();
            System.out.println("rank 0 received the message of a dead sender");
        } catch (MPIException e) {
            System.out.println("rank 0 receive ended: class " + e.getErrorClass() + " " + e.getClass().getSimpleName());
        }
        System.exit(0);
    }

    /**
     * Rank 0 posts {@code count} eager sends of {@code bytes} to rank 1, more than the ring
     * holds, so most wait in rank 0's engine for room; rank 1 takes the first and dies. Rank 0
     * reports how its sends ended.
     */
    private static void fullRingThenKill(int me, int bytes, int count) throws MPIException {
        MPI.COMM_WORLD.setErrhandler(MPI.ERRORS_RETURN);
        ByteBuffer b = MPI.newByteBuffer(bytes);
        if (me == 1) {
            MPI.COMM_WORLD.recv(b, bytes, MPI.BYTE, 0, 9);
            Await.killSelf();
        }
        Request[] reqs = new Request[count];
        for (int m = 0; m < count; m++) reqs[m] = MPI.COMM_WORLD.iSend(b, bytes, MPI.BYTE, 1, 9);
        int failed = 0, firstFailed = -1, succeededAfter = 0;
        String cls = "none";
        for (int m = 0; m < count; m++) {
            try {
                reqs[m].waitFor();
                if (firstFailed >= 0) succeededAfter++;
            } catch (MPIException e) {
                failed++;
                if (firstFailed < 0) firstFailed = m;
                cls = e.getErrorClass() + " " + e.getClass().getSimpleName();
            }
        }
        System.out.println("rank 0 sends ended: " + failed + " of " + count + " failed, from send " + firstFailed
                + " on; " + succeededAfter + " succeeded after a failed one: class " + cls);
        System.exit(0);
    }

    private static mpi.Status probe(int tag) {
        try {
            return MPI.COMM_WORLD.iProbe(1, tag);
        } catch (MPIException e) {
            throw new AssertionError("rank 1 failed before its message was seen", e);
        }
    }

    private static void streamThenKill(int me, int bytes, int window) throws MPIException {
        MPI.COMM_WORLD.setErrhandler(MPI.ERRORS_RETURN);
        ByteBuffer[] bufs = new ByteBuffer[window];
        for (int w = 0; w < window; w++) bufs[w] = MPI.newByteBuffer(bytes);
        Request[] reqs = new Request[window];
        int received = 0;
        for (int round = 0; ; round++) {
            for (int w = 0; w < window; w++) {
                int message = round * window + w;
                if (me == 1) {
                    bufs[w].put(0, (byte) message).put(bytes - 1, (byte) ~message);
                    reqs[w] = MPI.COMM_WORLD.iSend(bufs[w], bytes, MPI.BYTE, 0, 5);
                } else {
                    reqs[w] = MPI.COMM_WORLD.iRecv(bufs[w], bytes, MPI.BYTE, 1, 5);
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
            for (int w = 0; w < window && me == 0; w++) {
                int message = round * window + w;
                if (bufs[w].get(0) != (byte) message || bufs[w].get(bytes - 1) != (byte) ~message) {
                    throw new AssertionError("message " + message + " arrived corrupt");
                }
                received++;
            }
        }
    }
}
