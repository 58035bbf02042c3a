import java.nio.ByteBuffer;
import mpi.*;

/**
 * A program written for Open MPI's Java bindings: rank 0 sends one column of a row-major matrix
 * to every other rank with a vector datatype, and an array of records described by a Struct;
 * every rank checks what it got and the ranks agree on the result with MINLOC. Build and run
 * it unchanged:
 *   bin/mpijavac VectorStruct.java && bin/ftmpirun -np 4 java VectorStruct
 */
public class VectorStruct {
    static final int N = 8;

    /** A record: an int id, three doubles, a char. */
    static class Particle extends Struct {
        private final int id = addInt();
        private final int pos = addDouble(3);
        private final int kind = addChar();

        @Override
        protected Data newData() {
            return new Data();
        }

        class Data extends Struct.Data {
            int getId() { return getInt(id); }
            void setId(int v) { putInt(id, v); }
            double getPos(int i) { return getDouble(pos, i); }
            void setPos(int i, double v) { putDouble(pos, i, v); }
            char getKind() { return getChar(kind); }
            void setKind(char c) { putChar(kind, c); }
        }
    }

    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        int rank = MPI.COMM_WORLD.getRank();
        int size = MPI.COMM_WORLD.getSize();

        // one column of an N x N row-major matrix: N blocks of 1 double, N doubles apart
        Datatype column = Datatype.createVector(N, 1, N, MPI.DOUBLE);
        column.commit();
        Particle particle = new Particle();
        int records = 5;
        ByteBuffer buf = MPI.newByteBuffer(records * particle.getExtent());

        int errors = 0;
        if (rank == 0) {
            double[] matrix = new double[N * N];
            for (int i = 0; i < N * N; i++) matrix[i] = i;
            for (int k = 0; k < records; k++) {
                Particle.Data d = particle.getData(buf, k);
                d.setId(100 + k);
                d.setKind((char) ('A' + k));
                for (int i = 0; i < 3; i++) d.setPos(i, k + i / 10.0);
            }
            for (int dest = 1; dest < size; dest++) {
                int col = dest % N;
                MPI.COMM_WORLD.send(MPI.slice(matrix, col), 1, column, dest, 1);
                MPI.COMM_WORLD.send(buf, records, particle.getType(), dest, 2);
            }
        } else {
            int col = rank % N;
            double[] got = new double[N];
            Status s = MPI.COMM_WORLD.recv(got, N, MPI.DOUBLE, 0, 1);
            for (int i = 0; i < N; i++) {
                if (got[i] != i * N + col) errors++;
            }
            if (s.getCount(MPI.DOUBLE) != N) errors++;
            s = MPI.COMM_WORLD.recv(buf, records, particle.getType(), 0, 2);
            if (s.getCount(particle.getType()) != records) errors++;
            for (int k = 0; k < records; k++) {
                Particle.Data d = particle.getData(buf, k);
                if (d.getId() != 100 + k || d.getKind() != 'A' + k) errors++;
                for (int i = 0; i < 3; i++) {
                    if (d.getPos(i) != k + i / 10.0) errors++;
                }
            }
            System.out.println("rank " + rank + ": column " + col + " and " + records + " particles "
                    + (errors == 0 ? "OK" : "WRONG (" + errors + " errors)"));
        }

        // the rank with the most errors (lowest rank on ties), found with MAXLOC on DOUBLE_INT pairs
        ByteBuffer in = MPI.newByteBuffer(16), out = MPI.newByteBuffer(16);
        DoubleInt.Data mine = MPI.doubleInt.getData(in);
        mine.putValue(errors);
        mine.putIndex(rank);
        MPI.COMM_WORLD.allReduce(in, out, 1, MPI.DOUBLE_INT, MPI.MAXLOC);
        DoubleInt.Data worst = MPI.doubleInt.getData(out);
        if (rank == 0) {
            System.out.println(worst.getValue() == 0 ? "VectorStruct: all ranks OK"
                    : "VectorStruct: rank " + worst.getIndex() + " had " + (int) worst.getValue() + " errors");
        }
        column.free();
        MPI.Finalize();
    }
}
