package org.ftmpi.runtime.testprog;

import org.ftmpi.testutil.Await;
import java.util.ArrayList;
import java.util.List;
import mpi.Group;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.Message;
import mpi.Prequest;
import mpi.ProcFailedException;
import mpi.Request;
import mpi.RevokedException;

/**
 * MPI program for {@code FaultMatrixSystemTest} (run under {@code --recovery-mode ignore
 * --opt ulfm-error-classes=true}). Every line it prints starts with {@code rank R}; the test
 * reads them. Scenarios (first argument):
 * <ul>
 * <li>{@code p2p}: the last rank dies (SIGKILL by {@code --inject at-call=N+1} for N ranks,
 *     i.e. entering its first call after every survivor told it that it left the barrier) while the survivors have every kind of point-to-point
 *     operation posted to it and each is blocked in a different blocking one; then every
 *     operation type against the dead rank, the ANY_SOURCE rule on every wait/test/probe form,
 *     every collective with the dead rank as root and as non-root, agree before and after
 *     acknowledging, shrink, an allreduce on the shrunk communicator and MPI.Finalize.</li>
 * <li>{@code coll C1,C2,...}: for each collective, first its root, then a non-root member
 *     SIGKILLs itself on entering it while the others are inside; the survivors report how the
 *     collective ended, acknowledge, shrink and go on.</li>
 * <li>{@code loop ITERS}: allreduce loop; ranks killed by {@code --inject at-call=N} at random
 *     points; after each iteration the members agree whether it succeeded everywhere, and on a
 *     failure acknowledge, shrink and redo it; every agreed sum is checked.</li>
 * <li>{@code agree}: fixed call sequence barrier, agree, agree, agree, shrink, allreduce; the
 *     test kills the coordinator (rank 0) entering call 3 and rank 2 entering the shrink.</li>
 * </ul>
 */
public final class FaultMatrixProbe {
    private FaultMatrixProbe() {}

    private static int me;

    interface Op {
        void run() throws MPIException;
    }

    public static void main(String[] args) throws Exception {
        MPI.Init(args);
        Intracomm world = MPI.COMM_WORLD;
        world.setErrhandler(MPI.ERRORS_RETURN);
        me = world.getRank();
        switch (args[0]) {
            case "p2p" -> p2p(world);
            case "coll" -> colls(world, args[1].split(","));
            case "loop" -> loop(world, Integer.parseInt(args[1]));
            case "agree" -> agree(world);
            default -> throw new IllegalArgumentException(args[0]);
        }
        MPI.Finalize();
        say("finalized");
    }

    static void say(String s) {
        System.out.println("rank " + me + " " + s);
        System.out.flush();
    }

    /** Runs op and prints "label ok" or "label class C[ pending]". */
    static void expect(String label, Op op) {
        try {
            op.run();
            say(label + " ok");
        } catch (ProcFailedException e) {
            say(label + " class " + e.getErrorClass() + (e.isPending() ? " pending" : "") + " failedRank "
                    + e.getFailedRank());
        } catch (MPIException e) {
            say(label + " class " + e.getErrorClass() + " other " + e.getMessage());
        }
    }

    static void dieNow() {
        Await.killSelf();
    }

    // ------------------------------------------------------------------ p2p

    static void p2p(Intracomm world) throws Exception {
        int n = world.getSize(), v = n - 1;
        world.barrier(); // call 1 of every rank
        // The victim dies only once every survivor has left the barrier: were it killed on
        // leaving the barrier itself, its death notice could overtake the barrier's last
        // message at a survivor, whose barrier would then (rightly) fail.
        if (me == v) {
            for (int i = 0; i < n - 1; i++) world.recv(new int[1], 1, MPI.INT, MPI.ANY_SOURCE, 98); // calls 2..n
            world.recv(new int[1], 1, MPI.INT, 0, 99); // call n + 1: --inject at-call=N+1 kills it here
            say("victim survived");
            return;
        }
        world.send(new int[] {me}, 1, MPI.INT, v, 98); // eager: completes whether or not the victim lives
        int big = 1 << 20;
        // Posted to the victim as it dies: every non-blocking kind, persistent ones included.
        Request[] posted = {
                world.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, v, 1),
                world.iSend(MPI.newByteBuffer(big), big, MPI.BYTE, v, 2),
                world.isSend(MPI.newIntBuffer(1), 1, MPI.INT, v, 3),
                world.recvInit(MPI.newIntBuffer(1), 1, MPI.INT, v, 4),
                world.sendInit(MPI.newByteBuffer(big), big, MPI.BYTE, v, 5),
        };
        ((Prequest) posted[3]).start();
        ((Prequest) posted[4]).start();
        Request any = world.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, MPI.ANY_SOURCE, 9);
        Prequest anyP = world.recvInit(MPI.newIntBuffer(1), 1, MPI.INT, MPI.ANY_SOURCE, 10);
        anyP.start();
        // Each survivor blocked in a different blocking operation on the victim.
        switch (me) {
            case 0 -> expect("during recv", () -> world.recv(new int[1], 1, MPI.INT, v, 6));
            case 1 -> expect("during sSend", () -> world.sSend(new int[1], 1, MPI.INT, v, 6));
            case 2 -> expect("during send-rendezvous", () -> world.send(new byte[big], big, MPI.BYTE, v, 6));
            default -> expect("during probe", () -> world.probe(v, 6));
        }
        expect("during waitAll", () -> Request.waitAll(posted));
        // The ANY_SOURCE rule: pending, on every form.
        Request[] anyArr = {any, anyP};
        expect("any wait", any::waitFor);
        expect("any test", any::test);
        expect("any waitAny", () -> Request.waitAny(anyArr));
        expect("any testAny", () -> Request.testAny(anyArr));
        expect("any waitSome", () -> Request.waitSome(anyArr));
        expect("any testSome", () -> Request.testSome(anyArr));
        expect("any testAll", () -> Request.testAll(anyArr));
        expect("any waitAll", () -> Request.waitAll(anyArr));
        expect("any persistent wait", anyP::waitFor);
        expect("any recv", () -> world.recv(new int[1], 1, MPI.INT, MPI.ANY_SOURCE, 11));
        expect("any probe", () -> world.probe(MPI.ANY_SOURCE, 11));
        expect("any iProbe", () -> world.iProbe(MPI.ANY_SOURCE, 11));
        expect("any mProbe", () -> new Message().mProbe(MPI.ANY_SOURCE, 11, world));
        expect("any imProbe", () -> new Message().imProbe(MPI.ANY_SOURCE, 11, world));
        // Every operation type against the dead rank, after its death.
        expect("before send", () -> world.send(new int[1], 1, MPI.INT, v, 7));
        expect("before sSend", () -> world.sSend(new int[1], 1, MPI.INT, v, 7));
        expect("before rSend", () -> world.rSend(new int[1], 1, MPI.INT, v, 7));
        expect("before recv", () -> world.recv(new int[1], 1, MPI.INT, v, 7));
        expect("before sendRecv", () -> world.sendRecv(new int[1], 1, MPI.INT, v, 7, new int[1], 1, MPI.INT, v, 7));
        expect("before iSend", () -> world.iSend(MPI.newIntBuffer(1), 1, MPI.INT, v, 7).waitFor());
        expect("before iRecv", () -> world.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, v, 7).waitFor());
        expect("before probe", () -> world.probe(v, 7));
        expect("before iProbe", () -> world.iProbe(v, 7));
        expect("before mProbe", () -> new Message().mProbe(v, 7, world));
        expect("before imProbe", () -> new Message().imProbe(v, 7, world));
        expect("before start", () -> {
            Prequest p = world.sendInit(MPI.newIntBuffer(1), 1, MPI.INT, v, 7);
            p.start();
            p.waitFor();
        });
        // Every collective on a communicator holding the dead rank, as root and as non-root.
        int[] one = {1}, out = new int[n];
        for (int root : new int[] {v, 0}) {
            String r = root == v ? " root dead" : " root alive";
            expect("coll bcast" + r, () -> world.bcast(new int[1], 1, MPI.INT, root));
            expect("coll reduce" + r, () -> world.reduce(one, new int[1], 1, MPI.INT, MPI.SUM, root));
            expect("coll gather" + r, () -> world.gather(one, 1, MPI.INT, out, 1, MPI.INT, root));
            expect("coll scatter" + r, () -> world.scatter(out, 1, MPI.INT, new int[1], 1, MPI.INT, root));
        }
        expect("coll barrier", world::barrier);
        expect("coll allReduce", () -> world.allReduce(one, new int[1], 1, MPI.INT, MPI.SUM));
        expect("coll allGather", () -> world.allGather(one, 1, MPI.INT, out, 1, MPI.INT));
        expect("coll allToAll", () -> world.allToAll(new int[n], 1, MPI.INT, new int[n], 1, MPI.INT));
        expect("coll scan", () -> world.scan(one, new int[1], 1, MPI.INT, MPI.SUM));
        expect("coll iAllReduce", () -> world.iAllReduce(MPI.newIntBuffer(1).put(0, 1), MPI.newIntBuffer(1), 1,
                MPI.INT, MPI.SUM).waitFor());
        expect("coll dup", world::dup);
        // agree before and after acknowledging.
        try {
            say("agree unacked returned " + world.agree(1));
        } catch (ProcFailedException e) {
            say("agree unacked class " + e.getErrorClass() + " flag " + e.getAgreedFlag() + " failed "
                    + world.getFailed().getSize());
        }
        say("acked " + world.ackFailed());
        // The pending ANY_SOURCE receives still match after the acknowledgement.
        int next = (me + 1) % v, prev = (me + v - 1) % v;
        world.send(new int[] {100 + me}, 1, MPI.INT, next, 9);
        world.send(new int[] {200 + me}, 1, MPI.INT, next, 10);
        world.send(new int[] {300 + me}, 1, MPI.INT, next, 11);
        any.waitFor();
        anyP.waitFor();
        int[] got = new int[1];
        int src = world.probe(MPI.ANY_SOURCE, 11).getSource();
        world.recv(got, 1, MPI.INT, MPI.ANY_SOURCE, 11);
        say("after ack any " + (any.isNull() ? "matched" : "active") + " probe from " + src + " got " + got[0]
                + " expected " + (300 + prev));
        say("agree acked " + world.agree(me == 0 ? 0 : 1));
        shrinkAndSum(world);
    }

    static void shrinkAndSum(Intracomm comm) throws MPIException {
        Intracomm s = comm.shrink();
        int[] sum = new int[1];
        s.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
        say("shrunk size " + s.getSize() + " sum " + sum[0]);
        s.free();
    }

    // ------------------------------------------------------------------ collectives

    static void colls(Intracomm world, String[] names) throws Exception {
        Intracomm comm = world;
        world.barrier();
        for (String c : names) {
            for (boolean rootDies : new boolean[] {true, false}) {
                // victim: the highest world rank still a member (rank size-1 of comm); root: it or rank 0
                int n = comm.getSize();
                int victim = n - 1, root = rootDies ? victim : 0;
                String label = "coll " + c + (rootDies ? " root killed" : " member killed");
                // the victim dies once every survivor has left the synchronising call, so that the
                // collective, not the synchronisation, is what fails
                ProbeLines.syncThenDie(comm, comm.getRank() == victim);
                Intracomm cc = comm;
                expect(label, () -> collective(cc, c, root));
                try {
                    comm.agree(1);
                } catch (ProcFailedException e) {
                    // unacknowledged failure: expected
                }
                comm.ackFailed();
                comm.agree(1);
                comm = comm.shrink();
            }
        }
        int[] sum = new int[1];
        comm.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
        say("final size " + comm.getSize() + " sum " + sum[0]);
    }

    static void collective(Intracomm c, String name, int root) throws MPIException {
        int n = c.getSize();
        int[] one = {1}, out = new int[n], all = new int[n];
        switch (name) {
            case "bcast" -> c.bcast(new int[1], 1, MPI.INT, root);
            case "reduce" -> c.reduce(one, new int[1], 1, MPI.INT, MPI.SUM, root);
            case "gather" -> c.gather(one, 1, MPI.INT, out, 1, MPI.INT, root);
            case "scatter" -> c.scatter(all, 1, MPI.INT, new int[1], 1, MPI.INT, root);
            case "allReduce" -> c.allReduce(one, new int[1], 1, MPI.INT, MPI.SUM);
            case "allGather" -> c.allGather(one, 1, MPI.INT, out, 1, MPI.INT);
            case "allToAll" -> c.allToAll(all, 1, MPI.INT, out, 1, MPI.INT);
            case "barrier" -> c.barrier();
            case "scan" -> c.scan(one, new int[1], 1, MPI.INT, MPI.SUM);
            case "iBcast" -> c.iBcast(MPI.newIntBuffer(1), 1, MPI.INT, root).waitFor();
            case "iAllReduce" -> c.iAllReduce(MPI.newIntBuffer(1).put(0, 1), MPI.newIntBuffer(1), 1, MPI.INT,
                    MPI.SUM).waitFor();
            default -> throw new IllegalArgumentException(name);
        }
    }

    // ------------------------------------------------------------------ allreduce loop

    static void loop(Intracomm world, int iters) throws MPIException {
        Group wg = world.getGroup();
        Intracomm comm = world;
        world.barrier();
        int checked = 0, shrinks = 0;
        List<String> bad = new ArrayList<>();
        for (int i = 0; i < iters; ) {
            int[] sum = new int[1];
            boolean ok;
            try {
                comm.allReduce(new int[] {(me + 1) * (i + 1)}, sum, 1, MPI.INT, MPI.SUM);
                ok = true;
            } catch (ProcFailedException | RevokedException e) {
                ok = false;
            }
            int all;
            try {
                all = comm.agree(ok ? 1 : 0);
            } catch (ProcFailedException e) {
                all = 0; // a failure nobody acknowledged yet: retry on the shrunk communicator
            }
            if (all == 1) {
                int[] members = Group.translateRanks(comm.getGroup(), range(comm.getSize()), wg);
                int expected = 0;
                for (int w : members) expected += (w + 1) * (i + 1);
                if (sum[0] != expected) bad.add("iteration " + i + " sum " + sum[0] + " expected " + expected);
                checked++;
                i++;
            } else {
                comm.ackFailed();
                comm = comm.shrink();
                shrinks++;
            }
        }
        say("loop checked " + checked + " sums, size " + comm.getSize() + ", shrinks " + shrinks
                + (bad.isEmpty() ? ", all correct" : ", WRONG: " + bad));
    }

    static int[] range(int n) {
        int[] r = new int[n];
        for (int i = 0; i < n; i++) r[i] = i;
        return r;
    }

    // ------------------------------------------------------------------ agreement and shrink

    static void agree(Intracomm world) throws MPIException {
        world.barrier(); // call 1
        say("agree1 " + world.agree(1)); // call 2
        try {
            say("agree2 " + world.agree(me == 3 ? 0 : 1)); // call 3: rank 0, the coordinator, dies entering it
        } catch (ProcFailedException e) {
            say("agree2 class " + e.getErrorClass() + " flag " + e.getAgreedFlag());
        }
        world.ackFailed();
        say("agree3 " + world.agree(1)); // call 4
        shrinkAndSum(world); // call 5: rank 2 dies entering the shrink; call 6 allreduce
    }
}
