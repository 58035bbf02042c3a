package org.ftmpi.transport.tcp;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import mpi.MPI;
import mpi.Request;
import mpi.Status;
import org.ftmpi.LocalJob;
import org.ftmpi.transport.EngineTraffic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * MPI point-to-point over TCP only ({@code transports=tcp}), ranks as threads of this JVM: the
 * paths the transport takes by size and memory kind — one coalesced write (small frames, heap
 * arrays), gathering writes from native memory, rendezvous DATA queued by reference while the
 * socket is full (the send completes only once it is written), and large DATA read straight
 * into the receive buffer, with the frame header and the payload split across reads.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class TcpEngineTest {
    private static final Map<String, String> TCP = Map.of("transports", "tcp");
    private static final int[] SIZES = {0, 1, 8, 8 * 1024, 8 * 1024 + 1, 40_000, 65_536, 65_537,
        200_000, 512 * 1024, (1 << 20) + 3, 3 << 20};

    @Test
    void pingPongOfEverySizeFromHeapAndDirectBuffers() throws Exception {
        EngineTraffic.pingPongOfEverySize(TCP, SIZES);
    }

    /**
     * A window of large non-blocking sends from direct buffers overruns the socket buffers, so
     * DATA waits in the backlog by reference; the receiver posts half of its receives late
     * (unexpected rendezvous) and reads every byte intact, in order per tag.
     */
    @Test
    void windowOfLargeSendsFromDirectBuffersArrivesIntact() throws Exception {
        int window = 24;
        CountDownLatch posted = new CountDownLatch(1);
        LocalJob.run(2, TCP, world -> {
            int me = world.getRank();
            ByteBuffer[] bufs = new ByteBuffer[window];
            Request[] reqs = new Request[window];
            for (int w = 0; w < window; w++) {
                int size = (1 << 20) + w * 4099;
                bufs[w] = MPI.newByteBuffer(size);
                if (me == 0) for (int i = 0; i < size; i++) bufs[w].put(i, (byte) (i * 7 + w));
            }
            if (me == 0) {
                for (int w = 0; w < window; w++) reqs[w] = world.iSend(bufs[w], bufs[w].capacity(), MPI.BYTE, 1, w % 3);
                posted.countDown();
                Request.waitAll(reqs);
                world.send(new int[] {1}, 1, MPI.INT, 1, 99);
            } else {
                for (int w = 0; w < window / 2; w++) reqs[w] = world.iRecv(bufs[w], bufs[w].capacity(), MPI.BYTE, 0, w % 3);
                // the rest arrive unexpected, with the sender's socket full
                assertTrue(posted.await(60, TimeUnit.SECONDS), "the sender never posted its window");
                for (int w = window / 2; w < window; w++) {
                    reqs[w] = world.iRecv(bufs[w], bufs[w].capacity(), MPI.BYTE, 0, w % 3);
                }
                Status[] st = Request.waitAllStatus(reqs);
                for (int w = 0; w < window; w++) {
                    assertEquals(bufs[w].capacity(), st[w].getCount(MPI.BYTE), "length of message " + w);
                    for (int i = 0; i < bufs[w].capacity(); i++) {
                        if (bufs[w].get(i) != (byte) (i * 7 + w)) fail("message " + w + " byte " + i);
                    }
                }
                world.recv(new int[1], 1, MPI.INT, 0, 99);
            }
        });
    }

    /** Many eager sends from heap arrays while the receiver is not reading: the copied backlog. */
    @Test
    void eagerSendsBeyondTheSocketBufferAreKeptAndDelivered() throws Exception {
        int count = 400;
        int size = 60_000;
        CountDownLatch sent = new CountDownLatch(1);
        LocalJob.run(2, TCP, world -> {
            if (world.getRank() == 0) {
                byte[] b = new byte[size];
                for (int k = 0; k < count; k++) {
                    for (int i = 0; i < size; i += 1000) b[i] = (byte) (k + i);
                    b[size - 1] = (byte) k;
                    world.send(b, size, MPI.BYTE, 1, 4); // eager: returns while queued
                }
                sent.countDown();
                world.recv(new int[1], 1, MPI.INT, 1, 5);
            } else {
                assertTrue(sent.await(60, TimeUnit.SECONDS), "the sender never finished its eager sends");
                byte[] b = new byte[size];
                for (int k = 0; k < count; k++) {
                    world.recv(b, size, MPI.BYTE, 0, 4);
                    for (int i = 0; i < size; i += 1000) assertEquals((byte) (k + i), b[i], "message " + k + " byte " + i);
                    assertEquals((byte) k, b[size - 1], "message " + k + " last byte");
                }
                world.send(new int[] {1}, 1, MPI.INT, 0, 5);
            }
        });
    }

    /** Four ranks exchange small and large messages with everybody at once over TCP. */
    /** The RTS carries the first 64 KiB inline: truncation before, inside and after that part. */
    @Test
    void rendezvousIntoShortBuffersTruncatesCleanly() throws Exception {
        EngineTraffic.rendezvousIntoShortBuffers(Map.of("transports", "tcp"), 200_000);
    }

    @Test
    void allPairsExchangeWithFourRanks() throws Exception {
        EngineTraffic.allPairsExchange(TCP, 4, 100);
        EngineTraffic.allPairsExchange(TCP, 4, 700_000);
    }
}
