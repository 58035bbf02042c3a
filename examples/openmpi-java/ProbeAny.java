import mpi.*;

/** Rank 0 receives messages of unknown length from any rank, sizing them with probe. */
public class ProbeAny {
    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        int rank = MPI.COMM_WORLD.getRank();
        int size = MPI.COMM_WORLD.getSize();
        if (rank == 0) {
            int total = 0;
            for (int i = 1; i < size; i++) {
                Status s = MPI.COMM_WORLD.probe(MPI.ANY_SOURCE, MPI.ANY_TAG);
                int n = s.getCount(MPI.LONG);
                long[] data = new long[n];
                MPI.COMM_WORLD.recv(data, n, MPI.LONG, s.getSource(), s.getTag());
                total += n;
                System.out.println("received " + n + " longs from rank " + s.getSource() + " tag " + s.getTag());
            }
            System.out.println("total " + total);
        } else {
            long[] data = new long[rank * 1000];
            MPI.COMM_WORLD.send(data, data.length, MPI.LONG, 0, rank + 100);
        }
        MPI.Finalize();
    }
}
