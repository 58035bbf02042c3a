package org.ftmpi.transport.shm;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import mpi.MPI;
import mpi.Request;
import mpi.Status;
import org.ftmpi.LocalJob;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * MPI point-to-point over the shared-memory transport only ({@code transports=shm}: the job
 * fails to start unless shm reaches every peer), with ranks as threads of this JVM: eager and
 * rendezvous sizes, heap arrays and direct buffers (the single-copy path), with and without
 * cross-memory attach and with the JDK-only control-word access.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmEngineTest {
    private static final int[] SIZES = {0, 1, 1000, 32 * 1024, 32 * 1024 + 1, 65_536, 200_000, (1 << 20) + 3};

    private static byte at(int size, int i) {
        return (byte) (i * 31 + size);
    }

    @ParameterizedTest
    @ValueSource(strings = {"auto", "off", "jdk-only"})
    void pingPongOfEverySizeFromHeapAndDirectBuffers(String mode) throws Exception {
        Map<String, String> options = mode.equals("jdk-only")
                ? Map.of("transports", "shm", "shm-unsafe", "false")
                : Map.of("transports", "shm", "shm-cma", mode);
        LocalJob.run(2, options, world -> {
            int me = world.getRank();
            for (int size : SIZES) {
                byte[] heap = new byte[size];
                ByteBuffer direct = MPI.newByteBuffer(Math.max(size, 1));
                if (me == 0) {
                    for (int i = 0; i < size; i++) {
                        heap[i] = at(size, i);
                        direct.put(i, at(size, i));
                    }
                    world.send(heap, size, MPI.BYTE, 1, 1);
                    world.send(direct, size, MPI.BYTE, 1, 2);
                    Status s = world.recv(direct, size, MPI.BYTE, 1, 3);
                    assertEquals(size, s.getCount(MPI.BYTE));
                    for (int i = 0; i < size; i++) assertEquals((byte) ~at(size, i), direct.get(i), "echo byte " + i);
                } else {
                    world.recv(heap, size, MPI.BYTE, 0, 1);
                    Status s = world.recv(direct, size, MPI.BYTE, 0, 2);
                    assertEquals(size, s.getCount(MPI.BYTE));
                    for (int i = 0; i < size; i++) {
                        assertEquals(at(size, i), heap[i], "heap byte " + i + " of " + size);
                        assertEquals(at(size, i), direct.get(i), "direct byte " + i + " of " + size);
                        direct.put(i, (byte) ~direct.get(i));
                    }
                    world.send(direct, size, MPI.BYTE, 0, 3);
                }
            }
        });
    }

    /** Four ranks (more than this machine's cores) exchange with everybody at once, non-blocking. */
    @ParameterizedTest
    @ValueSource(ints = {100, 300_000})
    void allPairsExchangeWithFourRanks(int size) throws Exception {
        LocalJob.run(4, Map.of("transports", "shm"), world -> {
            int me = world.getRank();
            int n = world.getSize();
            ByteBuffer[] in = new ByteBuffer[n];
            ByteBuffer[] out = new ByteBuffer[n];
            Request[] reqs = new Request[2 * n];
            for (int r = 0; r < n; r++) {
                in[r] = MPI.newByteBuffer(size);
                out[r] = MPI.newByteBuffer(size);
                for (int i = 0; i < size; i++) out[r].put(i, (byte) (me * 7 + r + i));
                reqs[2 * r] = world.iRecv(in[r], size, MPI.BYTE, r, 5);
                reqs[2 * r + 1] = world.iSend(out[r], size, MPI.BYTE, r, 5);
            }
            Request.waitAll(reqs);
            for (int r = 0; r < n; r++) {
                for (int i = 0; i < size; i += 97) assertEquals((byte) (r * 7 + me + i), in[r].get(i));
            }
        });
    }
}
