package org.ftmpi.runtime.testprog;

import java.nio.IntBuffer;
import java.util.Arrays;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.ProcFailedException;

/**
 * MPI program for FT-MPI collective mode ATOMIC ({@code FtModesSystemTest}): np 4, comm-mode
 * SHRINK, recovery MANUAL, {@code --coll-mode atomic}. Fault-free collectives give the plain
 * results; then rank 2 dies instead of entering an allGather and a gather: every survivor raises
 * from each (also the senders of the gather, whose own part succeeded), and no receive buffer
 * changed (they start at -1); after the recovery the same calls succeed. The same for the
 * non-blocking forms (iBarrier, iAllReduce, iAllGather, iNeighborAllGather on a ring fault-free;
 * iAllGather and iNeighborAllGather with the victim dead: every survivor's request completes
 * with the error, its buffer untouched, also rank 0's, whose ring neighbours are alive). Output lines
 * start with {@code rank R}.
 */
public final class AtomicProbe {
    private AtomicProbe() {}

    private static final int VICTIM = 2;
    private static int me;

    public static void main(String[] args) throws Exception {
        Intracomm w = ProbeLines.init(args);
        me = w.getRank();
        int[] sum = new int[1], all = ProbeLines.filled(4), scan = new int[1];
        w.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
        w.allGather(new int[] {me + 10}, 1, MPI.INT, all, 1, MPI.INT);
        w.scan(new int[] {me + 1}, scan, 1, MPI.INT, MPI.SUM);
        say("fault-free sum " + sum[0] + " allgather " + Arrays.toString(all) + " scan " + scan[0]);
        w.iBarrier().waitFor();
        IntBuffer nbSum = ProbeLines.direct(1);
        w.iAllReduce(ProbeLines.direct(1).put(0, me), nbSum, 1, MPI.INT, MPI.SUM).waitFor();
        IntBuffer nbAll = ProbeLines.direct(4);
        w.iAllGather(ProbeLines.direct(1).put(0, me + 30), 1, MPI.INT, nbAll, 1, MPI.INT).waitFor();
        say("non-blocking ibarrier done iallreduce " + nbSum.get(0) + " iallgather " + ProbeLines.contents(nbAll));
        mpi.CartComm ring = w.createCart(new int[] {4}, new boolean[] {true}, false);
        IntBuffer nbr = ProbeLines.direct(2);
        ring.iNeighborAllGather(ProbeLines.direct(1).put(0, me + 40), 1, MPI.INT, nbr, 1, MPI.INT).waitFor();
        say("ineighborallgather " + ProbeLines.contents(nbr));
        ProbeLines.syncThenDie(w, me == VICTIM);
        IntBuffer iag = ProbeLines.direct(4);
        nonBlocking("iallgather", iag, () -> w.iAllGather(ProbeLines.direct(1).put(0, me + 30), 1, MPI.INT, iag, 1, MPI.INT));
        // rank 0's neighbours (3 and 1) are alive, yet ATOMIC makes its request fail with the others'
        IntBuffer inb = ProbeLines.direct(2);
        nonBlocking("ineighborallgather", inb, () -> ring.iNeighborAllGather(ProbeLines.direct(1).put(0, me + 40), 1, MPI.INT,
                inb, 1, MPI.INT));
        int[] ag = ProbeLines.filled(4);
        try {
            w.allGather(new int[] {me + 10}, 1, MPI.INT, ag, 1, MPI.INT);
            say("allgather returned " + Arrays.toString(ag));
        } catch (ProcFailedException e) {
            say("allgather raised, buffer " + Arrays.toString(ag));
        }
        int[] g = ProbeLines.filled(4);
        try {
            w.gather(new int[] {me + 20}, 1, MPI.INT, g, 1, MPI.INT, 0);
            say("gather returned");
        } catch (ProcFailedException e) {
            say("gather raised" + (me == 0 ? ", buffer " + Arrays.toString(g) : ""));
        }
        MPI.recover();
        int[] after = ProbeLines.filled(3);
        w.allGather(new int[] {me + 10}, 1, MPI.INT, after, 1, MPI.INT);
        say("after recovery allgather " + Arrays.toString(after));
        MPI.Finalize();
        say("finalized");
    }


    interface Start {
        mpi.Request start() throws MPIException;
    }

    /** Starts and waits for a non-blocking collective; says whether it returned or raised, and the buffer. */
    private static void nonBlocking(String name, IntBuffer buf, Start op) throws MPIException {
        try {
            op.start().waitFor();
            say(name + " returned " + ProbeLines.contents(buf));
        } catch (ProcFailedException e) {
            say(name + " raised, buffer " + ProbeLines.contents(buf));
        }
    }


    private static void say(String s) {
        ProbeLines.say(me, s);
    }
}
