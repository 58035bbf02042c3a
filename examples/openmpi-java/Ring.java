import mpi.*;

/**
 * A program written for Open MPI's Java bindings: a counter goes around the ring of ranks ten
 * times, rank 0 decrementing it on each pass. Build and run it unchanged:
 *   bin/mpijavac Ring.java && bin/ftmpirun -np 4 java Ring
 */
public class Ring {
    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        int rank = MPI.COMM_WORLD.getRank();
        int size = MPI.COMM_WORLD.getSize();
        int next = (rank + 1) % size;
        int prev = (rank + size - 1) % size;
        int[] message = new int[1];
        if (rank == 0) {
            message[0] = 10;
            MPI.COMM_WORLD.send(message, 1, MPI.INT, next, 201);
        }
        while (true) {
            MPI.COMM_WORLD.recv(message, 1, MPI.INT, prev, 201);
            if (rank == 0) {
                message[0]--;
                System.out.println("Process 0 decremented value: " + message[0]);
            }
            MPI.COMM_WORLD.send(message, 1, MPI.INT, next, 201);
            if (message[0] == 0) {
                System.out.println("Process " + rank + " exiting");
                break;
            }
        }
        if (rank == 0) {
            MPI.COMM_WORLD.recv(message, 1, MPI.INT, prev, 201);
        }
        MPI.Finalize();
    }
}
