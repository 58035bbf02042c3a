package org.ftmpi.api;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import mpi.*;
import org.ftmpi.LocalJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Derived datatypes through the mpi facade: constructors, units, p2p, collectives, pack. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DerivedDatatypeTest {
    static final int N = 6;

    static double[] matrix(int seed) {
        double[] a = new double[N * N];
        for (int i = 0; i < a.length; i++) a[i] = seed * 1000 + i;
        return a;
    }

    @Test
    void gettersCountInBaseElementsAsOpenMpiDoes() throws Exception {
        Datatype v = Datatype.createVector(3, 1, 4, MPI.DOUBLE);
        v.commit();
        assertEquals(9, v.getExtent());
        assertEquals(3, v.getSize());
        assertEquals(0, v.getLb());
        assertEquals(9, v.getTrueExtent());
        Datatype r = Datatype.createResized(v, 8, 16);   // bytes
        assertEquals(1, r.getLb());
        assertEquals(2, r.getExtent());
        Datatype h = Datatype.createHVector(2, 2, 24, MPI.INT);   // stride in bytes
        assertEquals(8, h.getExtent());
        Datatype s = Datatype.createStruct(new int[] {1, 1}, new int[] {0, 8}, new Datatype[] {MPI.INT, MPI.DOUBLE});
        assertEquals(16, s.getExtent());   // bytes: the base type of a struct is BYTE
        assertEquals(12, s.getSize());
        assertSame(MPI.BYTE, s.getBaseType());
        assertEquals(1, MPI.INT.getSize());
        assertEquals(2, MPI.DOUBLE_COMPLEX.getSize());
        assertEquals(12, MPI.DOUBLE_INT.getSize());
        assertEquals(16, MPI.DOUBLE_INT.getExtent());
        s.setName("pair");
        assertEquals("pair", s.getName());
        Datatype d = v.dup();
        assertEquals(9, d.getExtent());
        d.free();
        assertTrue(d.isNull());
        assertEquals(MPI.ERR_TYPE, assertThrows(MPIException.class, MPI.INT::free).getErrorClass());
    }

    @Test
    void matrixColumnGoesIntoContiguousArrayAndIntoAnotherColumn() throws Exception {
        LocalJob.run(2, world -> {
            Datatype col = Datatype.createVector(N, 1, N, MPI.DOUBLE);
            col.commit();
            if (world.getRank() == 0) {
                double[] a = matrix(1);
                world.send(a, 1, col, 1, 1);                      // column 0
                world.send(MPI.slice(a, 2), 1, col, 1, 2);        // column 2 (heap buffer at array offset 2)
                world.send(a, 1, col, 1, 3);
            } else {
                double[] a = matrix(1);
                double[] c = new double[N];
                Status s = world.recv(c, N, MPI.DOUBLE, 0, 1);
                for (int i = 0; i < N; i++) assertEquals(a[i * N], c[i]);
                assertEquals(N, s.getCount(MPI.DOUBLE));
                assertEquals(1, s.getCount(col));
                assertEquals(N, s.getElements(col));
                world.recv(c, N, MPI.DOUBLE, 0, 2);
                for (int i = 0; i < N; i++) assertEquals(a[i * N + 2], c[i]);
                double[] b = new double[N * N];
                world.recv(MPI.slice(b, 4), 1, col, 0, 3);        // into column 4 of b
                for (int i = 0; i < N; i++) {
                    for (int j = 0; j < N; j++) assertEquals(j == 4 ? a[i * N] : 0.0, b[i * N + j], "b[" + i + "][" + j + "]");
                }
            }
        });
    }

    @Test
    void indexedAndStructRoundTripBlockingAndNonBlocking() throws Exception {
        LocalJob.run(2, world -> {
            Datatype idx = Datatype.createIndexed(new int[] {2, 1, 3}, new int[] {0, 4, 7}, MPI.INT);
            idx.commit();
            Datatype st = Datatype.createStruct(new int[] {1, 2}, new int[] {0, 8}, new Datatype[] {MPI.INT, MPI.DOUBLE});
            st.commit();
            int[] ids = {0, 1, 4, 7, 8, 9};
            if (world.getRank() == 0) {
                int[] a = new int[20];
                for (int i = 0; i < a.length; i++) a[i] = i + 100;
                world.send(a, 2, idx, 1, 1);
                ByteBuffer b = MPI.newByteBuffer(3 * 24);
                for (int k = 0; k < 3; k++) {
                    b.putInt(k * 24, k);
                    b.putDouble(k * 24 + 8, k + 0.5);
                    b.putDouble(k * 24 + 16, -k);
                }
                world.send(b, 3, st, 1, 2);
                world.iSend(b, 3, st, 1, 3).waitFor();
            } else {
                int[] r = new int[20];
                Status s = world.recv(r, 2, idx, 0, 1);
                assertEquals(2, s.getCount(idx));
                assertEquals(12, s.getElements(idx));
                for (int k = 0; k < 2; k++) {
                    for (int i : ids) assertEquals(100 + i + 10 * k, r[i + 10 * k]);
                }
                assertEquals(0, r[2]);
                ByteBuffer b = MPI.newByteBuffer(3 * 24);
                s = world.recv(b, 3, st, 0, 2);
                assertEquals(3, s.getCount(st));
                assertEquals(9, s.getElements(st));
                check(b);
                ByteBuffer c = MPI.newByteBuffer(3 * 24);
                world.iRecv(c, 3, st, 0, 3).waitFor();
                check(c);
            }
        });
    }

    private static void check(ByteBuffer b) {
        for (int k = 0; k < 3; k++) {
            assertEquals(k, b.getInt(k * 24));
            assertEquals(k + 0.5, b.getDouble(k * 24 + 8));
            assertEquals(-k, b.getDouble(k * 24 + 16));
        }
    }

    /** A user struct as Open MPI Java programs write them. */
    static final class Particle extends Struct {
        final int id = addInt();
        final int pos = addDouble(3);
        final int tag = addChar();

        @Override
        protected Data newData() {
            return new Data();
        }

        final class Data extends Struct.Data {
            int id() { return getInt(id); }
            void id(int v) { putInt(id, v); }
            double pos(int i) { return getDouble(pos, i); }
            void pos(int i, double v) { putDouble(pos, i, v); }
            char tag() { return getChar(tag); }
            void tag(char c) { putChar(tag, c); }
        }
    }

    @Test
    void structSubclassTravelsBetweenRanks() throws Exception {
        LocalJob.run(3, world -> {
            Particle p = new Particle();
            assertEquals(0, p.id);
            assertEquals(4, p.pos);
            assertEquals(28, p.tag);
            int ext = p.getExtent();
            assertEquals(32, ext);   // 30 bytes of fields, rounded up to the 8-byte alignment
            ByteBuffer buf = MPI.newByteBuffer(4 * ext);
            if (world.getRank() == 0) {
                for (int k = 0; k < 4; k++) {
                    Particle.Data d = p.getData(buf, k);
                    d.id(k + 7);
                    d.tag((char) ('a' + k));
                    for (int i = 0; i < 3; i++) d.pos(i, k * 10 + i + 0.25);
                }
                world.send(buf, 4, p.getType(), 1, 9);
                world.send(buf, 4, p.getType(), 2, 9);
            } else {
                Status s = world.recv(buf, 4, p.getType(), 0, 9);
                assertEquals(4, s.getCount(p.getType()));
                for (int k = 0; k < 4; k++) {
                    Particle.Data d = p.getData(buf, k);
                    assertEquals(k + 7, d.id());
                    assertEquals((char) ('a' + k), d.tag());
                    for (int i = 0; i < 3; i++) assertEquals(k * 10 + i + 0.25, d.pos(i));
                }
            }
        });
    }

    @Test
    void packAndUnpackAreByteExact() throws Exception {
        LocalJob.run(1, world -> {
            Datatype v = Datatype.createVector(3, 1, 2, MPI.INT);
            v.commit();
            int[] a = {1, 2, 3, 4, 5, 6};
            assertEquals(12, world.packSize(1, v));
            byte[] out = new byte[16];
            int pos = world.pack(a, 1, v, out, 2);
            assertEquals(14, pos);
            ByteBuffer expect = ByteBuffer.allocate(16).order(ByteOrder.nativeOrder());
            expect.putInt(2, 1).putInt(6, 3).putInt(10, 5);
            assertArrayEquals(expect.array(), out);
            int[] back = new int[6];
            assertEquals(14, world.unpack(out, 2, back, 1, v));
            assertArrayEquals(new int[] {1, 0, 3, 0, 5, 0}, back);

            byte[] ext = new byte[12];
            assertEquals(12, MPI.packExternalSize("external32", 1, v));
            assertEquals(12, MPI.packExternal("external32", a, 1, v, ext, 0));
            assertArrayEquals(new byte[] {0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 5}, ext);
            int[] back2 = new int[6];
            assertEquals(12, MPI.unpackExternal("external32", ext, 0, back2, 1, v));
            assertArrayEquals(new int[] {1, 0, 3, 0, 5, 0}, back2);

            // DOUBLE_INT: 12 bytes per pair in external32, big-endian value then index
            ByteBuffer di = MPI.newByteBuffer(16);
            MPI.doubleInt.<DoubleInt.Data>getData(di).putValue(1.0);
            MPI.doubleInt.<DoubleInt.Data>getData(di).putIndex(258);
            byte[] e2 = new byte[12];
            MPI.packExternal("external32", di, 1, MPI.DOUBLE_INT, e2, 0);
            assertArrayEquals(new byte[] {0x3f, (byte) 0xf0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2}, e2);

            // boolean[] with a derived type
            Datatype bv = Datatype.createVector(2, 1, 2, MPI.BOOLEAN);
            bv.commit();
            boolean[] z = {true, false, false, true};
            byte[] zb = new byte[2];
            world.pack(z, 1, bv, zb, 0);
            assertArrayEquals(new byte[] {1, 0}, zb);
            boolean[] zz = {false, true, false, true};
            world.unpack(new byte[] {1, 1}, 0, zz, 1, bv);
            assertArrayEquals(new boolean[] {true, true, true, true}, zz);
        });
    }

    @Test
    void errorsHaveTheirClassesAndNameTheArgument() throws Exception {
        LocalJob.run(2, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            Datatype v = Datatype.createVector(2, 1, 2, MPI.INT);
            int[] a = new int[8];
            MPIException e = assertThrows(MPIException.class, () -> world.send(a, 1, v, 1 - world.getRank(), 1));
            assertEquals(MPI.ERR_TYPE, e.getErrorClass());
            assertTrue(e.getMessage().contains("not committed"), e.getMessage());
            v.commit();
            Datatype f = v.dup();
            f.free();
            e = assertThrows(MPIException.class, () -> world.pack(a, 1, f, new byte[8], 0));
            assertEquals(MPI.ERR_TYPE, e.getErrorClass());
            assertTrue(e.getMessage().contains("freed"), e.getMessage());
            e = assertThrows(MPIException.class, () -> world.pack(a, -1, v, new byte[8], 0));
            assertEquals(MPI.ERR_COUNT, e.getErrorClass());
            assertTrue(e.getMessage().contains("incount"), e.getMessage());
            e = assertThrows(MPIException.class, () -> world.pack(a, 2, v, new byte[8], 4));
            assertEquals(MPI.ERR_TRUNCATE, e.getErrorClass());
            assertTrue(e.getMessage().contains("outbuf"), e.getMessage());
            e = assertThrows(MPIException.class, () -> world.send(new int[2], 1, v, 1 - world.getRank(), 1));
            assertEquals(MPI.ERR_BUFFER, e.getErrorClass());
            e = assertThrows(MPIException.class, () -> world.send(new double[8], 1, v, 1 - world.getRank(), 1));
            assertEquals(MPI.ERR_TYPE, e.getErrorClass());
            e = assertThrows(MPIException.class, () -> MPI.packExternal("native", a, 1, v, new byte[8], 0));
            assertEquals(MPI.ERR_ARG, e.getErrorClass());
            assertTrue(e.getMessage().contains("datarep"), e.getMessage());
            e = assertThrows(MPIException.class, () -> Datatype.createVector(-1, 1, 1, MPI.INT));
            assertEquals(MPI.ERR_COUNT, e.getErrorClass());
            e = assertThrows(MPIException.class, () -> Datatype.createContiguous(2, null));
            assertEquals(MPI.ERR_TYPE, e.getErrorClass());
            e = assertThrows(MPIException.class, () -> world.allReduce(new byte[48], new byte[48], 1,
                    committed(Datatype.createStruct(new int[] {1, 1}, new int[] {0, 8}, new Datatype[] {MPI.INT, MPI.DOUBLE})),
                    MPI.SUM));
            assertEquals(MPI.ERR_OP, e.getErrorClass());
            // receive type too small for the message: ERR_TRUNCATE
            if (world.getRank() == 0) {
                world.send(new int[8], 2, v, 1, 5);
            } else {
                e = assertThrows(MPIException.class, () -> world.recv(new int[8], 1, v, 0, 5));
                assertEquals(MPI.ERR_TRUNCATE, e.getErrorClass());
            }
        });
    }

    static Datatype committed(Datatype t) throws MPIException {
        t.commit();
        return t;
    }

    @Test
    void probeCountsWholeDerivedElementsOrUndefined() throws Exception {
        LocalJob.run(2, world -> {
            Datatype two = committed(Datatype.createContiguous(2, MPI.INT));
            if (world.getRank() == 0) {
                world.send(new int[5], 5, MPI.INT, 1, 4);
            } else {
                Status s = world.probe(0, 4);
                assertEquals(MPI.UNDEFINED, s.getCount(two));
                assertEquals(5, s.getElements(two));
                world.recv(new int[6], 3, two, 0, 4);
            }
        });
    }

    @Test
    void persistentRequestsRepackOnEveryStart() throws Exception {
        LocalJob.run(2, world -> {
            Datatype v = committed(Datatype.createVector(3, 1, 2, MPI.INT));
            java.nio.IntBuffer b = MPI.newIntBuffer(6);
            if (world.getRank() == 0) {
                Prequest p = world.sendInit(b, 1, v, 1, 6);
                for (int round = 0; round < 3; round++) {
                    for (int i = 0; i < 6; i++) b.put(i, round * 10 + i);
                    p.start();
                    p.waitFor();
                }
            } else {
                Prequest p = world.recvInit(b, 1, v, 0, 6);
                for (int round = 0; round < 3; round++) {
                    p.start();
                    p.waitFor();
                    for (int i = 0; i < 6; i += 2) assertEquals(round * 10 + i, b.get(i));
                    assertEquals(0, b.get(1));
                }
            }
        });
    }

    @Test
    void collectivesTakeDerivedTypes() throws Exception {
        LocalJob.run(3, world -> {
            int rank = world.getRank(), size = world.getSize();
            Datatype col = committed(Datatype.createVector(N, 1, N, MPI.DOUBLE));
            // bcast of a column
            double[] a = rank == 1 ? matrix(1) : new double[N * N];
            world.bcast(a, 1, col, 1);
            for (int i = 0; i < N; i++) {
                assertEquals(matrix(1)[i * N], a[i * N]);
                assertEquals(rank == 1 ? matrix(1)[i * N + 1] : 0.0, a[i * N + 1]);
            }
            // gather: every rank sends its column 0, the root receives them as columns 0..size-1
            // (a column type resized to one double, so consecutive columns are one element apart)
            Datatype colR = committed(Datatype.createResized(col, 0, 8));
            double[] mine = matrix(rank + 1);
            double[] all = new double[N * N];
            world.gather(mine, 1, col, all, 1, colR, 0);
            if (rank == 0) {
                for (int r = 0; r < size; r++) {
                    for (int i = 0; i < N; i++) assertEquals(matrix(r + 1)[i * N], all[i * N + r]);
                }
            }
            // scatter of columns back, into contiguous arrays
            double[] got = new double[N];
            world.scatter(all, 1, colR, got, N, MPI.DOUBLE, 0);
            for (int i = 0; i < N; i++) assertEquals(matrix(rank + 1)[i * N], got[i]);
            // allGather and allToAll with a strided int type
            Datatype every2 = committed(Datatype.createResized(Datatype.createVector(2, 1, 2, MPI.INT), 0, 16));
            int[] send = new int[4 * size];
            for (int i = 0; i < send.length; i++) send[i] = rank * 100 + i;
            int[] ag = new int[2 * size];
            world.allGather(send, 1, every2, ag, 2, MPI.INT);
            for (int r = 0; r < size; r++) {
                assertEquals(r * 100, ag[2 * r]);
                assertEquals(r * 100 + 2, ag[2 * r + 1]);
            }
            int[] aa = new int[4 * size];
            world.allToAll(send, 1, every2, aa, 1, every2);
            for (int r = 0; r < size; r++) {
                assertEquals(r * 100 + 4 * rank, aa[4 * r]);
                assertEquals(0, aa[4 * r + 1]);
                assertEquals(r * 100 + 4 * rank + 2, aa[4 * r + 2]);
            }
            // reduction over a single-base derived type
            double[] m = matrix(rank);
            double[] sum = new double[N * N];
            world.allReduce(m, sum, 1, col, MPI.SUM);
            for (int i = 0; i < N; i++) {
                double e = 0;
                for (int r = 0; r < size; r++) e += matrix(r)[i * N];
                assertEquals(e, sum[i * N]);
                assertEquals(0.0, sum[i * N + 1]);
            }
        });
    }

    @Test
    void minlocAndMaxlocOnPairTypes() throws Exception {
        LocalJob.run(4, world -> {
            int rank = world.getRank();
            double[] vals = {3.0, 1.0, 1.0, 7.0};
            ByteBuffer in = MPI.newByteBuffer(2 * 16), out = MPI.newByteBuffer(2 * 16);
            for (int k = 0; k < 2; k++) {
                DoubleInt.Data d = MPI.doubleInt.getData(in, k);
                d.putValue(k == 0 ? vals[rank] : -vals[rank]);
                d.putIndex(rank);
            }
            world.allReduce(in, out, 2, MPI.DOUBLE_INT, MPI.MINLOC);
            DoubleInt.Data r0 = MPI.doubleInt.getData(out, 0), r1 = MPI.doubleInt.getData(out, 1);
            assertEquals(1.0, r0.getValue());
            assertEquals(1, r0.getIndex());    // ties: lowest index
            assertEquals(-7.0, r1.getValue());
            assertEquals(3, r1.getIndex());
            world.allReduce(in, out, 2, MPI.DOUBLE_INT, MPI.MAXLOC);
            assertEquals(7.0, MPI.doubleInt.<DoubleInt.Data>getData(out, 0).getValue());
            assertEquals(3, MPI.doubleInt.<DoubleInt.Data>getData(out, 0).getIndex());
            assertEquals(-1.0, MPI.doubleInt.<DoubleInt.Data>getData(out, 1).getValue());
            assertEquals(1, MPI.doubleInt.<DoubleInt.Data>getData(out, 1).getIndex());

            int[] pair = {10 - rank % 2, rank};
            int[] res = new int[2];
            world.allReduce(pair, res, 1, MPI.INT2, MPI.MAXLOC);
            assertArrayEquals(new int[] {10, 0}, res);
            ByteBuffer si = MPI.newByteBuffer(8), so = MPI.newByteBuffer(8);
            MPI.shortInt.<ShortInt.Data>getData(si).putValue((short) (rank * 3 % 4));
            MPI.shortInt.<ShortInt.Data>getData(si).putIndex(rank);
            world.reduce(si, so, 1, MPI.SHORT_INT, MPI.MINLOC, 0);
            if (rank == 0) {
                assertEquals(0, MPI.shortInt.<ShortInt.Data>getData(so).getValue());
                assertEquals(0, MPI.shortInt.<ShortInt.Data>getData(so).getIndex());
            }
        });
    }

    @Test
    void sendRecvReplaceAndMatchedReceivesTakeDerivedTypes() throws Exception {
        LocalJob.run(2, world -> {
            int rank = world.getRank(), peer = 1 - rank;
            Datatype v = committed(Datatype.createVector(3, 1, 2, MPI.LONG));
            long[] a = new long[6];
            for (int i = 0; i < 6; i++) a[i] = rank * 10 + i;
            Status s = world.sendRecvReplace(a, 1, v, peer, 1, peer, 1);
            assertEquals(1, s.getCount(v));
            for (int i = 0; i < 6; i++) assertEquals(i % 2 == 0 ? peer * 10 + i : rank * 10 + i, a[i], "a[" + i + "]");

            long[] b = new long[6];
            world.sendRecv(a, 1, v, peer, 2, b, 1, v, peer, 2);
            for (int i = 0; i < 6; i++) assertEquals(i % 2 == 0 ? rank * 10 + i : 0, b[i]);

            java.nio.LongBuffer d = MPI.newLongBuffer(6);
            if (rank == 0) {
                world.send(a, 1, v, 1, 3);
                world.send(a, 1, v, 1, 4);
            } else {
                Message m = new Message();
                m.mProbe(0, 3, world);
                long[] c = new long[6];
                m.mRecv(c, 1, v);
                assertEquals(12, c[2]);   // rank 0's a[2] after the exchange
                assertEquals(0, c[1]);
                m = new Message();
                m.mProbe(0, 4, world);
                Request r = m.imRecv(d, 1, v);
                Request.waitAll(new Request[] {r});
                assertEquals(12, d.get(2));
                assertEquals(0, d.get(1));
                assertEquals(14, d.get(4));
            }
        });
    }

    /**
     * createDarray: a 4 x 6 global int array in a 2 x 2 process grid (BLOCK, BLOCK); each rank
     * sends its 2 x 3 block contiguously and rank 0 receives each into the global array through
     * that rank's darray type; then a CYCLIC(2) 1-D distribution over 3 ranks against a reference.
     */
    @Test
    void darrayPlacesEachRanksBlocksInTheGlobalArray() throws Exception {
        LocalJob.run(4, world -> {
            int me = world.getRank();
            int[] gsizes = {4, 6}, psizes = {2, 2};
            int[] block = new int[6];
            int pr = me / 2, pc = me % 2;
            for (int i = 0; i < 2; i++) {
                for (int j = 0; j < 3; j++) block[i * 3 + j] = (pr * 2 + i) * 6 + pc * 3 + j;
            }
            Request s = world.iSend(ints(block), 6, MPI.INT, 0, 7);
            if (me == 0) {
                int[] global = new int[24];
                for (int r = 0; r < 4; r++) {
                    Datatype d = Datatype.createDarray(4, r, gsizes,
                            new int[] {MPI.DISTRIBUTE_BLOCK, MPI.DISTRIBUTE_BLOCK},
                            new int[] {MPI.DISTRIBUTE_DFLT_DARG, MPI.DISTRIBUTE_DFLT_DARG}, psizes, MPI.ORDER_C, MPI.INT);
                    d.commit();
                    assertEquals(6, d.getSize(), "six ints per rank");
                    assertEquals(24, d.getExtent(), "extent: the whole global array");
                    world.recv(global, 1, d, r, 7);
                    d.free();
                }
                for (int k = 0; k < 24; k++) assertEquals(k, global[k], "global element " + k);

                // 1-D CYCLIC(2) over 3 processes: rank r owns indices i with (i / 2) % 3 == r.
                for (int r = 0; r < 3; r++) {
                    Datatype c = Datatype.createDarray(3, r, new int[] {10}, new int[] {MPI.DISTRIBUTE_CYCLIC},
                            new int[] {2}, new int[] {3}, MPI.ORDER_C, MPI.INT);
                    c.commit();
                    int[] all = new int[10];
                    for (int i = 0; i < 10; i++) all[i] = 100 + i;
                    int[] packed = new int[c.getSize()];
                    world.sendRecv(all, 1, c, 0, 8, packed, packed.length, MPI.INT, 0, 8);
                    int k = 0;
                    for (int i = 0; i < 10; i++) if ((i / 2) % 3 == r) assertEquals(100 + i, packed[k++], "cyclic element " + i);
                    assertEquals(packed.length, k);
                    c.free();
                }
                MPIException e = assertThrows(MPIException.class, () -> Datatype.createDarray(1, 0, new int[] {4},
                        new int[] {7}, new int[] {MPI.DISTRIBUTE_DFLT_DARG}, new int[] {1}, MPI.ORDER_C, MPI.INT));
                assertEquals(MPI.ERR_ARG, e.getErrorClass());
                assertTrue(e.getMessage().contains("distribs[0]"), e.getMessage());
            }
            s.waitFor();
        });
    }

    private static java.nio.IntBuffer ints(int[] values) {
        java.nio.IntBuffer b = MPI.newIntBuffer(values.length);
        b.put(values).clear();
        return b;
    }

    /**
     * Messages of a non-dense type far above the eager limits and the fragment size go out and
     * come in a fragment at a time (no staging copy): every point-to-point form, receives posted
     * before and after the send (the rendezvous' inline part from the unexpected queue), a
     * truncated receive, and the same type on both ends in different shapes.
     */
    @Test
    void largeNonDenseMessagesStreamInEveryPointToPointForm() throws Exception {
        int n = 300_000; // 2.4 MB packed: several 512 KiB fragments after the inline part
        LocalJob.run(2, world -> {
            int me = world.getRank(), other = 1 - me;
            Datatype every2nd = committed(Datatype.createVector(n, 1, 2, MPI.DOUBLE));
            Datatype every3rd = committed(Datatype.createVector(n, 1, 3, MPI.DOUBLE));
            double[] src = new double[2 * n];
            for (int i = 0; i < src.length; i++) src[i] = me * 1e7 + i;
            // blocking, receive posted late (unexpected rendezvous) and early
            if (me == 0) {
                world.send(src, 1, every2nd, 1, 1);
                world.sSend(src, 1, every2nd, 1, 2);
            } else {
                assertEquals(n, world.probe(0, 1).getElements(MPI.DOUBLE)); // the RTS waits unexpected
                double[] dst = new double[3 * n];
                Status s = world.recv(dst, 1, every3rd, 0, 1);
                assertEquals(n, s.getElements(MPI.DOUBLE));
                for (int i = 0; i < n; i++) assertEquals(2.0 * i, dst[3 * i], "element " + i);
                assertEquals(0.0, dst[1]);
                java.util.Arrays.fill(dst, 0);
                world.recv(dst, 1, every3rd, 0, 2);
                for (int i = 0; i < n; i += 997) assertEquals(2.0 * i, dst[3 * i]);
            }
            // non-blocking and persistent, direct buffers, both directions at once
            java.nio.DoubleBuffer out = MPI.newDoubleBuffer(2 * n), in = MPI.newDoubleBuffer(2 * n);
            out.put(0, src);
            Request r = world.iRecv(in, 1, every2nd, other, 3);
            Request q = world.iSend(out, 1, every2nd, other, 3);
            Request.waitAll(new Request[] {r, q});
            for (int i = 0; i < n; i += 499) assertEquals(other * 1e7 + 2 * i, in.get(2 * i));
            assertEquals(0.0, in.get(1));
            Prequest ps = world.sendInit(out, 1, every2nd, other, 4);
            Prequest pr = world.recvInit(in, 1, every2nd, other, 4);
            for (int round = 0; round < 2; round++) {
                out.put(2 * (n - 1), round + 0.5);
                pr.start();
                ps.start();
                Request.waitAll(new Request[] {pr, ps});
                assertEquals(round + 0.5, in.get(2 * (n - 1)));
            }
            ps.free();
            pr.free();
            // sendRecv, and a receive too small for the message: ERR_TRUNCATE with the part that fits
            double[] got = new double[2 * n];
            world.sendRecv(src, 1, every2nd, other, 5, got, 1, every2nd, other, 5);
            assertEquals(other * 1e7 + 2 * (n - 1), got[2 * (n - 1)]);
            world.setErrhandler(MPI.ERRORS_RETURN);
            if (me == 0) {
                world.send(src, 1, every2nd, 1, 6);
            } else {
                Datatype half = committed(Datatype.createVector(n / 2, 1, 2, MPI.DOUBLE));
                double[] small = new double[n];
                MPIException e = assertThrows(MPIException.class, () -> world.recv(small, 1, half, 0, 6));
                assertEquals(MPI.ERR_TRUNCATE, e.getErrorClass());
                assertEquals(2.0 * (n / 2 - 1), small[2 * (n / 2 - 1)]);
                half.free();
            }
            every2nd.free();
            every3rd.free();
        });
    }
}
