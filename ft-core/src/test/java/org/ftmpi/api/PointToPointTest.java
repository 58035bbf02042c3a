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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Point-to-point semantics, many ranks in one JVM over the real TCP and self transports. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PointToPointTest {

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5})
    void ringPassesTokenAround(int n) throws Exception {
        LocalJob.run(n, world -> {
            int rank = world.getRank();
            int size = world.getSize();
            int[] token = new int[1];
            if (rank == 0) {
                token[0] = 1;
                world.send(token, 1, MPI.INT, (rank + 1) % size, 7);
                Status s = world.recv(token, 1, MPI.INT, (rank - 1 + size) % size, 7);
                assertEquals(size, token[0]);
                assertEquals((rank - 1 + size) % size, s.getSource());
                assertEquals(7, s.getTag());
                assertEquals(1, s.getCount(MPI.INT));
            } else {
                world.recv(token, 1, MPI.INT, rank - 1, 7);
                token[0]++;
                world.send(token, 1, MPI.INT, (rank + 1) % size, 7);
            }
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 8, 1000, 65536, 65537, 300_000, 2_000_000})
    void messagesOfEverySizeArriveIntact(int bytes) throws Exception {
        LocalJob.run(2, world -> {
            byte[] data = new byte[bytes];
            if (world.getRank() == 0) {
                new Random(bytes).nextBytes(data);
                world.send(data, bytes, MPI.BYTE, 1, 3);
                ByteBuffer d = MPI.newByteBuffer(bytes);
                d.put(data);
                world.iSend(d, bytes, MPI.BYTE, 1, 4).waitFor();
            } else {
                byte[] expect = new byte[bytes];
                new Random(bytes).nextBytes(expect);
                Status s = world.recv(data, bytes, MPI.BYTE, 0, 3);
                assertArrayEquals(expect, data);
                assertEquals(bytes, s.getCount(MPI.BYTE));
                ByteBuffer d = MPI.newByteBuffer(bytes);
                world.iRecv(d, bytes, MPI.BYTE, 0, 4).waitFor();
                byte[] got = new byte[bytes];
                d.get(0, got);
                assertArrayEquals(expect, got);
            }
        });
    }

    /** The same buffers, reused with changing counts and types, as a solver loop does (regions are cached). */
    @Test
    void reusedBuffersCarryEachCallsCountAndKeepTheirTypeChecks() throws Exception {
        LocalJob.run(2, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int peer = 1 - world.getRank();
            int[] a = new int[64];
            ByteBuffer d = MPI.newByteBuffer(256);
            for (int n = 1; n <= 64; n *= 2) {
                if (world.getRank() == 0) {
                    Arrays.fill(a, n);
                    world.send(a, n, MPI.INT, peer, n);
                    for (int i = 0; i < 4 * n; i++) d.put(i, (byte) (n + i));
                    world.send(d, 4 * n, MPI.BYTE, peer, n);
                } else {
                    Arrays.fill(a, -1);
                    Status s = world.recv(a, 64, MPI.INT, peer, n);
                    assertEquals(n, s.getCount(MPI.INT));
                    for (int i = 0; i < 64; i++) assertEquals(i < n ? n : -1, a[i], "element " + i);
                    Status t = world.recv(d, 4 * n, MPI.BYTE, peer, n);
                    assertEquals(4 * n, t.getCount(MPI.BYTE));
                    for (int i = 0; i < 4 * n; i++) assertEquals((byte) (n + i), d.get(i));
                }
            }
            MPIException e = assertThrows(MPIException.class, () -> world.send(a, 1, MPI.FLOAT, peer, 1));
            assertEquals(MPI.ERR_TYPE, e.getErrorClass());
            MPIException big = assertThrows(MPIException.class, () -> world.send(a, 65, MPI.INT, peer, 1));
            assertEquals(MPI.ERR_BUFFER, big.getErrorClass());
        });
    }

    @Test
    void everyPrimitiveArrayTypeRoundTrips() throws Exception {
        LocalJob.run(2, world -> {
            int peer = 1 - world.getRank();
            double[] d = {1.5, -2.25, Double.NaN};
            long[] l = {Long.MIN_VALUE, 0, Long.MAX_VALUE};
            char[] c = {'a', 'ß', '\u4e2d'};
            boolean[] z = {true, false, true};
            short[] sh = {-1, 2, 3};
            float[] f = {1f, 2f, -0f};
            if (world.getRank() == 0) {
                world.send(d, 3, MPI.DOUBLE, peer, 1);
                world.send(l, 3, MPI.LONG, peer, 2);
                world.send(c, 3, MPI.CHAR, peer, 3);
                world.send(z, 3, MPI.BOOLEAN, peer, 4);
                world.send(sh, 3, MPI.SHORT, peer, 5);
                world.send(f, 3, MPI.FLOAT, peer, 6);
            } else {
                double[] d2 = new double[3];
                long[] l2 = new long[3];
                char[] c2 = new char[3];
                boolean[] z2 = new boolean[3];
                short[] sh2 = new short[3];
                float[] f2 = new float[3];
                world.recv(d2, 3, MPI.DOUBLE, peer, 1);
                world.recv(l2, 3, MPI.LONG, peer, 2);
                world.recv(c2, 3, MPI.CHAR, peer, 3);
                world.recv(z2, 3, MPI.BOOLEAN, peer, 4);
                world.recv(sh2, 3, MPI.SHORT, peer, 5);
                world.recv(f2, 3, MPI.FLOAT, peer, 6);
                assertArrayEquals(d, d2);
                assertArrayEquals(l, l2);
                assertArrayEquals(c, c2);
                assertArrayEquals(z, z2);
                assertArrayEquals(sh, sh2);
                assertArrayEquals(f, f2);
            }
        });
    }

    @Test
    void nonOvertakingPerSourceAndTag() throws Exception {
        LocalJob.run(2, world -> {
            int n = 200;
            if (world.getRank() == 0) {
                for (int i = 0; i < n; i++) {
                    int size = (i % 3 == 0) ? 100_000 : 4; // mix eager and rendezvous
                    int[] msg = new int[size];
                    msg[0] = i;
                    world.send(msg, size, MPI.INT, 1, 9);
                }
            } else {
                int[] msg = new int[100_000];
                for (int i = 0; i < n; i++) {
                    world.recv(msg, msg.length, MPI.INT, 0, 9);
                    assertEquals(i, msg[0], "message order");
                }
            }
        });
    }

    @Test
    void anySourceAndAnyTagMatchEverySender() throws Exception {
        LocalJob.run(4, world -> {
            int rank = world.getRank();
            if (rank == 0) {
                boolean[] seen = new boolean[4];
                int[] v = new int[1];
                for (int i = 0; i < 3 * 10; i++) {
                    Status s = world.recv(v, 1, MPI.INT, MPI.ANY_SOURCE, MPI.ANY_TAG);
                    assertEquals(s.getSource() * 1000 + s.getTag(), v[0]);
                    seen[s.getSource()] = true;
                }
                assertTrue(seen[1] && seen[2] && seen[3]);
            } else {
                for (int t = 0; t < 10; t++) world.send(new int[] {rank * 1000 + t}, 1, MPI.INT, 0, t);
            }
        });
    }

    /** Job option idle: yield (the oversubscribed policy) still exchanges; a bad value stops the start. */
    @Test
    void idleJobOptionChoosesTheWaitPolicy() throws Exception {
        LocalJob.run(2, java.util.Map.of("idle", "yield"), world -> {
            int[] v = {world.getRank()};
            world.sendRecvReplace(v, 1, MPI.INT, 1 - world.getRank(), 0, 1 - world.getRank(), 0);
            assertEquals(1 - world.getRank(), v[0]);
        });
        Exception e = assertThrows(Exception.class, () -> LocalJob.run(2, java.util.Map.of("idle", "sometimes"), world -> { }));
        assertTrue(String.valueOf(e.getMessage()).contains("idle=sometimes"), e.toString());
    }

    @Test
    void truncationIsReportedAsErrTruncate() throws Exception {
        LocalJob.run(2, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            if (world.getRank() == 0) {
                world.send(new int[10], 10, MPI.INT, 1, 0);
                world.send(new int[100_000], 100_000, MPI.INT, 1, 1);
                world.send(new int[] {42}, 1, MPI.INT, 1, 2);
            } else {
                MPIException e = assertThrows(MPIException.class, () -> world.recv(new int[5], 5, MPI.INT, 0, 0));
                assertEquals(MPI.ERR_TRUNCATE, e.getErrorClass());
                e = assertThrows(MPIException.class, () -> world.recv(new int[5], 5, MPI.INT, 0, 1));
                assertEquals(MPI.ERR_TRUNCATE, e.getErrorClass());
                int[] v = new int[1];
                world.recv(v, 1, MPI.INT, 0, 2);
                assertEquals(42, v[0], "the next message is intact");
            }
        });
    }

    @Test
    void synchronousSendCompletesOnlyAfterTheReceiveStarted() throws Exception {
        LocalJob.run(2, world -> {
            if (world.getRank() == 0) {
                IntBuffer b = MPI.newIntBuffer(1);
                Request r = world.isSend(b, 1, MPI.INT, 1, 5);
                // The receiver waits for our go before posting its receive.
                for (int i = 0; i < 200; i++) {
                    assertFalse(r.test(), "ssend completed before the receive was posted");
                }
                world.send(new int[] {1}, 1, MPI.INT, 1, 6);
                r.waitFor();
            } else {
                world.recv(new int[1], 1, MPI.INT, 0, 6);
                world.recv(new int[1], 1, MPI.INT, 0, 5);
            }
        });
    }

    @Test
    void probeIprobeAndMatchedProbe() throws Exception {
        LocalJob.run(3, world -> {
            int rank = world.getRank();
            if (rank != 0) {
                world.send(new double[rank * 10], rank * 10, MPI.DOUBLE, 0, rank);
            } else {
                for (int i = 0; i < 2; i++) {
                    Status s = world.probe(MPI.ANY_SOURCE, MPI.ANY_TAG);
                    int n = s.getCount(MPI.DOUBLE);
                    assertEquals(s.getSource() * 10, n);
                    Message m = new Message();
                    Status ms = m.mProbe(s.getSource(), s.getTag(), world);
                    assertEquals(s.getSource(), ms.getSource());
                    assertNull(world.iProbe(s.getSource(), s.getTag()), "matched message left the queue");
                    double[] buf = new double[n];
                    Status rs = m.mRecv(buf, n, MPI.DOUBLE);
                    assertEquals(n, rs.getCount(MPI.DOUBLE));
                    assertTrue(m.isNull());
                }
            }
        });
    }

    @Test
    void persistentRequestsAndWaitFamilies() throws Exception {
        LocalJob.run(2, world -> {
            int peer = 1 - world.getRank();
            DoubleBuffer out = MPI.newDoubleBuffer(4);
            DoubleBuffer in = MPI.newDoubleBuffer(4);
            Prequest s = world.sendInit(out, 4, MPI.DOUBLE, peer, 1);
            Prequest r = world.recvInit(in, 4, MPI.DOUBLE, peer, 1);
            for (int it = 0; it < 5; it++) {
                for (int i = 0; i < 4; i++) out.put(i, world.getRank() * 100 + it + i);
                Prequest.startAll(new Prequest[] {r, s});
                Request[] reqs = {r, s};
                Status[] st = Request.waitAllStatus(reqs);
                assertEquals(peer, st[0].getSource());
                for (int i = 0; i < 4; i++) assertEquals(peer * 100 + it + i, in.get(i));
                assertFalse(r.isNull(), "persistent requests stay allocated");
            }
            s.free();
            r.free();
            Request[] many = new Request[3];
            IntBuffer[] bufs = new IntBuffer[3];
            for (int i = 0; i < 3; i++) {
                bufs[i] = MPI.newIntBuffer(1);
                many[i] = world.iRecv(bufs[i], 1, MPI.INT, peer, 20 + i);
            }
            for (int i = 2; i >= 0; i--) world.send(new int[] {i}, 1, MPI.INT, peer, 20 + i);
            int done = 0;
            while (done < 3) {
                int[] idx = Request.waitSome(many);
                done += idx.length;
                for (int i : idx) {
                    assertEquals(i, bufs[i].get(0));
                    assertTrue(many[i].isNull());
                }
            }
            assertNull(Request.waitSome(many), "no active request left");
            assertEquals(MPI.UNDEFINED, Request.waitAny(many));
        });
    }

    @Test
    void sendRecvAndReplaceExchangeBetweenNeighbours() throws Exception {
        LocalJob.run(3, world -> {
            int rank = world.getRank();
            int size = world.getSize();
            int right = (rank + 1) % size;
            int left = (rank - 1 + size) % size;
            long[] got = new long[1];
            world.sendRecv(new long[] {rank}, 1, MPI.LONG, right, 0, got, 1, MPI.LONG, left, 0);
            assertEquals(left, got[0]);
            int[] buf = new int[50_000];
            Arrays.fill(buf, rank);
            world.sendRecvReplace(buf, buf.length, MPI.INT, right, 1, left, 1);
            assertEquals(left, buf[0]);
            assertEquals(left, buf[buf.length - 1]);
        });
    }

    @Test
    void procNullCompletesAtOnce() throws Exception {
        LocalJob.run(2, world -> {
            world.send(new int[1], 1, MPI.INT, MPI.PROC_NULL, 0);
            Status s = world.recv(new int[1], 1, MPI.INT, MPI.PROC_NULL, 0);
            assertEquals(MPI.PROC_NULL, s.getSource());
            assertEquals(0, s.getCount(MPI.INT));
        });
    }

    @Test
    void cancelAnUnmatchedReceive() throws Exception {
        LocalJob.run(2, world -> {
            if (world.getRank() == 1) {
                Request r = world.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, 0, 99);
                r.cancel();
                Status s = r.waitStatus();
                assertTrue(s.isCancelled());
            }
            world.barrier();
        });
    }

    @Test
    void badArgumentsGiveTheRightErrorClass() throws Exception {
        LocalJob.run(2, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int[] a = new int[4];
            assertClass(MPI.ERR_RANK, () -> world.send(a, 1, MPI.INT, 2, 0));
            assertClass(MPI.ERR_RANK, () -> world.recv(a, 1, MPI.INT, -7, 0));
            assertClass(MPI.ERR_TAG, () -> world.send(a, 1, MPI.INT, 1, -1));
            assertClass(MPI.ERR_COUNT, () -> world.send(a, -1, MPI.INT, 1, 0));
            assertClass(MPI.ERR_TYPE, () -> world.send(a, 1, MPI.DOUBLE, 1, 0));
            assertClass(MPI.ERR_TYPE, () -> world.send(a, 1, null, 1, 0));
            assertClass(MPI.ERR_BUFFER, () -> world.send(a, 5, MPI.INT, 1, 0));
            assertClass(MPI.ERR_BUFFER, () -> world.iSend(IntBuffer.allocate(4), 1, MPI.INT, 1, 0));
            assertClass(MPI.ERR_BUFFER, () -> world.bSend(a, 1, MPI.INT, 1, 0));
            MPIException e = assertThrows(MPIException.class, () -> world.send(a, 1, MPI.INT, 5, 0));
            assertTrue(e.getMessage().contains("dest 5"), e.getMessage());
            world.barrier();
        });
    }

    /**
     * Asynchronous progress: a rendezvous-size operation posted (iSend, a persistent send's
     * start, or iRecv) completes while its rank computes without calling MPI, its peer waiting in
     * a blocking call; the rank's progress agent answers the protocol. The computing rank waits
     * for its peer's signal outside MPI (a latch), with a deadline.
     */
    @ParameterizedTest
    @ValueSource(strings = {"iSend", "start", "iRecv"})
    void aPostedRendezvousCompletesWhileItsRankComputesWithoutMpiCalls(String post) throws Exception {
        int bytes = 2 << 20; // over the TCP eager limit
        java.util.concurrent.CountDownLatch peerDone = new java.util.concurrent.CountDownLatch(1);
        LocalJob.run(2, world -> {
            boolean computes = world.getRank() == (post.equals("iRecv") ? 1 : 0);
            ByteBuffer d = MPI.newByteBuffer(bytes);
            world.barrier();
            if (computes) {
                Request r;
                if (post.equals("iRecv")) {
                    r = world.iRecv(d, bytes, MPI.BYTE, 0, 9);
                } else {
                    for (int i = 0; i < bytes; i += 4096) d.put(i, (byte) (i >> 12));
                    if (post.equals("start")) {
                        Prequest p = world.sendInit(d, bytes, MPI.BYTE, 1, 9);
                        p.start();
                        r = p;
                    } else {
                        r = world.iSend(d, bytes, MPI.BYTE, 1, 9);
                    }
                }
                assertTrue(peerDone.await(30, TimeUnit.SECONDS), post + ": the peer's blocking call did not complete"
                        + " while this rank made no MPI call");
                r.waitFor();
                if (post.equals("iRecv")) for (int i = 0; i < bytes; i += 4096) assertEquals((byte) (i >> 12), d.get(i));
                if (r instanceof Prequest p) p.free();
            } else {
                if (post.equals("iRecv")) {
                    for (int i = 0; i < bytes; i += 4096) d.put(i, (byte) (i >> 12));
                    world.send(d, bytes, MPI.BYTE, 1, 9);
                } else {
                    world.recv(d, bytes, MPI.BYTE, 0, 9);
                    for (int i = 0; i < bytes; i += 4096) assertEquals((byte) (i >> 12), d.get(i));
                }
                peerDone.countDown();
            }
        });
    }

    private interface Call {
        void run() throws MPIException;
    }

    private static void assertClass(int clazz, Call c) {
        MPIException e = assertThrows(MPIException.class, c::run);
        assertEquals(clazz, e.getErrorClass(), e.getMessage());
    }
}
