package mpi;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.IntBuffer;
import java.util.concurrent.TimeUnit;
import org.ftmpi.LocalJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Blocking collectives reuse what a loop of equal calls needs (the engine's requests, the
 * reduction's scratch region, the operation bound to its datatype, the caller's whole array
 * without a slice): the results stay right when datatypes, operations, sizes and communicator
 * sizes change from call to call, a freed user operation is refused, and a receive the
 * application has pending is never touched.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CollectiveReuseTest {
    private static final int ROUNDS = 200;

    @Test
    void repeatedReductionsStayRightAcrossTypesOpsAndSizes() throws Exception {
        for (int np : new int[] {3, 4}) { // 3: recursive doubling's extra pairing step
            LocalJob.run(np, world -> {
                int rank = world.getRank(), n = world.getSize();
                int peer = (rank + 1) % n, from = (rank - 1 + n) % n;
                // pending for the whole loop: the collectives' reused requests must never be it
                IntBuffer late = MPI.newIntBuffer(1);
                Request pending = world.iRecv(late, 1, MPI.INT, from, 77);
                for (int round = 0; round < ROUNDS; round++) {
                    int[] i1 = {rank + round}, o1 = new int[1];
                    world.allReduce(i1, o1, 1, MPI.INT, MPI.SUM);
                    assertEquals(n * (n - 1) / 2 + n * round, o1[0], "int sum, round " + round);
                    double[] d2 = {rank * 0.5, -rank}, e2 = new double[2];
                    world.allReduce(d2, e2, 2, MPI.DOUBLE, MPI.SUM); // same op, another type and size
                    assertEquals(n * (n - 1) / 4.0, e2[0], 0.0);
                    assertEquals(-n * (n - 1) / 2.0, e2[1], 0.0);
                    world.allReduce(i1, o1, 1, MPI.INT, MPI.MAX); // same type, another op
                    assertEquals(n - 1 + round, o1[0]);
                    long[] l3 = {rank, 1, round}, m3 = new long[3];
                    world.allReduce(l3, m3, 3, MPI.LONG, MPI.MIN);
                    assertArrayEquals(new long[] {0, 1, round}, m3);
                    int[] part = {rank + 1, -1, -1}, got = {0, 5}; // count 1 of longer arrays: slices
                    world.allReduce(part, got, 1, MPI.INT, MPI.SUM);
                    assertEquals(n * (n + 1) / 2, got[0]);
                    assertEquals(5, got[1], "an element beyond count was written");
                    java.nio.FloatBuffer fs = MPI.newFloatBuffer(8), fr = MPI.newFloatBuffer(8); // part of direct buffers
                    fs.put(0, rank).put(1, round);
                    fr.put(2, -7f);
                    world.allReduce(fs, fr, 2, MPI.FLOAT, MPI.SUM);
                    assertEquals(n * (n - 1) / 2f, fr.get(0), 0f);
                    assertEquals((float) n * round, fr.get(1), 0f);
                    assertEquals(-7f, fr.get(2), 0f, "an element beyond count was written");
                    double[] inPlace = {rank + 0.25};
                    world.allReduce(inPlace, 1, MPI.DOUBLE, MPI.SUM); // MPI_IN_PLACE: its copy is scratch too
                    assertEquals(n * (n - 1) / 2.0 + n * 0.25, inPlace[0], 0.0);
                    int[] red = {rank, round}, root = {-1, -1};
                    int r0 = round % n;
                    world.reduce(red, root, 2, MPI.INT, MPI.MAX, r0); // rooted: two partial results
                    if (rank == r0) assertArrayEquals(new int[] {n - 1, round}, root);
                    else assertArrayEquals(new int[] {-1, -1}, root);
                    long[] b = {rank == r0 ? round : -1};
                    world.bcast(b, 1, MPI.LONG, r0);
                    assertEquals(round, b[0]);
                    world.barrier();
                }
                assertFalse(pending.test(), "a collective completed the application's pending receive");
                world.barrier(); // every rank has tested before any sends tag 77
                world.send(new int[] {rank}, 1, MPI.INT, peer, 77);
                pending.waitFor();
                assertEquals(from, late.get(0));
            });
        }
    }

    @Test
    void aFreedUserOperationIsRefusedAfterBeingBound() throws Exception {
        LocalJob.run(2, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            Op op = new Op(new UserFunction() {
                @Override
                public void call(Object in, Object inout, int count, Datatype type) {
                    int[] a = (int[]) in, b = (int[]) inout;
                    for (int i = 0; i < count; i++) b[i] = a[i] * 10 + b[i];
                }
            }, false);
            int[] v = {world.getRank() + 1}, r = new int[1];
            for (int round = 0; round < 3; round++) {
                world.allReduce(v, r, 1, MPI.INT, op);
                assertEquals(12, r[0]); // rank order: 1 op 2 = 1 * 10 + 2
            }
            op.free();
            MPIException e = assertThrows(MPIException.class, () -> world.allReduce(v, r, 1, MPI.INT, op));
            assertEquals(MPI.ERR_OP, e.getErrorClass(), e.getMessage());
        });
    }
}
