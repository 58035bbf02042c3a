package org.ftmpi.transport;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.util.Map;
import mpi.MPI;
import mpi.Request;
import mpi.Status;
import org.ftmpi.LocalJob;

/**
 * MPI traffic patterns that every transport's engine-level test runs (ranks as threads of one
 * JVM, the transport chosen with job options such as {@code transports=tcp}).
 */
public final class EngineTraffic {
    private EngineTraffic() {}

    private static byte at(int size, int i) {
        return (byte) (i * 31 + size);
    }

    /**
     * Two ranks: for every size, a heap array and a direct buffer go 0 -> 1, and the direct
     * buffer, inverted, comes back; every byte is checked on both sides.
     */
    public static void pingPongOfEverySize(Map<String, String> options, int[] sizes) throws Exception {
        LocalJob.run(2, options, world -> {
            int me = world.getRank();
            for (int size : sizes) {
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

    /**
     * Rendezvous-sized messages (of {@code size} bytes, above the eager limit) into receive
     * buffers smaller than the data the request carries inline, between that and the message,
     * and exact; posted before the message arrives and after (unexpected). Each truncated
     * receive reports ERR_TRUNCATE with the prefix that fits, and the message after it is intact.
     */
    public static void rendezvousIntoShortBuffers(Map<String, String> options, int size) throws Exception {
        int[] capacities = {10, size / 3, size - 1, size};
        LocalJob.run(2, options, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            ByteBuffer data = MPI.newByteBuffer(size);
            for (int i = 0; i < size; i++) data.put(i, at(size, i));
            if (world.getRank() == 0) {
                for (int k = 0; k < 2 * capacities.length; k++) {
                    world.recv(new byte[1], 1, MPI.BYTE, 1, 100); // the receiver is ready for message k
                    Request big = world.iSend(data, size, MPI.BYTE, 1, k); // completes once matched
                    world.send(new int[] {k}, 1, MPI.INT, 1, 1000 + k);
                    big.waitFor();
                }
            } else {
                for (int k = 0; k < 2 * capacities.length; k++) {
                    int cap = capacities[k % capacities.length];
                    boolean posted = k < capacities.length;
                    ByteBuffer into = MPI.newByteBuffer(cap);
                    Request r = posted ? world.iRecv(into, cap, MPI.BYTE, 0, k) : null;
                    world.send(new byte[1], 1, MPI.BYTE, 0, 100);
                    if (!posted) {
                        world.probe(0, 1000 + k); // the big one arrived before it (non-overtaking)
                        r = world.iRecv(into, cap, MPI.BYTE, 0, k);
                    }
                    if (cap < size) {
                        Request fr = r;
                        mpi.MPIException e = assertThrows(mpi.MPIException.class, fr::waitFor, "capacity " + cap);
                        assertEquals(MPI.ERR_TRUNCATE, e.getErrorClass(), "capacity " + cap);
                    } else {
                        assertEquals(size, r.waitStatus().getCount(MPI.BYTE));
                    }
                    for (int i = 0; i < cap; i++) assertEquals(at(size, i), into.get(i), "byte " + i + " of capacity " + cap);
                    int[] next = new int[1];
                    world.recv(next, 1, MPI.INT, 0, 1000 + k);
                    assertEquals(k, next[0], "the message after a truncated one is intact");
                }
            }
        });
    }

    /** {@code n} ranks exchange {@code size} bytes with everybody at once, non-blocking. */
    public static void allPairsExchange(Map<String, String> options, int n, int size) throws Exception {
        LocalJob.run(n, options, world -> {
            int me = world.getRank();
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
                for (int i = 0; i < size; i++) {
                    if (in[r].get(i) != (byte) (r * 7 + me + i)) fail("from " + r + " byte " + i);
                }
            }
        });
    }
}
