package org.ftmpi.runtime.testprog;

import java.nio.IntBuffer;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.Prequest;
import mpi.ProcFailedException;
import mpi.Request;
import mpi.Status;

/**
 * MPI program for FT-MPI message mode CONT ({@code ContSystemTest}): np 4, comm-mode SHRINK,
 * recovery MANUAL, rank 1 kills itself after a barrier, so that ranks 2 and 3 become 1 and 2.
 * Before the failure the ranks send messages that are received only after the recovery, post
 * receives that match only messages sent after it, create persistent requests and a duplicate
 * communicator; after it they check that every operation that returned success completes, with
 * the senders' new ranks in the statuses, that a re-created duplicate gets the old one's context
 * id, that persistent requests follow the new ranks, that a pending receive from ANY_SOURCE is
 * reported, and the FTMPI_* attributes. Output lines start with {@code rank R} (the original rank).
 */
public final class ContProbe {
    private ContProbe() {}

    private static final int VICTIM = 1, BIG = 64 * 1024;
    private static int me;

    public static void main(String[] args) throws Exception {
        Intracomm world = ProbeLines.init(args);
        me = world.getRank();
        Intracomm dup = world.dup();
        IntBuffer pbuf = MPI.newIntBuffer(1);
        Prequest ps = me == 2 ? world.sendInit(pbuf, 1, MPI.INT, 3, 20) : null;
        Prequest pr = me == 3 ? world.recvInit(pbuf, 1, MPI.INT, 2, 20) : null;
        IntBuffer big = MPI.newIntBuffer(BIG);
        for (int i = 0; i < BIG; i++) big.put(i, i * 7);
        IntBuffer r8 = MPI.newIntBuffer(1), r9 = MPI.newIntBuffer(1);
        Request bigSend = null, req8 = null, req9 = null;
        if (me == 2) {
            world.send(new int[] {301}, 1, MPI.INT, 3, 5);       // received after the recovery
            bigSend = world.iSend(big, BIG, MPI.INT, 3, 6);       // rendezvous, completes after it
            dup.send(new int[] {404}, 1, MPI.INT, 3, 4);          // received on a re-created dup
        }
        if (me == 3) req8 = world.iRecv(r8, 1, MPI.INT, 0, 8);   // matched by a message sent after it
        if (me == 0) req9 = world.iRecv(r9, 1, MPI.INT, MPI.ANY_SOURCE, 9); // nobody sends: unresolvable
        ProbeLines.syncThenDie(world, me == VICTIM);

        // -------- the failure: detection, pending requests
        if (me == 0) { // a blocking receive interrupted (or refused) by the failure is taken back
            try {
                world.recv(new int[1], 1, MPI.INT, 3, 13);
                say("tag 13 returned before the recovery");
            } catch (ProcFailedException e) {
                say("blocking recv failed: class " + e.getErrorClass());
            }
        } else if (me == 2) { // a blocking rendezvous send: returns as buffered, or fails before it starts
            IntBuffer b2 = MPI.newIntBuffer(BIG);
            for (int i = 0; i < BIG; i++) b2.put(i, i * 3);
            boolean sent;
            try {
                world.send(b2, BIG, MPI.INT, 3, 14);
                sent = true;
            } catch (ProcFailedException e) {
                sent = false;
            }
            for (int i = 0; i < BIG; i++) b2.put(i, -1); // the caller may reuse its buffer
            System.err.println("ContProbe rank 2: blocking send tag 14 " + (sent ? "returned" : "failed"));
            MPI.recover();
            if (!sent) {
                for (int i = 0; i < BIG; i++) b2.put(i, i * 3);
                world.send(b2, BIG, MPI.INT, 2, 14); // repeated after the recovery (process 3 is rank 2 now)
            }
        } else {
            try {
                world.recv(new int[1], 1, MPI.INT, VICTIM, 1);
            } catch (ProcFailedException e) {
                say("recv from victim failed");
            }
            try {
                req8.test();
                say("test returned");
            } catch (ProcFailedException e) {
                say("test interrupted pending " + e.isPending());
            }
        }
        MPI.recover();

        // -------- after the recovery (ranks: 0 -> 0, 2 -> 1, 3 -> 2)
        int code = (Integer) world.getAttr(MPI.FTMPI_ERROR_FAILURE);
        say("attrs recovery " + world.getAttr(MPI.FTMPI_RECOVERY_MODE) + " comm " + world.getAttr(MPI.FTMPI_COMM_MODE)
                + " msg " + world.getAttr(MPI.FTMPI_MSG_MODE) + " coll " + world.getAttr(MPI.FTMPI_COLL_MODE)
                + " failed " + MPI.COMM_SELF.getAttr(MPI.FTMPI_NUM_FAILED_PROCS) + " class " + MPI.getErrorClass(code)
                + " '" + MPI.getErrorString(code) + "'");
        if (me == 3) {
            int[] got = new int[1];
            Status s = world.recv(got, 1, MPI.INT, 1, 5);
            say("tag 5 got " + got[0] + " from " + s.getSource());
            IntBuffer in = MPI.newIntBuffer(BIG);
            s = world.recv(in, BIG, MPI.INT, 1, 6);
            say("tag 6 " + check(in, 7) + " from " + s.getSource());
            in = MPI.newIntBuffer(BIG);
            s = world.recv(in, BIG, MPI.INT, 1, 14);
            say("tag 14 " + check(in, 3) + " from " + s.getSource());
            s = req8.waitStatus();
            say("tag 8 got " + r8.get(0) + " from " + s.getSource());
            pr.start();
            s = pr.waitStatus();
            say("persistent got " + pbuf.get(0) + " from " + s.getSource());
        }
        if (me == 2) {
            bigSend.waitFor();
            say("isend tag 6 done");
            pbuf.put(0, 2020);
            ps.start();
            ps.waitFor();
        }
        if (me == 0) {
            world.send(new int[] {808}, 1, MPI.INT, 2, 8); // to process 3, rank 2 now
            Request[] open = MPI.getUnresolvedRequests();
            boolean same = open.length == 1 && open[0] == req9;
            req9.cancel();
            Status s = req9.waitStatus();
            say("unresolved " + open.length + " same " + same + " cancelled " + s.isCancelled());
        }
        Intracomm again = world.dup(); // re-created in the same order: the old dup's context id
        if (me == 3) {
            int[] got = new int[1];
            Status s = again.recv(got, 1, MPI.INT, 1, 4);
            say("dup tag 4 got " + got[0] + " from " + s.getSource());
        }
        try {
            dup.barrier();
            say("old dup barrier returned");
        } catch (MPIException e) {
            say("old dup class " + e.getErrorClass());
        }
        dup.free();
        if (me == 3) {
            world.send(new int[] {1301}, 1, MPI.INT, 0, 13);
            world.send(new int[] {1302}, 1, MPI.INT, 0, 13);
        }
        if (me == 0) {
            int[] a = new int[1], b = new int[1];
            world.recv(a, 1, MPI.INT, 2, 13);
            world.recv(b, 1, MPI.INT, 2, 13);
            say("tag 13 got " + a[0] + " " + b[0]);
        }
        int[] sum = new int[1];
        again.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
        say("sum " + sum[0]);
        MPI.Finalize();
        say("finalized");
    }

    private static String check(IntBuffer in, int factor) {
        for (int i = 0; i < BIG; i++) if (in.get(i) != i * factor) return "bad at " + i + ": " + in.get(i);
        return "ok";
    }

    private static void say(String s) {
        ProbeLines.say(me, s);
    }
}
