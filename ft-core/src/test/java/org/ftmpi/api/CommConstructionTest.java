package org.ftmpi.api;

import static org.junit.jupiter.api.Assertions.*;

import java.util.concurrent.TimeUnit;
import mpi.*;
import org.ftmpi.LocalJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** dup, split, create, compare, free; context isolation between communicators. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CommConstructionTest {

    @Test
    void splitOrdersByKeyAndLeavesUndefinedOut() throws Exception {
        LocalJob.run(6, world -> {
            int me = world.getRank();
            int colour = me == 5 ? MPI.UNDEFINED : me % 2;
            Intracomm half = world.split(colour, -me); // reverse order within each colour
            if (me == 5) {
                assertNull(half);
            } else {
                int[] expect = colour == 0 ? new int[] {4, 2, 0} : new int[] {3, 1};
                assertEquals(expect.length, half.getSize());
                int[] members = new int[half.getSize()];
                half.allGather(new int[] {me}, 1, MPI.INT, members, 1, MPI.INT);
                assertArrayEquals(expect, members);
                assertEquals(indexOf(expect, me), half.getRank());
                assertArrayEquals(new int[] {indexOf(expect, me)},
                        Group.translateRanks(world.getGroup(), new int[] {me}, half.getGroup()));
                assertEquals(MPI.UNEQUAL, Comm.compare(world, half));
                half.free();
            }
            // The world still works, and a split with one colour and equal keys is congruent.
            Intracomm same = world.split(0, 0);
            assertEquals(MPI.CONGRUENT, Comm.compare(world, same));
            assertEquals(me, same.getRank());
            Intracomm rev = world.split(0, -me);
            assertEquals(MPI.SIMILAR, Comm.compare(world, rev));
            assertEquals(5 - me, rev.getRank());
            same.free();
            rev.free();
        });
    }

    static int indexOf(int[] a, int x) {
        for (int i = 0; i < a.length; i++) if (a[i] == x) return i;
        return -1;
    }

    @Test
    void dupAndCreateGiveIsolatedContexts() throws Exception {
        LocalJob.run(4, world -> {
            int me = world.getRank();
            Intracomm dup = world.dup();
            assertEquals(MPI.CONGRUENT, Comm.compare(world, dup));
            assertEquals(MPI.IDENT, Comm.compare(dup, dup));
            assertEquals(me, dup.getRank());
            // A message on the dup is not seen on the world, even with wildcards.
            if (me == 0) {
                dup.send(new int[] {7}, 1, MPI.INT, 1, 3);
                world.send(new int[] {8}, 1, MPI.INT, 1, 3);
            } else if (me == 1) {
                int[] x = new int[1];
                world.recv(x, 1, MPI.INT, MPI.ANY_SOURCE, MPI.ANY_TAG);
                assertEquals(8, x[0]);
                dup.recv(x, 1, MPI.INT, MPI.ANY_SOURCE, MPI.ANY_TAG);
                assertEquals(7, x[0]);
            }
            Group odd = world.getGroup().incl(new int[] {3, 1});
            Intracomm c = world.create(odd);
            if (me % 2 == 0) {
                assertNull(c);
            } else {
                assertEquals(2, c.getSize());
                assertEquals(me == 3 ? 0 : 1, c.getRank());
                int[] s = new int[1];
                c.allReduce(new int[] {me}, s, 1, MPI.INT, MPI.SUM);
                assertEquals(4, s[0]);
                Intracomm cd = c.dup(); // nested construction on a derived communicator
                cd.barrier();
                cd.free();
                c.free();
            }
            Intracomm cl = world.clone(); // Open MPI: clone() is dup()
            assertEquals(MPI.CONGRUENT, Comm.compare(world, cl));
            cl.free();
            Intracomm empty = world.create(MPI.GROUP_EMPTY);
            assertNull(empty);
            // Many constructions in a row never reuse a live context.
            Intracomm[] many = new Intracomm[20];
            for (int i = 0; i < many.length; i++) many[i] = (i % 2 == 0 ? world : many[i - 1]).dup();
            for (int i = 0; i < many.length; i++) {
                int[] r = new int[1];
                many[i].allReduce(new int[] {i}, r, 1, MPI.INT, MPI.MAX);
                assertEquals(i, r[0]);
            }
            for (Intracomm m : many) m.free();
            dup.free();
        });
    }

    @Test
    void constructionCallsInDifferentOrdersAreAnError() throws Exception {
        LocalJob.run(2, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            MPIException e = assertThrows(MPIException.class, () -> {
                if (world.getRank() == 0) world.dup();
                else world.split(0, 0);
            });
            assertEquals(MPI.ERR_COMM, e.getErrorClass());
            assertTrue(e.getMessage().contains("same order"), e.getMessage());
            // Both ranks saw the error; the world is still usable.
            world.barrier();
            Intracomm d = world.dup();
            assertEquals(2, d.getSize());
            d.free();
        });
    }

    @Test
    void freeAndArgumentErrors() throws Exception {
        LocalJob.run(2, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            assertEquals(MPI.ERR_COMM, assertThrows(MPIException.class, world::free).getErrorClass());
            Intracomm d = world.dup();
            assertEquals(MPI.ERRORS_RETURN, d.getErrhandler(), "the error handler is inherited");
            assertFalse(d.isNull());
            d.free();
            assertTrue(d.isNull());
            assertFalse(world.isNull());
            assertEquals(MPI.ERR_COMM, assertThrows(MPIException.class, d::getSize).getErrorClass());
            assertEquals(MPI.ERR_COMM, assertThrows(MPIException.class, d::dup).getErrorClass());
            assertEquals(MPI.ERR_ARG, assertThrows(MPIException.class, () -> world.split(-5, 0)).getErrorClass());
            // the failed split did not start a construction: the next one agrees
            Intracomm again = world.dup();
            again.free();
        });
    }

    @Test
    void createGroupIsCollectiveOverTheGroupOnly() throws Exception {
        LocalJob.run(7, world -> {
            int me = world.getRank();
            Group all = world.getGroup();
            Group evens = all.incl(new int[] {0, 2, 4, 6});
            Group odds = all.incl(new int[] {5, 3, 1}); // group order, not parent order
            // Evens and odds build their communicators at the same time; nobody else takes part.
            Intracomm c = world.createGroup(me % 2 == 0 ? evens : odds, me % 2 == 0 ? 0 : 9);
            int[] expect = me % 2 == 0 ? new int[] {0, 2, 4, 6} : new int[] {5, 3, 1};
            assertEquals(expect.length, c.getSize());
            assertEquals(indexOf(expect, me), c.getRank());
            int[] members = new int[c.getSize()];
            c.allGather(new int[] {me}, 1, MPI.INT, members, 1, MPI.INT);
            assertArrayEquals(expect, members);
            // Processes outside the group get MPI_COMM_NULL without communicating.
            assertNull(me % 2 == 0 ? world.createGroup(odds, 3) : world.createGroup(evens, 3));
            assertNull(world.createGroup(MPI.GROUP_EMPTY, 0));
            // A second call with the same group and tag makes a distinct communicator.
            Intracomm again = world.createGroup(me % 2 == 0 ? evens : odds, me % 2 == 0 ? 0 : 9);
            assertEquals(MPI.CONGRUENT, Comm.compare(c, again));
            int[] sum = new int[1];
            again.allReduce(new int[] {1}, sum, 1, MPI.INT, MPI.SUM);
            assertEquals(expect.length, sum[0]);
            world.barrier(); // the parent is still consistent
            again.free();
            c.free();

            world.setErrhandler(MPI.ERRORS_RETURN);
            MPIException e = assertThrows(MPIException.class, () -> world.createGroup(evens, -1));
            assertEquals(MPI.ERR_TAG, e.getErrorClass());
            assertTrue(e.getMessage().contains("tag -1"), e.getMessage());
            assertEquals(MPI.ERR_GROUP, assertThrows(MPIException.class, () -> world.createGroup(null, 0)).getErrorClass());
            Intracomm half = world.split(me < 3 ? 0 : 1, me);
            Group fromWorld = all.incl(new int[] {1, 5});
            MPIException notSubset = assertThrows(MPIException.class, () -> half.createGroup(fromWorld, 0));
            assertEquals(MPI.ERR_GROUP, notSubset.getErrorClass());
            assertTrue(notSubset.getMessage().contains("createGroup"), notSubset.getMessage());
            half.free();
        });
    }
}
