package org.ftmpi.examples;

import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.List;
import mpi.MPI;
import mpi.MPIException;
import mpi.Request;
import mpi.Status;

/**
 * The first job a user runs ({@code bin/ftmpirun -np 4 org.ftmpi.examples.HelloExchange}):
 * every rank exchanges messages with every other rank in several ways and checks what it
 * receives; rank 0 prints what the job verified. Exits non-zero if anything is wrong.
 */
public final class HelloExchange {
    private HelloExchange() {}

    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        int rank = MPI.COMM_WORLD.getRank();
        int size = MPI.COMM_WORLD.getSize();
        List<String> verified = new ArrayList<>();
        int errors = 0;

        // 1. A token goes once around the ring; each rank adds its rank.
        int[] token = new int[1];
        int right = (rank + 1) % size;
        int left = (rank - 1 + size) % size;
        if (size > 1) {
            if (rank == 0) {
                MPI.COMM_WORLD.send(token, 1, MPI.INT, right, 1);
                MPI.COMM_WORLD.recv(token, 1, MPI.INT, left, 1);
                int expect = size * (size - 1) / 2;
                errors += check(token[0] == expect, "ring token " + token[0] + " != " + expect);
                verified.add("ring: token visited all " + size + " ranks (sum " + token[0] + ")");
            } else {
                MPI.COMM_WORLD.recv(token, 1, MPI.INT, left, 1);
                token[0] += rank;
                MPI.COMM_WORLD.send(token, 1, MPI.INT, right, 1);
            }
        }

        // 2. All pairs at once with non-blocking calls: every rank sends its rank to every rank.
        IntBuffer[] in = new IntBuffer[size];
        IntBuffer out = MPI.newIntBuffer(1).put(0, rank);
        Request[] reqs = new Request[2 * size];
        for (int p = 0; p < size; p++) {
            in[p] = MPI.newIntBuffer(1);
            reqs[p] = MPI.COMM_WORLD.iRecv(in[p], 1, MPI.INT, p, 2);
            reqs[size + p] = MPI.COMM_WORLD.iSend(out, 1, MPI.INT, p, 2);
        }
        Request.waitAll(reqs);
        for (int p = 0; p < size; p++) errors += check(in[p].get(0) == p, "all-pairs from " + p);
        verified.add("all-pairs: iSend/iRecv/waitAll between every pair of " + size + " ranks");

        // 3. Wildcard receives: rank 0 collects one greeting from every other rank in any order.
        if (rank == 0) {
            boolean[] seen = new boolean[size];
            for (int i = 1; i < size; i++) {
                Status s = MPI.COMM_WORLD.probe(MPI.ANY_SOURCE, 3);
                char[] msg = new char[s.getCount(MPI.CHAR)];
                MPI.COMM_WORLD.recv(msg, msg.length, MPI.CHAR, s.getSource(), 3);
                errors += check(new String(msg).equals("hello from " + s.getSource()), "greeting " + new String(msg));
                seen[s.getSource()] = true;
            }
            if (size > 1) verified.add("probe + ANY_SOURCE + sSend: greetings from ranks 1.." + (size - 1));
        } else {
            char[] msg = ("hello from " + rank).toCharArray();
            MPI.COMM_WORLD.sSend(msg, msg.length, MPI.CHAR, 0, 3);
        }

        // 4. A large message (rendezvous protocol): 4 MiB from each rank to its right neighbour.
        int n = 1 << 20;
        ByteBuffer big = MPI.newByteBuffer(4 * n);
        ByteBuffer got = MPI.newByteBuffer(4 * n);
        for (int i = 0; i < n; i++) big.putInt(4 * i, rank * 31 + i);
        Request r = MPI.COMM_WORLD.iRecv(got, 4 * n, MPI.BYTE, left, 4);
        MPI.COMM_WORLD.send(big, 4 * n, MPI.BYTE, right, 4);
        r.waitFor();
        int bad = 0;
        for (int i = 0; i < n; i++) if (got.getInt(4 * i) != left * 31 + i) bad++;
        errors += check(bad == 0, bad + " corrupt ints in the 4 MiB message");
        verified.add("4 MiB message to the right neighbour arrived intact");

        int[] total = {errors};
        if (rank != 0) {
            MPI.COMM_WORLD.send(total, 1, MPI.INT, 0, 5);
        } else {
            for (int p = 1; p < size; p++) {
                int[] e = new int[1];
                MPI.COMM_WORLD.recv(e, 1, MPI.INT, p, 5);
                total[0] += e[0];
            }
            System.out.println("FT-MPI/J HelloExchange on " + size + " ranks ("
                    + MPI.getProcessorName() + "):");
            for (String v : verified) System.out.println("  verified " + v);
            System.out.println(total[0] == 0 ? "OK: all checks passed on every rank"
                    : "FAILED: " + total[0] + " checks failed");
        }
        MPI.Finalize();
        if (total[0] != 0) System.exit(1);
    }

    private static int check(boolean ok, String what) {
        if (!ok) System.err.println("check failed: " + what);
        return ok ? 0 : 1;
    }
}
