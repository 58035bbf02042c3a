package org.ftmpi.api;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.DoubleBuffer;
import java.nio.IntBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import mpi.*;
import org.ftmpi.LocalJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Point-to-point semantics beyond {@link PointToPointTest}: buffer forms, statuses, zero-size
 * messages, probing and the test/wait families, over the real transports.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class P2pSemanticsTest {
    private static final int GO = 999;

    /** A rendezvous-sized exchange in both directions at once, of messages spanning several fragments. */
    @Test
    void sendRecvReplaceWithRendezvousSizes() throws Exception {
        LocalJob.run(2, world -> {
            int rank = world.getRank();
            int peer = 1 - rank;
            for (int n : new int[] {16_385, 300_000, 1_500_000 / 8}) { // 128 KiB+, 2.4 MB, 1.5 MB
                double[] buf = new double[n];
                for (int i = 0; i < n; i++) buf[i] = rank * 1e7 + i;
                Status s = world.sendRecvReplace(buf, n, MPI.DOUBLE, peer, 1, peer, 1);
                assertEquals(peer, s.getSource());
                assertEquals(n, s.getCount(MPI.DOUBLE));
                for (int i = 0; i < n; i += 997) assertEquals(peer * 1e7 + i, buf[i], "element " + i);
                assertEquals(peer * 1e7 + n - 1, buf[n - 1]);
            }
            // With oneself (self transport), and with wildcards on the receive side.
            long[] mine = new long[100_000];
            Arrays.fill(mine, 7 + rank);
            Status s = world.sendRecvReplace(mine, mine.length, MPI.LONG, rank, 3, MPI.ANY_SOURCE, MPI.ANY_TAG);
            assertEquals(rank, s.getSource());
            assertEquals(3, s.getTag());
            assertEquals(7 + rank, mine[99_999]);
            // The wildcard receive above may legitimately match the peer's next message, so the
            // peer must not send it before this rank's self exchange is done.
            world.barrier();
            boolean[] z = {rank == 0, rank == 1, true};
            world.sendRecvReplace(z, 3, MPI.BOOLEAN, peer, 4, peer, 4);
            assertArrayEquals(new boolean[] {peer == 0, peer == 1, true}, z);
        });
    }

    @Test
    void zeroCountMessagesWithNullBuffers() throws Exception {
        LocalJob.run(2, world -> {
            int rank = world.getRank();
            if (rank == 0) {
                world.send(null, 0, MPI.INT, 1, 1);
                world.sSend(null, 0, MPI.INT, 1, 2);
                world.iSend(null, 0, MPI.DOUBLE, 1, 3).waitFor();
                world.send(null, 0, MPI.BYTE, 1, 4);
                world.send(new int[] {5}, 1, MPI.INT, 1, 5);
                world.send(null, 0, MPI.INT, 0, 6); // to oneself
                assertEquals(0, world.recv(null, 0, MPI.INT, 0, 6).getCount(MPI.INT));
            } else {
                Status s = world.recv(null, 0, MPI.INT, 0, 1);
                assertEquals(0, s.getCount(MPI.INT));
                assertEquals(0, s.getSource());
                assertEquals(1, s.getTag());
                s = world.recv(null, 0, MPI.INT, MPI.ANY_SOURCE, 2);
                assertEquals(0, s.getSource());
                s = world.iRecv(null, 0, MPI.DOUBLE, 0, MPI.ANY_TAG).waitStatus();
                assertEquals(3, s.getTag());
                assertEquals(0, s.getElements(MPI.DOUBLE));
                // A zero-size message into a non-empty buffer leaves it alone.
                byte[] b = {9, 9};
                s = world.recv(b, 2, MPI.BYTE, 0, 4);
                assertEquals(0, s.getCount(MPI.BYTE));
                assertArrayEquals(new byte[] {9, 9}, b);
                // A non-empty message into a zero-count receive is truncated.
                world.setErrhandler(MPI.ERRORS_RETURN);
                MPIException e = assertThrows(MPIException.class, () -> world.recv(null, 0, MPI.INT, 0, 5));
                assertEquals(MPI.ERR_TRUNCATE, e.getErrorClass());
            }
        });
    }

    /**
     * Zero-byte messages that arrive before their receives (as a barrier's rounds do) share one
     * empty payload in the engine: interleaved with non-empty ones on the same tags, each is
     * still delivered in order with its own tag and count, leaves its receive buffer alone, and
     * no non-empty message's bytes end up anywhere else.
     */
    @Test
    void zeroByteMessagesThatArriveBeforeTheirReceivesStayEmpty() throws Exception {
        LocalJob.run(2, world -> {
            int n = 200;
            if (world.getRank() == 0) {
                for (int i = 0; i < n; i++) {
                    if (i % 3 == 0) world.send(new int[] {i}, 1, MPI.INT, 1, i % 7);
                    else world.send(null, 0, MPI.INT, 1, i % 7);
                }
                world.barrier(); // its rounds follow the messages: rank 1 has queued them all as unexpected
            } else {
                world.barrier();
                Status p = world.probe(0, 1); // i = 1: a zero-byte one
                assertEquals(0, p.getCount(MPI.INT));
                for (int i = 0; i < n; i++) {
                    int[] into = {-1, -1};
                    Status s = world.recv(into, 2, MPI.INT, 0, i % 7);
                    assertEquals(i % 7, s.getTag(), "message " + i);
                    if (i % 3 == 0) {
                        assertEquals(1, s.getCount(MPI.INT), "message " + i);
                        assertArrayEquals(new int[] {i, -1}, into, "message " + i);
                    } else {
                        assertEquals(0, s.getCount(MPI.INT), "message " + i);
                        assertArrayEquals(new int[] {-1, -1}, into, "message " + i);
                    }
                }
            }
        });
    }

    @Test
    void statusCountsAndElements() throws Exception {
        LocalJob.run(2, world -> {
            if (world.getRank() == 0) {
                world.send(new byte[10], 10, MPI.BYTE, 1, 1);
                world.send(new double[] {1, 2, 3}, 3, MPI.DOUBLE, 1, 2);
                world.send(new int[40_000], 40_000, MPI.INT, 1, 3);
            } else {
                Status s = world.recv(new byte[16], 16, MPI.BYTE, 0, 1);
                assertEquals(10, s.getCount(MPI.BYTE));
                assertEquals(MPI.UNDEFINED, s.getCount(MPI.INT), "10 bytes are not whole ints");
                assertEquals(MPI.UNDEFINED, s.getElements(MPI.INT));
                assertEquals(5, s.getCount(MPI.SHORT));
                // 3 doubles into a DOUBLE_COMPLEX receive: 1.5 complex numbers, 3 basic elements.
                double[] c = new double[4];
                s = world.recv(c, 2, MPI.DOUBLE_COMPLEX, 0, 2);
                assertEquals(MPI.UNDEFINED, s.getCount(MPI.DOUBLE_COMPLEX));
                assertEquals(3, s.getElements(MPI.DOUBLE_COMPLEX));
                assertEquals(3, s.getCount(MPI.DOUBLE));
                assertArrayEquals(new double[] {1, 2, 3, 0}, c);
                s = world.recv(new long[20_000], 20_000, MPI.LONG, 0, 3); // rendezvous
                assertEquals(20_000, s.getCount(MPI.LONG));
                assertEquals(40_000, s.getElements(MPI.INT));
                assertFalse(s.isCancelled());
                Status last = s;
                assertThrows(MPIException.class, () -> last.getCount(null));
            }
        });
    }

    /** Heap ByteBuffers and MPI.slice views work for blocking calls; the slice offset is honoured. */
    @Test
    void heapBuffersAndSlicesForBlockingCalls() throws Exception {
        LocalJob.run(2, world -> {
            int n = 30_000; // ints: 120 KB, rendezvous
            if (world.getRank() == 0) {
                int[] src = new int[n + 11];
                for (int i = 0; i < src.length; i++) src[i] = i;
                world.send(MPI.slice(src, 11), n, MPI.INT, 1, 1);
                world.send(MPI.slice(src, 3), 4, MPI.INT, 1, 2);
                ByteBuffer heap = ByteBuffer.allocate(100);
                for (int i = 0; i < 100; i++) heap.put(i, (byte) (i + 1));
                heap.position(50); // the position is ignored: Open MPI's bindings use the array offset
                world.send(heap, 20, MPI.BYTE, 1, 3);
                double[] d = {0.5, 1.5, 2.5, 3.5};
                world.send(MPI.slice(d, 2), 2, MPI.DOUBLE, 1, 4);
            } else {
                int[] dst = new int[n + 20];
                Arrays.fill(dst, -1);
                Status s = world.recv(MPI.slice(dst, 7), n, MPI.INT, 0, 1);
                assertEquals(n, s.getCount(MPI.INT));
                for (int i = 0; i < 7; i++) assertEquals(-1, dst[i], "before the slice");
                for (int i = 0; i < n; i++) {
                    if (dst[7 + i] != 11 + i) fail("element " + i + ": " + dst[7 + i]);
                }
                for (int i = n + 7; i < dst.length; i++) assertEquals(-1, dst[i], "after the slice");
                int[] small = new int[10];
                world.recv(MPI.slice(small, 5), 4, MPI.INT, 0, 2);
                assertArrayEquals(new int[] {0, 0, 0, 0, 0, 3, 4, 5, 6, 0}, small);
                byte[] arr = new byte[40];
                ByteBuffer view = ByteBuffer.wrap(arr, 10, 30).slice(); // array offset 10
                world.recv(view, 20, MPI.BYTE, 0, 3);
                for (int i = 0; i < 10; i++) assertEquals(0, arr[i]);
                for (int i = 0; i < 20; i++) assertEquals(i + 1, arr[10 + i]);
                double[] d = new double[3];
                DoubleBuffer dv = MPI.slice(d, 1);
                world.recv(dv, 2, MPI.DOUBLE, 0, 4);
                assertArrayEquals(new double[] {0, 2.5, 3.5}, d);
            }
        });
    }

    @Test
    void iProbeReturnsNullThenTheStatus() throws Exception {
        LocalJob.run(2, world -> {
            if (world.getRank() == 0) {
                world.recv(new int[1], 1, MPI.INT, 1, GO);
                world.send(new int[] {1, 2, 3}, 3, MPI.INT, 1, 5);
                world.send(new byte[200_000], 200_000, MPI.BYTE, 1, 6); // probed as an RTS
            } else {
                assertNull(world.iProbe(0, 5), "nothing sent yet");
                assertNull(world.iProbe(MPI.ANY_SOURCE, MPI.ANY_TAG), "nothing sent yet");
                world.send(new int[1], 1, MPI.INT, 0, GO);
                Status s;
                while ((s = world.iProbe(0, 5)) == null) {
                    Thread.onSpinWait();
                }
                assertEquals(0, s.getSource());
                assertEquals(5, s.getTag());
                assertEquals(3, s.getCount(MPI.INT));
                assertNotNull(world.iProbe(0, 5), "probing does not consume the message");
                assertNull(world.iProbe(0, 4), "other tags do not match");
                while ((s = world.iProbe(MPI.ANY_SOURCE, 6)) == null) {
                    Thread.onSpinWait();
                }
                assertEquals(200_000, s.getCount(MPI.BYTE));
                int[] v = new int[3];
                world.recv(v, 3, MPI.INT, 0, 5);
                assertArrayEquals(new int[] {1, 2, 3}, v);
                assertNull(world.iProbe(0, 5), "received messages are gone");
                world.recv(new byte[200_000], 200_000, MPI.BYTE, 0, 6);
                assertNull(world.iProbe(MPI.ANY_SOURCE, MPI.ANY_TAG));
            }
        });
    }

    @Test
    void testAllTestAnyTestSomeAndWaitAnyIndex() throws Exception {
        LocalJob.run(2, world -> {
            if (world.getRank() == 0) {
                world.recv(new int[1], 1, MPI.INT, 1, GO);
                world.send(new int[] {2}, 1, MPI.INT, 1, 2);
                world.recv(new int[1], 1, MPI.INT, 1, GO);
                world.send(new int[] {3}, 1, MPI.INT, 1, 3);
                world.send(new int[70_000], 70_000, MPI.INT, 1, 0); // rendezvous
                world.recv(new int[1], 1, MPI.INT, 1, GO);
                world.send(new int[] {1}, 1, MPI.INT, 1, 1);
            } else {
                IntBuffer[] bufs = new IntBuffer[4];
                Request[] reqs = new Request[4];
                for (int i = 0; i < 4; i++) {
                    bufs[i] = MPI.newIntBuffer(i == 0 ? 70_000 : 1);
                    reqs[i] = world.iRecv(bufs[i], i == 0 ? 70_000 : 1, MPI.INT, 0, i);
                }
                assertEquals(MPI.UNDEFINED, Request.testAny(reqs), "nothing can have completed");
                assertNull(Request.testAnyStatus(reqs));
                assertEquals(0, Request.testSome(reqs).length);
                assertFalse(Request.testAll(reqs));
                assertNull(Request.testAllStatus(reqs));
                for (Request r : reqs) assertFalse(r.isNull(), "failed tests leave requests active");

                world.send(new int[1], 1, MPI.INT, 0, GO);
                Status s = Request.waitAnyStatus(reqs);
                assertEquals(2, s.getIndex(), "only request 2 can complete");
                assertEquals(2, s.getTag());
                assertEquals(0, s.getSource());
                assertEquals(2, bufs[2].get(0));
                assertTrue(reqs[2].isNull());

                world.send(new int[1], 1, MPI.INT, 0, GO);
                int got = 0;
                boolean[] done = new boolean[4];
                done[2] = true;
                while (got < 2) {
                    Status[] some = Request.testSomeStatus(reqs);
                    for (Status x : some) {
                        assertTrue(x.getIndex() == 0 || x.getIndex() == 3, "index " + x.getIndex());
                        assertEquals(x.getIndex(), x.getTag());
                        assertFalse(done[x.getIndex()], "completed twice");
                        done[x.getIndex()] = true;
                        got++;
                    }
                }
                assertEquals(3, bufs[3].get(0));
                assertFalse(Request.testAll(reqs), "request 1 is still pending");
                assertFalse(reqs[1].isNull());

                world.send(new int[1], 1, MPI.INT, 0, GO);
                Status[] all;
                while ((all = Request.testAllStatus(reqs)) == null) {
                    Thread.onSpinWait();
                }
                assertEquals(1, all[1].getTag());
                assertNull(all[0], "already-completed requests have no status");
                assertEquals(1, bufs[1].get(0));
                for (Request r : reqs) assertTrue(r.isNull());
                assertTrue(Request.testAll(reqs), "all-null arrays test complete");
                assertEquals(MPI.UNDEFINED, Request.testAny(reqs));
                assertNull(Request.testSome(reqs), "no active request");
                assertEquals(MPI.UNDEFINED, Request.waitAnyStatus(reqs).getIndex());
            }
        });
    }

    /** Messages of one source with different tags may be received in any order (tags select). */
    @Test
    void tagsSelectAcrossTheQueue() throws Exception {
        LocalJob.run(2, world -> {
            if (world.getRank() == 0) {
                // Non-blocking: a blocking rendezvous send would wait for a receive posted later.
                Request[] reqs = new Request[20];
                for (int t = 0; t < 20; t++) {
                    int len = t % 4 == 0 ? 50_000 : 1;
                    IntBuffer m = MPI.newIntBuffer(len);
                    m.put(0, t);
                    reqs[t] = world.iSend(m, len, MPI.INT, 1, t);
                }
                Request.waitAll(reqs);
            } else {
                int[] m = new int[50_000];
                Random rnd = new Random(4);
                int[] order = new int[20];
                for (int i = 0; i < 20; i++) order[i] = i;
                for (int i = 19; i > 0; i--) {
                    int j = rnd.nextInt(i + 1);
                    int x = order[i];
                    order[i] = order[j];
                    order[j] = x;
                }
                for (int t : order) {
                    Status s = world.recv(m, m.length, MPI.INT, 0, t);
                    assertEquals(t, m[0]);
                    assertEquals(t % 4 == 0 ? 50_000 : 1, s.getCount(MPI.INT));
                }
            }
        });
    }
}
