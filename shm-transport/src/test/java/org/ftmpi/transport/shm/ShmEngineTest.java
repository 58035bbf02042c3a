package org.ftmpi.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.Map;
import mpi.MPI;
import org.ftmpi.LocalJob;
import java.util.concurrent.TimeUnit;
import org.ftmpi.transport.EngineTraffic;
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

    @ParameterizedTest
    @ValueSource(strings = {"auto", "off", "jdk-only"})
    void pingPongOfEverySizeFromHeapAndDirectBuffers(String mode) throws Exception {
        Map<String, String> options = mode.equals("jdk-only")
                ? Map.of("transports", "shm", "shm-unsafe", "false")
                : Map.of("transports", "shm", "shm-cma", mode);
        EngineTraffic.pingPongOfEverySize(options, SIZES);
    }

    /** With single copy off, the RTS carries the first 32 KiB inline; with it, none. */
    @ParameterizedTest
    @ValueSource(strings = {"auto", "off"})
    void rendezvousIntoShortBuffersTruncatesCleanly(String cma) throws Exception {
        EngineTraffic.rendezvousIntoShortBuffers(Map.of("transports", "shm", "shm-cma", cma), 200_000);
    }

    /**
     * A direct-buffer message larger than one pinned piece ({@link ShmConfig#MAX_PINNED_BYTES},
     * so two process_vm_readv reads) into a direct buffer, and the same message into a heap
     * array (each piece read through the bounce buffer, 128 KiB at a time).
     */
    @org.junit.jupiter.api.Test
    void aMessageOfMoreThanOnePinnedPieceIntoDirectAndHeapBuffers() throws Exception {
        int size = ShmConfig.MAX_PINNED_BYTES + ShmConfig.MAX_PINNED_BYTES / 3 + 7;
        LocalJob.run(2, Map.of("transports", "shm"), world -> {
            ByteBuffer direct = MPI.newByteBuffer(size);
            if (world.getRank() == 0) {
                for (int i = 0; i < size; i++) direct.put(i, (byte) (i * 31 + i / 4099));
                world.send(direct, size, MPI.BYTE, 1, 1);
                world.send(direct, size, MPI.BYTE, 1, 2);
            } else {
                byte[] heap = new byte[size];
                assertEquals(size, world.recv(direct, size, MPI.BYTE, 0, 1).getCount(MPI.BYTE));
                assertEquals(size, world.recv(heap, size, MPI.BYTE, 0, 2).getCount(MPI.BYTE));
                for (int i = 0; i < size; i++) {
                    byte want = (byte) (i * 31 + i / 4099);
                    if (direct.get(i) != want) assertEquals(want, direct.get(i), "direct byte " + i);
                    if (heap[i] != want) assertEquals(want, heap[i], "heap byte " + i);
                }
            }
        });
    }

    /**
     * Single-copy messages into a direct buffer at an offset ({@code MPI.slice}): the receiver
     * names the target by address (base + offset + fragment offset), so the bytes before and
     * after the message stay untouched, for a message of one pinned piece and of two.
     */
    @org.junit.jupiter.api.Test
    void aPinnedMessageIntoADirectBufferAtAnOffsetLandsThereAndNowhereElse() throws Exception {
        int[] sizes = {100_003, ShmConfig.MAX_PINNED_BYTES + 12_345};
        int offset = 4_099, guard = 777;
        LocalJob.run(2, Map.of("transports", "shm"), world -> {
            for (int size : sizes) {
                if (world.getRank() == 0) {
                    ByteBuffer data = MPI.newByteBuffer(size);
                    for (int i = 0; i < size; i++) data.put(i, (byte) (i * 7 + i / 1021));
                    world.send(data, size, MPI.BYTE, 1, 5);
                } else {
                    ByteBuffer whole = MPI.newByteBuffer(offset + size + guard);
                    for (int i = 0; i < whole.capacity(); i++) whole.put(i, (byte) 0x5A);
                    assertEquals(size, world.recv(MPI.slice(whole, offset), size, MPI.BYTE, 0, 5).getCount(MPI.BYTE));
                    for (int i = 0; i < whole.capacity(); i++) {
                        int at = i - offset;
                        byte want = at >= 0 && at < size ? (byte) (at * 7 + at / 1021) : 0x5A;
                        if (whole.get(i) != want) assertEquals(want, whole.get(i), "size " + size + ", byte " + i);
                    }
                }
            }
        });
    }

    /**
     * osu_bw's pattern with mixed sizes: a window of 64 single-copy messages (64 KiB to ~1.3 MiB,
     * so the receiver finds many PINNED records in a row and reads them in batches), every fifth
     * into a receive buffer that is too short (ERR_TRUNCATE, the bytes that fit arrive), all
     * from one sender buffer into separate receive buffers, twice.
     */
    @org.junit.jupiter.api.Test
    void aWindowOfMixedSizesSomeTruncatedArrivesIntact() throws Exception {
        int window = 64;
        int[] sizes = new int[window];
        for (int w = 0; w < window; w++) sizes[w] = 65_536 + (w % 7) * 200_003 + w;
        int max = java.util.Arrays.stream(sizes).max().orElseThrow();
        LocalJob.run(2, Map.of("transports", "shm"), world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            mpi.Request[] reqs = new mpi.Request[window];
            if (world.getRank() == 0) {
                ByteBuffer data = MPI.newByteBuffer(max);
                for (int i = 0; i < max; i++) data.put(i, (byte) (i * 7 + i / 999));
                for (int round = 0; round < 2; round++) {
                    for (int w = 0; w < window; w++) reqs[w] = world.iSend(data, sizes[w], MPI.BYTE, 1, w);
                    mpi.Request.waitAll(reqs);
                }
                return;
            }
            ByteBuffer[] into = new ByteBuffer[window];
            for (int w = 0; w < window; w++) into[w] = MPI.newByteBuffer(w % 5 == 4 ? sizes[w] - 4097 : sizes[w]);
            for (int round = 0; round < 2; round++) {
                for (int w = 0; w < window; w++) {
                    into[w].clear();
                    for (int i = 0; i < into[w].capacity(); i += 4096) into[w].put(i, (byte) 0);
                    reqs[w] = world.iRecv(into[w], into[w].capacity(), MPI.BYTE, 0, w);
                }
                for (int w = 0; w < window; w++) {
                    int cap = into[w].capacity();
                    if (cap < sizes[w]) {
                        mpi.Request r = reqs[w];
                        mpi.MPIException e = org.junit.jupiter.api.Assertions.assertThrows(mpi.MPIException.class,
                                r::waitFor, "message " + w);
                        assertEquals(MPI.ERR_TRUNCATE, e.getErrorClass(), "message " + w);
                    } else {
                        assertEquals(sizes[w], reqs[w].waitStatus().getCount(MPI.BYTE), "message " + w);
                    }
                    for (int i = 0; i < cap; i++) {
                        byte want = (byte) (i * 7 + i / 999);
                        if (into[w].get(i) != want) assertEquals(want, into[w].get(i), "message " + w + " byte " + i);
                    }
                }
            }
        });
    }

    /** Byte {@code i} of message {@code m} in the full-ring tests. */
    private static byte fill(int m, int i) {
        return (byte) (m * 13 + i * 7 + i / 251);
    }

    /** Message {@code m}'s size in {@link #moreSendsThanTheRingHoldsArriveInOrderAndIntact}: mostly eager-limit messages. */
    private static int sizeOf(int m) {
        return switch (m % 5) {
            case 0, 1, 2 -> 32 * 1024; // the eager limit: 7 fill a 256 KiB ring
            case 3 -> 8;
            default -> 100_000;        // rendezvous (an RTS first)
        };
    }

    /**
     * A window of non-blocking sends several times larger than the ring (a 256 KiB ring holds
     * seven 32 KiB records), of every kind (eager, synchronous, rendezvous) and from direct
     * buffers and heap arrays, followed by a barrier whose messages travel behind them: the
     * sends the ring has no room for wait, in order, in the engine (their requests complete once
     * they are written, from the caller's memory); every message arrives intact and in the order
     * sent, and the receiver, posting its receives only after the barrier, never waits for ever.
     */
    @ParameterizedTest
    @ValueSource(strings = {"262144", "1048576"})
    void moreSendsThanTheRingHoldsArriveInOrderAndIntact(String ring) throws Exception {
        int n = 200;
        LocalJob.run(2, Map.of("transports", "shm", "shm-ring-bytes", ring), world -> {
            if (world.getRank() == 0) {
                mpi.Request[] rs = new mpi.Request[n];
                for (int m = 0; m < n; m++) {
                    int size = sizeOf(m);
                    if (m % 2 == 0) {
                        ByteBuffer b = MPI.newByteBuffer(size);
                        for (int i = 0; i < size; i++) b.put(i, fill(m, i));
                        rs[m] = m % 10 == 6 ? world.iSsend(b, size, MPI.BYTE, 1, m % 7)
                                : world.iSend(b, size, MPI.BYTE, 1, m % 7);
                    } else {
                        byte[] a = new byte[size];
                        for (int i = 0; i < size; i++) a[i] = fill(m, i);
                        ByteBuffer b = MPI.newByteBuffer(size).put(a).clear();
                        rs[m] = world.iSend(b, size, MPI.BYTE, 1, m % 7);
                    }
                }
                world.barrier();
                mpi.Request.waitAll(rs);
            } else {
                world.barrier();
                byte[] in = new byte[100_000];
                for (int m = 0; m < n; m++) {
                    mpi.Status st = world.recv(in, in.length, MPI.BYTE, 0, MPI.ANY_TAG);
                    assertEquals(m % 7, st.getTag(), "message " + m + " arrived in order");
                    int size = sizeOf(m);
                    assertEquals(size, st.getCount(MPI.BYTE), "message " + m + "'s size");
                    for (int i = 0; i < size; i++) {
                        if (in[i] != fill(m, i)) assertEquals(fill(m, i), in[i], "message " + m + " byte " + i);
                    }
                }
            }
        });
    }

    /**
     * Blocking sends head to head, each rank sending many more eager messages than the ring
     * holds before it receives any (an "unsafe" program that real MPIs carry for eager sizes):
     * a send that waits for room keeps the engine polling, so each rank takes in the other's
     * messages meanwhile and both finish.
     */
    @ParameterizedTest
    @ValueSource(ints = {8, 32 * 1024})
    void headToHeadBlockingSendsBeyondTheRingComplete(int size) throws Exception {
        int n = size == 8 ? 40_000 : 100;
        LocalJob.run(2, Map.of("transports", "shm", "shm-ring-bytes", "262144"), world -> {
            int peer = 1 - world.getRank();
            byte[] out = new byte[size];
            for (int m = 0; m < n; m++) {
                out[0] = (byte) m;
                out[size - 1] = (byte) ~m;
                world.send(out, size, MPI.BYTE, peer, 3);
            }
            byte[] in = new byte[size];
            for (int m = 0; m < n; m++) {
                world.recv(in, size, MPI.BYTE, peer, 3);
                if (in[0] != (byte) m || in[size - 1] != (byte) ~m) {
                    assertEquals((byte) m, in[0], "message " + m + " from rank " + peer);
                    assertEquals((byte) ~m, in[size - 1], "message " + m + "'s last byte from rank " + peer);
                }
            }
        });
    }

    /** Four ranks (more than this machine's cores) exchange with everybody at once, non-blocking. */
    @ParameterizedTest
    @ValueSource(ints = {100, 300_000})
    void allPairsExchangeWithFourRanks(int size) throws Exception {
        EngineTraffic.allPairsExchange(Map.of("transports", "shm"), 4, size);
    }
}
