import java.nio.DoubleBuffer;
import mpi.*;

/** Ping-pong of doubles between pairs of ranks with iSend/iRecv/waitAll (Open MPI Java API). */
public class PingPong {
    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        int rank = MPI.COMM_WORLD.getRank();
        int size = MPI.COMM_WORLD.getSize();
        int peer = rank ^ 1;
        if (peer >= size) {
            MPI.Finalize();
            return;
        }
        DoubleBuffer out = MPI.newDoubleBuffer(1000);
        DoubleBuffer in = MPI.newDoubleBuffer(1000);
        for (int round = 0; round < 100; round++) {
            for (int i = 0; i < 1000; i++) out.put(i, rank * 1e6 + round * 1000 + i);
            Request[] r = {
                MPI.COMM_WORLD.iRecv(in, 1000, MPI.DOUBLE, peer, round),
                MPI.COMM_WORLD.iSend(out, 1000, MPI.DOUBLE, peer, round)
            };
            Request.waitAll(r);
            for (int i = 0; i < 1000; i++) {
                if (in.get(i) != peer * 1e6 + round * 1000 + i) {
                    System.out.println("rank " + rank + ": wrong value at round " + round);
                    MPI.COMM_WORLD.abort(3);
                }
            }
        }
        System.out.println("rank " + rank + ": 100 ping-pong rounds with rank " + peer + " OK");
        MPI.Finalize();
    }
}
