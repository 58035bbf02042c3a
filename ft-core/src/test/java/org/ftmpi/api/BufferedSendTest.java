package org.ftmpi.api;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.IntBuffer;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import mpi.*;
import org.ftmpi.LocalJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Buffered sends. The attached buffer is process-wide (static, as in Open MPI's bindings), so
 * in a threads-as-ranks job only rank 0 attaches one and sends buffered, and it always detaches
 * before it returns.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BufferedSendTest {
    private static final int GO = 100;

    @Test
    void bsendNeverBlocksEvenWhenTheReceiverPostsLate() throws Exception {
        int big = 100_000; // ints: 400 KB, rendezvous on TCP
        LocalJob.run(2, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            if (world.getRank() == 0) {
                int[] a = new int[big];
                int[] b = {1, 2, 3};
                IntBuffer c = MPI.newIntBuffer(2);
                int room = 4 * big + 4 * 3 + 4 * 2 + 0 + 4 * MPI.BSEND_OVERHEAD;
                byte[] attached = new byte[room];
                MPI.attachBuffer(attached);
                try {
                    Arrays.fill(a, 7);
                    c.put(0, 8).put(1, 9);
                    world.bSend(a, big, MPI.INT, 1, 1);
                    world.bSend(b, 3, MPI.INT, 1, 2);
                    Request r = world.ibSend(c, 2, MPI.INT, 1, 3);
                    assertTrue(r.test(), "ibSend completes once the message is buffered");
                    world.bSend(null, 0, MPI.INT, 1, 4);
                    // The messages were copied: changing the sources now changes nothing.
                    Arrays.fill(a, -1);
                    b[0] = -1;
                    c.put(0, -1);
                    // The large message holds its space until the receiver takes it (after GO);
                    // the small ones may have left already. So this is one byte too many:
                    int tooMany = room - (4 * big + MPI.BSEND_OVERHEAD) - MPI.BSEND_OVERHEAD + 1;
                    MPIException e = assertThrows(MPIException.class,
                            () -> world.bSend(new byte[tooMany], tooMany, MPI.BYTE, 1, 5));
                    assertEquals(MPI.ERR_BUFFER, e.getErrorClass(), e.getMessage());
                    // The receiver posts its receives only after this message: had a bsend waited
                    // for its receive, we would never get here.
                    world.send(new int[1], 1, MPI.INT, 1, GO);
                    assertSame(attached, MPI.detachBuffer(), "detach returns the attached buffer");
                    // The space is free again once detach returned; a new buffer works.
                    MPI.attachBuffer(new byte[MPI.BSEND_OVERHEAD + 3]);
                    e = assertThrows(MPIException.class, () -> world.bSend(new int[1], 1, MPI.INT, 1, 7));
                    assertEquals(MPI.ERR_BUFFER, e.getErrorClass(), "too small a buffer");
                    world.bSend(new byte[] {11}, 1, MPI.BYTE, 1, 6);
                } catch (Throwable t) {
                    // Fail the pending buffered sends, so that the detach below cannot wait forever.
                    world.abort(1);
                    throw t;
                } finally {
                    MPI.detachBuffer();
                }
            } else {
                world.recv(new int[1], 1, MPI.INT, 0, GO);
                int[] a = new int[big];
                Status s = world.recv(a, big, MPI.INT, 0, 1);
                assertEquals(big, s.getCount(MPI.INT));
                assertTrue(Arrays.stream(a).allMatch(x -> x == 7), "the buffered copy was sent");
                int[] b = new int[3];
                world.recv(b, 3, MPI.INT, 0, 2);
                assertArrayEquals(new int[] {1, 2, 3}, b);
                int[] c = new int[2];
                world.recv(c, 2, MPI.INT, 0, 3);
                assertArrayEquals(new int[] {8, 9}, c);
                assertEquals(0, world.recv(null, 0, MPI.INT, 0, 4).getCount(MPI.INT));
                byte[] d = new byte[1];
                world.recv(d, 1, MPI.BYTE, 0, 6);
                assertEquals(11, d[0]);
                assertNull(world.iProbe(0, 5), "the refused bsends sent nothing");
                assertNull(world.iProbe(0, 7), "the refused bsends sent nothing");
            }
        });
    }
}
