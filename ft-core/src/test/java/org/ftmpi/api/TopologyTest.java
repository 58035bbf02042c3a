package org.ftmpi.api;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.IntBuffer;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import mpi.*;
import org.ftmpi.LocalJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Cartesian, graph and distributed-graph topologies and the neighbour collectives over them. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TopologyTest {

    static int[] dims(int n, int... d) throws MPIException {
        CartComm.createDims(n, d);
        return d;
    }

    @Test
    void createDimsFollowsTheStandardsExamples() throws Exception {
        assertArrayEquals(new int[] {3, 2}, dims(6, 0, 0));
        assertArrayEquals(new int[] {7, 1}, dims(7, 0, 0));
        assertArrayEquals(new int[] {2, 3, 1}, dims(6, 0, 3, 0));
        MPIException e = assertThrows(MPIException.class, () -> dims(7, 0, 3, 0));
        assertEquals(MPI.ERR_DIMS, e.getErrorClass());
        assertArrayEquals(new int[] {4, 3}, dims(12, 0, 0));
        assertArrayEquals(new int[] {4, 2, 2}, dims(16, 0, 0, 0));
        assertArrayEquals(new int[] {1}, dims(1, 0));
        assertEquals(MPI.ERR_DIMS, assertThrows(MPIException.class, () -> dims(0, 0)).getErrorClass());
        assertEquals(MPI.ERR_DIMS, assertThrows(MPIException.class, () -> dims(4, -1, 0)).getErrorClass());
    }

    /** Sequential model of the grid: rank of coords with wrap, or PROC_NULL. */
    static int at(int[] dims, boolean[] per, int[] c) {
        int r = 0;
        for (int i = 0; i < dims.length; i++) {
            int x = c[i];
            if (x < 0 || x >= dims[i]) {
                if (!per[i]) return MPI.PROC_NULL;
                x = Math.floorMod(x, dims[i]);
            }
            r = r * dims[i] + x;
        }
        return r;
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8})
    void cartesianShiftsCoordsAndNeighbourCollectives(int n) throws Exception {
        LocalJob.run(n, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int me = world.getRank();
            assertEquals(MPI.UNDEFINED, world.getTopology());
            for (boolean[] per : new boolean[][] {{false, false}, {true, false}, {true, true}}) {
                int[] d = dims(n, 0, 0);
                CartComm cart = world.createCart(d, per, false);
                assertEquals(MPI.CART, cart.getTopology());
                CartParms p = cart.getTopo();
                assertEquals(2, p.getDimCount());
                int[] c = cart.getCoords(me);
                assertArrayEquals(new int[] {me / d[1], me % d[1]}, c);
                assertEquals(c[0], p.getCoord(0));
                assertEquals(me, cart.getRank(c));
                for (int dir = 0; dir < 2; dir++) {
                    for (int disp : new int[] {1, -1, 2}) {
                        ShiftParms s = cart.shift(dir, disp);
                        int[] up = c.clone(), down = c.clone();
                        up[dir] += disp;
                        down[dir] -= disp;
                        assertEquals(at(d, per, up), s.getRankDest(), "dest dir " + dir + " disp " + disp);
                        assertEquals(at(d, per, down), s.getRankSource(), "source dir " + dir + " disp " + disp);
                    }
                }
                // Neighbour allgather: block 2d from the lower neighbour, 2d+1 from the upper one.
                int[] got = new int[4];
                Arrays.fill(got, -1);
                cart.neighborAllGather(new int[] {me}, 1, MPI.INT, got, 1, MPI.INT);
                int[] expect = new int[4];
                for (int dir = 0; dir < 2; dir++) {
                    int[] lo = c.clone(), hi = c.clone();
                    lo[dir]--;
                    hi[dir]++;
                    expect[2 * dir] = Math.max(at(d, per, lo), -1);
                    expect[2 * dir + 1] = Math.max(at(d, per, hi), -1);
                }
                assertArrayEquals(expect, got, "neighborAllGather " + Arrays.toString(d) + Arrays.toString(per));
                // Neighbour all-to-all: I send 100*me + k to neighbour k; block 2d from the lower
                // neighbour is what it sent upwards (its block 2d+1).
                int[] send = {100 * me, 100 * me + 1, 100 * me + 2, 100 * me + 3};
                int[] recv = new int[4];
                Arrays.fill(recv, -1);
                cart.neighborAllToAll(send, 1, MPI.INT, recv, 1, MPI.INT);
                IntBuffer nbSend = MPI.newIntBuffer(4), nbRecv = MPI.newIntBuffer(4);
                for (int k = 0; k < 4; k++) {
                    nbSend.put(k, send[k]);
                    nbRecv.put(k, -1);
                }
                Request r = cart.iNeighborAllToAll(nbSend, 1, MPI.INT, nbRecv, 1, MPI.INT);
                r.waitFor();
                for (int k = 0; k < 4; k++) {
                    int from = expect[k];
                    int want = from < 0 ? -1 : 100 * from + (k ^ 1);
                    assertEquals(want, recv[k], "neighborAllToAll block " + k);
                    assertEquals(want, nbRecv.get(k), "iNeighborAllToAll block " + k);
                }
                CartComm dup = cart.dup();
                assertEquals(MPI.CART, dup.getTopology());
                dup.free();
                cart.free();
            }
        });
    }

    @Test
    void cartSubGridsRanksBeyondTheGridAndErrors() throws Exception {
        LocalJob.run(7, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int me = world.getRank();
            CartComm cart = world.createCart(new int[] {2, 3}, new boolean[] {false, true}, true);
            if (me == 6) {
                assertNull(cart);
                assertNull(world.createCart(new int[] {2, 3}, new boolean[2], false));
                return;
            }
            CartComm again = world.createCart(new int[] {2, 3}, new boolean[2], false);
            again.free();
            assertEquals(0, cart.getRank(new int[] {0, 3}));    // periodic dimension wraps
            MPIException e = assertThrows(MPIException.class, () -> cart.getRank(new int[] {2, 0}));
            assertEquals(MPI.ERR_ARG, e.getErrorClass());
            assertEquals(MPI.ERR_DIMS, assertThrows(MPIException.class, () -> cart.shift(2, 1)).getErrorClass());
            assertEquals(MPI.ERR_RANK, assertThrows(MPIException.class, () -> cart.getCoords(6)).getErrorClass());
            assertEquals(me < 4 ? me : MPI.UNDEFINED, cart.map(new int[] {2, 2}, new boolean[2]));
            // Rows: keep dimension 1.
            CartComm row = cart.sub(new boolean[] {false, true});
            assertEquals(3, row.getSize());
            assertEquals(me % 3, row.getRank());
            CartParms rp = row.getTopo();
            assertEquals(1, rp.getDimCount());
            assertTrue(rp.getPeriod(0));
            int[] members = new int[3];
            row.allGather(new int[] {me}, 1, MPI.INT, members, 1, MPI.INT);
            int base = me / 3 * 3;
            assertArrayEquals(new int[] {base, base + 1, base + 2}, members);
            CartComm none = cart.sub(new boolean[] {false, false});
            assertEquals(1, none.getSize());
            assertEquals(0, none.getTopo().getDimCount());
            row.free();
            none.free();
            cart.free();
            // Grid errors.
            assertEquals(MPI.ERR_DIMS, assertThrows(MPIException.class,
                    () -> world.createCart(new int[] {4, 2}, new boolean[2], false)).getErrorClass());
            assertEquals(MPI.ERR_DIMS, assertThrows(MPIException.class,
                    () -> world.createCart(new int[] {0, 2}, new boolean[2], false)).getErrorClass());
            MPIException pe = assertThrows(MPIException.class,
                    () -> world.createCart(new int[] {2, 2}, new boolean[1], false));
            assertEquals(MPI.ERR_ARG, pe.getErrorClass());
            assertTrue(pe.getMessage().contains("periods"), pe.getMessage());
            // Neighbour collectives need a topology.
            MPIException te = assertThrows(MPIException.class,
                    () -> world.neighborAllGather(new int[1], 1, MPI.INT, new int[1], 1, MPI.INT));
            assertEquals(MPI.ERR_TOPOLOGY, te.getErrorClass());
        });
    }

    @Test
    void graphTopologyNeighboursAndCollectives() throws Exception {
        LocalJob.run(5, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int me = world.getRank();
            // The standard's example: 4 nodes, 0-1, 0-3, 1-0, 2-3, 3-0, 3-2 (rank 4 is left out).
            int[] index = {2, 3, 4, 6};
            int[] edges = {1, 3, 0, 3, 0, 2};
            GraphComm g = world.createGraph(index, edges, false);
            if (me == 4) {
                assertNull(g);
                return;
            }
            assertEquals(MPI.GRAPH, g.getTopology());
            GraphParms gp = g.getDims();
            assertEquals(4, gp.getIndexCount());
            assertEquals(6, gp.getEdgeCount());
            assertArrayEquals(new int[] {1, 3}, g.getNeighbors(0));
            assertArrayEquals(new int[] {0, 2}, g.getNeighbors(3));
            assertEquals(MPI.ERR_TOPOLOGY, assertThrows(MPIException.class, g::getDistGraphNeighbors).getErrorClass());
            int[] mine = g.getNeighbors(me);
            int[] got = new int[mine.length];
            g.neighborAllGather(new int[] {10 * me}, 1, MPI.INT, got, 1, MPI.INT);
            for (int i = 0; i < mine.length; i++) assertEquals(10 * mine[i], got[i]);
            // allGatherv with reversed displacements
            int[] cnt = new int[mine.length], dis = new int[mine.length];
            for (int i = 0; i < mine.length; i++) {
                cnt[i] = 1;
                dis[i] = mine.length - 1 - i;
            }
            int[] gv = new int[mine.length];
            g.neighborAllGatherv(new int[] {7 + me}, 1, MPI.INT, gv, cnt, dis, MPI.INT);
            for (int i = 0; i < mine.length; i++) assertEquals(7 + mine[i], gv[dis[i]]);
            g.free();
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 3, 6})
    void distributedGraphsFromEdgesAndAdjacency(int n) throws Exception {
        LocalJob.run(n, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int me = world.getRank();
            // Ring with a chord: edges r -> r+1 and r -> r+2; rank 0 names all edges.
            int[] sources = me == 0 ? new int[n] : new int[0];
            int[] degrees = me == 0 ? new int[n] : new int[0];
            int[] dests = me == 0 ? new int[2 * n] : new int[0];
            int[] weights = me == 0 ? new int[2 * n] : new int[0];
            if (me == 0) {
                for (int r = 0; r < n; r++) {
                    sources[r] = r;
                    degrees[r] = 2;
                    dests[2 * r] = (r + 1) % n;
                    dests[2 * r + 1] = (r + 2) % n;
                    weights[2 * r] = 1;
                    weights[2 * r + 1] = 5;
                }
            }
            GraphComm dg = world.createDistGraph(sources, degrees, dests, weights, MPI.INFO_NULL, false);
            assertEquals(MPI.DIST_GRAPH, dg.getTopology());
            DistGraphNeighbors nb = dg.getDistGraphNeighbors();
            assertTrue(nb.isWeighted());
            assertEquals(2, nb.getInDegree());
            assertEquals(2, nb.getOutDegree());
            int[] in = {nb.getSource(0), nb.getSource(1)};
            int[] inW = {nb.getSourceWeight(0), nb.getSourceWeight(1)};
            int[] sortedIn = in.clone();
            Arrays.sort(sortedIn);
            int[] expIn = {Math.floorMod(me - 1, n), Math.floorMod(me - 2, n)};
            Arrays.sort(expIn);
            assertArrayEquals(expIn, sortedIn);
            if (n > 2) for (int i = 0; i < 2; i++) assertEquals(in[i] == Math.floorMod(me - 1, n) ? 1 : 5, inW[i]);
            assertEquals(MPI.ERR_TOPOLOGY, assertThrows(MPIException.class, dg::getDims).getErrorClass());
            // Neighbour all-to-all over the dist graph: each block says who sent it.
            int[] send = new int[2];
            for (int i = 0; i < 2; i++) send[i] = 1000 * me + nb.getDestination(i);
            int[] recv = new int[2];
            dg.neighborAllToAll(send, 1, MPI.INT, recv, 1, MPI.INT);
            for (int i = 0; i < 2; i++) assertEquals(1000 * in[i] + me, recv[i]);
            dg.free();

            // The same ring, given as adjacency, unweighted; and an iNeighborAllGather on it.
            int[] srcs = {Math.floorMod(me - 1, n)}, dsts = {(me + 1) % n};
            GraphComm adj = world.createDistGraphAdjacent(srcs, dsts, MPI.INFO_NULL, false);
            DistGraphNeighbors an = adj.getDistGraphNeighbors();
            assertFalse(an.isWeighted());
            assertEquals(srcs[0], an.getSource(0));
            IntBuffer sb = MPI.newIntBuffer(1), rb = MPI.newIntBuffer(1);
            sb.put(0, 42 + me);
            adj.iNeighborAllGather(sb, 1, MPI.INT, rb, 1, MPI.INT).waitFor();
            assertEquals(42 + srcs[0], rb.get(0));
            adj.free();
        });
    }

    @Test
    void infoAndSplitType() throws Exception {
        LocalJob.run(4, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            Info info = new Info();
            info.set("a", "1");
            info.set("b", "2");
            info.set("a", "3");
            assertEquals(2, info.size());
            assertEquals("a", info.getKey(0));
            assertEquals("3", info.get("a"));
            assertNull(info.get("zz"));
            Info copy = info.dup();
            info.delete("a");
            assertEquals(1, info.size());
            assertEquals(2, copy.size());
            assertEquals(MPI.ERR_INFO_NOKEY, assertThrows(MPIException.class, () -> info.delete("a")).getErrorClass());
            assertEquals(MPI.ERR_INFO_KEY, assertThrows(MPIException.class,
                    () -> info.set("k".repeat(MPI.MAX_INFO_KEY + 1), "v")).getErrorClass());
            Intracomm d = world.dupWithInfo(copy);
            assertEquals("3", d.getInfo().get("a"));
            Intracomm dd = d.dup();
            assertEquals("2", dd.getInfo().get("b"));
            world.setInfo(MPI.INFO_NULL);
            assertEquals(0, world.getInfo().size());
            info.free();
            assertTrue(info.isNull());
            assertTrue(MPI.INFO_NULL.isNull());
            assertNotNull(MPI.INFO_ENV.get("host"));
            // All ranks of a LocalJob share one host.
            Intracomm shared = world.splitType(MPI.COMM_TYPE_SHARED, -world.getRank(), MPI.INFO_NULL);
            assertEquals(4, shared.getSize());
            assertEquals(3 - world.getRank(), shared.getRank());
            assertNull(world.splitType(MPI.UNDEFINED, 0, MPI.INFO_NULL));
            assertEquals(MPI.ERR_ARG, assertThrows(MPIException.class,
                    () -> world.splitType(12345, 0, MPI.INFO_NULL)).getErrorClass());
            shared.free();
            d.free();
            dd.free();
        });
    }
}
