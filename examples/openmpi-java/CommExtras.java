import java.nio.DoubleBuffer;
import mpi.*;

/**
 * A program written for Open MPI's Java bindings that uses the less common calls:
 * Intracomm.createGroup (only the even ranks take part), Intercomm.iDup, DoubleComplex views of a
 * DOUBLE_COMPLEX reduction, Status.setElementsX with Count, a large strided vector, and
 * Comm.callErrhandler. It ends by
 * calling the error handler under MPI.ERRORS_ARE_FATAL, which aborts the job (as intended).
 *   bin/mpijavac CommExtras.java && bin/ftmpirun -np 4 java CommExtras
 */
public class CommExtras {
    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        int rank = MPI.COMM_WORLD.getRank();
        int size = MPI.COMM_WORLD.getSize();
        int errors = 0;

        // the even ranks make a communicator of their own; the odd ranks do not call
        Group world = MPI.COMM_WORLD.getGroup();
        int[] evens = new int[(size + 1) / 2];
        for (int i = 0; i < evens.length; i++) evens[i] = 2 * i;
        Group evenGroup = world.incl(evens);
        if (rank % 2 == 0) {
            Intracomm even = MPI.COMM_WORLD.createGroup(evenGroup, 0);
            int[] sum = new int[1];
            even.allReduce(new int[] {rank}, sum, 1, MPI.INT, MPI.SUM);
            int expect = 0;
            for (int r : evens) expect += r;
            if (even.getSize() != evens.length || sum[0] != expect) errors++;
            even.free();
        }

        // an intercommunicator between the halves, duplicated without blocking
        Intracomm half = MPI.COMM_WORLD.split(rank % 2, rank);
        Intercomm inter = MPI.COMM_WORLD.createIntercomm(half, 0, rank % 2 == 0 ? 1 : 0, 11);
        Intercomm copy = inter.iDup();
        inter.barrier();
        copy.getRequest().waitFor();
        int[] other = new int[1];
        copy.allReduce(new int[] {rank}, other, 1, MPI.INT, MPI.SUM);
        int expectOther = 0;
        for (int r = 0; r < size; r++) if (r % 2 != rank % 2) expectOther += r;
        if (other[0] != expectOther) errors++;
        copy.free();
        inter.free();
        half.free();

        // complex numbers: each rank contributes (rank, -rank); the sum is read through DoubleComplex
        DoubleBuffer in = MPI.newDoubleBuffer(2), out = MPI.newDoubleBuffer(2);
        DoubleComplex mine = DoubleComplex.get(in);
        mine.putReal(rank);
        mine.putImag(-rank);
        MPI.COMM_WORLD.allReduce(in, out, 1, MPI.DOUBLE_COMPLEX, MPI.SUM);
        DoubleComplex total = DoubleComplex.get(out);
        double s = size * (size - 1) / 2.0;
        if (total.getReal() != s || total.getImag() != -s) errors++;

        // status setters with a large count
        Status st = MPI.COMM_WORLD.sendRecv(new int[] {rank}, 1, MPI.INT, rank, 1, new int[1], 1, MPI.INT, rank, 1);
        st.setElementsX(MPI.INT, new Count(5_000_000_000L));
        if (st.getElementsX(MPI.INT).getCount() != 5_000_000_000L || st.getElements(MPI.INT) != MPI.UNDEFINED) errors++;

        // a large strided vector (every other double, 2.4 MB packed) between ranks 0 and 1: the
        // engine packs and unpacks it a fragment at a time over the real transport
        int n = 300_000;
        Datatype every2nd = Datatype.createVector(n, 1, 2, MPI.DOUBLE);
        every2nd.commit();
        if (rank < 2) {
            double[] mineV = new double[2 * n], theirs = new double[2 * n];
            for (int i = 0; i < mineV.length; i++) mineV[i] = rank * 1e7 + i;
            MPI.COMM_WORLD.sendRecv(mineV, 1, every2nd, 1 - rank, 7, theirs, 1, every2nd, 1 - rank, 7);
            for (int i = 0; i < n; i++) {
                if (theirs[2 * i] != (1 - rank) * 1e7 + 2 * i || theirs[2 * i + 1] != 0) {
                    errors++;
                    break;
                }
            }
        }
        every2nd.free();

        // the error handler under ERRORS_RETURN returns
        MPI.COMM_WORLD.setErrhandler(MPI.ERRORS_RETURN);
        MPI.COMM_WORLD.callErrhandler(MPI.ERR_COMM);

        int[] allErrors = new int[1];
        MPI.COMM_WORLD.allReduce(new int[] {errors}, allErrors, 1, MPI.INT, MPI.SUM);
        if (rank == 0) System.out.println("CommExtras: " + (allErrors[0] == 0 ? "all ranks OK" : allErrors[0] + " errors"));
        System.out.flush();
        MPI.COMM_WORLD.barrier();

        // under ERRORS_ARE_FATAL the same call aborts the job
        MPI.COMM_WORLD.setErrhandler(MPI.ERRORS_ARE_FATAL);
        MPI.COMM_WORLD.callErrhandler(MPI.ERR_OTHER);
        System.out.println("CommExtras: rank " + rank + " survived ERRORS_ARE_FATAL");
        MPI.Finalize();
    }
}
