package org.ftmpi.api;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import mpi.*;
import org.ftmpi.LocalJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** allToAllw / iAllToAllw: per-rank counts, datatypes (also non-contiguous) and byte displacements. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AllToAllwTest {

    @Test
    void blockingAndNonBlockingMatchTheReference() throws Exception {
        for (int np : new int[] {1, 3, 4}) {
            LocalJob.run(np, world -> {
                exchange(world, false);
                exchange(world, true);
            });
        }
    }

    /**
     * Rank p sends p + q + 1 ints (p*100 + q*10 + k) to rank q: to odd q through a type that
     * takes every other int; blocks lie in reverse rank order in the send buffer.
     */
    private static void exchange(Intracomm world, boolean nonBlocking) throws MPIException {
        int p = world.getRank(), n = world.getSize();
        Datatype everyOther = Datatype.createResized(MPI.INT, 0, 8);
        everyOther.commit();
        int[] sc = new int[n], sd = new int[n], rc = new int[n], rd = new int[n];
        Datatype[] st = new Datatype[n], rt = new Datatype[n];
        int sOff = 0;
        for (int q = n - 1; q >= 0; q--) {
            sc[q] = p + q + 1;
            st[q] = q % 2 == 1 ? everyOther : MPI.INT;
            sd[q] = sOff;
            sOff += sc[q] * (q % 2 == 1 ? 8 : 4) + 4;
        }
        int rOff = 0;
        for (int q = 0; q < n; q++) {
            rc[q] = q + p + 1;
            rt[q] = MPI.INT;
            rd[q] = rOff;
            rOff += rc[q] * 4 + 4;
        }
        ByteBuffer send = MPI.newByteBuffer(sOff), recv = MPI.newByteBuffer(rOff);
        for (int q = 0; q < n; q++) {
            int step = q % 2 == 1 ? 8 : 4;
            for (int k = 0; k < sc[q]; k++) send.putInt(sd[q] + k * step, p * 100 + q * 10 + k);
        }
        if (nonBlocking) {
            world.iAllToAllw(send, sc, sd, st, recv, rc, rd, rt).waitFor();
        } else {
            world.allToAllw(send, sc, sd, st, recv, rc, rd, rt);
        }
        for (int q = 0; q < n; q++) {
            for (int k = 0; k < rc[q]; k++) assertEquals(q * 100 + p * 10 + k, recv.getInt(rd[q] + 4 * k), "from " + q);
        }
        everyOther.free();
    }

    @Test
    void onIntercommunicatorsBlocksGoToTheRemoteGroup() throws Exception {
        int[] colour = {0, 1, 0, 1, 0};
        LocalJob.run(5, world -> {
            Intercomm ic = IntercommTest.join(world, colour);
            int p = ic.getRank(), m = ic.getRemoteSize();
            int[] rw = IntercommTest.remoteWorld(ic, world);
            for (boolean nonBlocking : new boolean[] {false, true}) {
                // p -> remote q: p + q + 1 ints, my world rank * 100 + q; byte displacements 16 apart
                int[] sc = new int[m], sd = new int[m], rc = new int[m], rd = new int[m];
                Datatype[] t = new Datatype[m];
                for (int q = 0; q < m; q++) {
                    sc[q] = rc[q] = p + q + 1;
                    sd[q] = rd[q] = 16 * (m + p) * q;
                    t[q] = MPI.INT;
                }
                ByteBuffer send = MPI.newByteBuffer(16 * (m + p) * m), recv = MPI.newByteBuffer(16 * (m + p) * m);
                int me = world.getRank();
                for (int q = 0; q < m; q++) for (int k = 0; k < sc[q]; k++) send.putInt(sd[q] + 4 * k, me * 100 + q);
                if (nonBlocking) ic.iAllToAllw(send, sc, sd, t, recv, rc, rd, t).waitFor();
                else ic.allToAllw(send, sc, sd, t, recv, rc, rd, t);
                for (int q = 0; q < m; q++) {
                    for (int k = 0; k < rc[q]; k++) assertEquals(rw[q] * 100 + p, recv.getInt(rd[q] + 4 * k));
                }
            }
            ic.free();
        });
    }

    @Test
    void badArgumentsAreNamed() throws Exception {
        LocalJob.run(2, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            ByteBuffer b = MPI.newByteBuffer(16);
            int[] c = {1, 1}, d = {0, 4};
            Datatype[] t = {MPI.INT, MPI.INT};
            MPIException e = assertThrows(MPIException.class,
                    () -> world.allToAllw(b, c, new int[] {0, -4}, t, b, c, d, t));
            assertEquals(MPI.ERR_ARG, e.getErrorClass());
            assertTrue(e.getMessage().contains("sDispls[1]"), e.getMessage());
            e = assertThrows(MPIException.class, () -> world.allToAllw(b, c, d, new Datatype[] {MPI.INT}, b, c, d, t));
            assertEquals(MPI.ERR_ARG, e.getErrorClass());
            assertTrue(e.getMessage().contains("sendTypes"), e.getMessage());
            e = assertThrows(MPIException.class, () -> world.allToAllw(b, c, d, t, b, new int[] {1, -1}, d, t));
            assertEquals(MPI.ERR_COUNT, e.getErrorClass());
            e = assertThrows(MPIException.class,
                    () -> world.allToAllw(ByteBuffer.allocate(16), c, d, t, b, c, d, t));
            assertEquals(MPI.ERR_BUFFER, e.getErrorClass());
            e = assertThrows(MPIException.class, () -> world.allToAllw(b, c, d, t, b, c, new int[] {0, 40}, t));
            assertEquals(MPI.ERR_ARG, e.getErrorClass());
        });
    }
}
