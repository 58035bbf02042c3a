package org.ftmpi.runtime.testprog;

import org.ftmpi.testutil.Await;
import java.time.Duration;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.ProcFailedException;
import mpi.RevokedException;

/**
 * MPI program for the recovery-mode-ignore system tests: after a barrier, rank {@code VICTIM}
 * kills itself with SIGKILL; the survivors see the failure, then shrink and allreduce. Modes:
 * {@code recv VICTIM} (survivors receive from the victim), {@code revoke VICTIM} (survivors are
 * inside an allreduce when the victim dies, then rank 0 revokes, all agree and shrink).
 */
public final class UlfmProbe {
    private UlfmProbe() {}

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        int victim = Integer.parseInt(args[1]);
        MPI.Init(args);
        Intracomm world = MPI.COMM_WORLD;
        world.setErrhandler(MPI.ERRORS_RETURN);
        int me = world.getRank();
        world.barrier();
        if (me == victim) {
            // dies while the others are inside the receive / allreduce below
            Await.after(Duration.ofMillis(mode.equals("recv") ? 300 : 600), Await::killSelf);
            Await.endedFromOutside();
        }
        if (mode.equals("recv")) {
            try {
                world.recv(new int[1], 1, MPI.INT, victim, 1);
                say("rank " + me + " recv from " + victim + " returned");
            } catch (ProcFailedException e) {
                say("rank " + me + " recv failed: class " + e.getErrorClass() + " failedRank " + e.getFailedRank());
            }
        } else {
            try {
                world.allReduce(new int[] {1}, new int[1], 1, MPI.INT, MPI.SUM);
                say("rank " + me + " allreduce returned");
            } catch (ProcFailedException | RevokedException e) {
                // Either is right: a member still inside the allreduce when rank 0's revoke
                // arrives sees REVOKED before it learns of the failure.
                say("rank " + me + " allreduce failed: class " + e.getErrorClass());
            }
            if (me == 0) world.revoke();
            Await.until("the revoke to arrive", Duration.ofSeconds(10), () -> isRevoked(world));
            try {
                world.send(new int[1], 1, MPI.INT, me, 5);
                say("rank " + me + " send on revoked returned");
            } catch (RevokedException e) {
                say("rank " + me + " revoked: class " + e.getErrorClass());
            } catch (MPIException e) {
                say("rank " + me + " send on revoked failed otherwise: " + e);
            }
            try {
                say("rank " + me + " unacknowledged agree returned " + world.agree(me == 3 ? 0 : 1));
            } catch (ProcFailedException e) {
                say("rank " + me + " unacknowledged agree raised class " + e.getErrorClass() + " flag " + e.getAgreedFlag());
            }
            world.ackFailed();
            say("rank " + me + " agree " + world.agree(me == 3 ? 0 : 1) + " failed " + world.getFailed().getSize());
        }
        Intracomm s = world.shrink();
        int[] sum = new int[1];
        s.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
        say("rank " + me + " shrunk size " + s.getSize() + " rank " + s.getRank() + " sum " + sum[0]);
        s.free();
        MPI.Finalize();
        say("rank " + me + " finalized");
    }

    private static boolean isRevoked(Intracomm world) {
        try {
            return world.isRevoked();
        } catch (MPIException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void say(String s) throws MPIException {
        System.out.println(s);
        System.out.flush();
    }
}
