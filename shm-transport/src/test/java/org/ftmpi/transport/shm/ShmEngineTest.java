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

    /** Four ranks (more than this machine's cores) exchange with everybody at once, non-blocking. */
    @ParameterizedTest
    @ValueSource(ints = {100, 300_000})
    void allPairsExchangeWithFourRanks(int size) throws Exception {
        EngineTraffic.allPairsExchange(Map.of("transports", "shm"), 4, size);
    }
}
