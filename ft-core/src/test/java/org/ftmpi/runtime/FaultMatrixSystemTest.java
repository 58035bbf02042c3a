package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 7's fault matrix with real processes and real signals ({@code --inject at-call} and
 * {@code kill -9}) under {@code bin/ftmpirun --recovery-mode ignore --opt ulfm-error-classes=true}:
 * a peer killed before and during each point-to-point operation type, the ANY_SOURCE rule on
 * every wait/test/probe form, root and non-root killed in each collective, failures during
 * agreement and during shrink, a loop that kills k of n ranks at random points of an allreduce
 * loop and checks every agreed sum, MPI.Finalize with dead peers. The program is
 * {@code testprog.FaultMatrixProbe}; every test has a hard timeout and no timing threshold.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FaultMatrixSystemTest {
    private static final String PROBE = "org.ftmpi.runtime.testprog.FaultMatrixProbe";
    private static final int PF = 75, PENDING = 76;

    private static List<String> cmd(int np, List<String> extra, String... probeArgs) {
        List<String> c = new ArrayList<>();
        c.add(FtmpirunSystemTest.root().resolve("bin/ftmpirun").toString());
        c.addAll(List.of("-np", Integer.toString(np), "--recovery-mode", "ignore", "--opt", "ulfm-error-classes=true"));
        c.addAll(extra);
        c.addAll(List.of("java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss512k",
                "-cp", FtmpirunSystemTest.testClasses(), PROBE));
        c.addAll(List.of(probeArgs));
        return c;
    }

    private static void has(FtmpirunSystemTest.Result r, int rank, String line) {
        assertTrue(r.out().contains("rank " + rank + " " + line + "\n"), "missing 'rank " + rank + " " + line + "'\n"
                + r.out() + r.err());
    }

    @Test
    void peerKilledBeforeAndDuringEveryPointToPointOperation() throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(5, List.of("--inject", "rank=4,at-call=6"), "p2p"));
        assertEquals(128 + 9, r.code(), r.out() + r.err());
        assertTrue(FtmpirunSystemTest.killedAt(r.err(), 4, 6, "recv"), r.err());
        // the launcher's line names the injection the victim marked before it signalled itself
        assertTrue(r.err().contains("(pid ") && r.err().contains(") was killed by signal 9 (SIGKILL) (--inject: SIGKILL at its"
                + " MPI call 6 (recv)); the survivors continue (recovery-mode ignore)"), r.err());
        String pf = "class " + PF + " failedRank 4";
        has(r, 0, "during recv " + pf);
        has(r, 1, "during sSend " + pf);
        has(r, 2, "during send-rendezvous " + pf);
        has(r, 3, "during probe " + pf);
        for (int me = 0; me < 4; me++) {
            has(r, me, "during waitAll " + pf);
            for (String op : List.of("wait", "test", "waitAny", "testAny", "waitSome", "testSome", "testAll",
                    "waitAll", "persistent wait")) {
                has(r, me, "any " + op + " class " + PENDING + " pending failedRank 4");
            }
            for (String op : List.of("recv", "probe", "iProbe", "mProbe", "imProbe")) {
                has(r, me, "any " + op + " class " + PF + " failedRank 4");
            }
            for (String op : List.of("send", "sSend", "rSend", "recv", "sendRecv", "iSend", "iRecv", "probe", "iProbe",
                    "mProbe", "imProbe", "start")) {
                has(r, me, "before " + op + " " + pf);
            }
            for (String c : List.of("bcast", "reduce", "gather", "scatter")) {
                has(r, me, "coll " + c + " root dead class " + PF + " failedRank 4");
                assertTrue(r.out().contains("rank " + me + " coll " + c + " root alive class " + PF + " failedRank"),
                        r.out());
            }
            for (String c : List.of("barrier", "allReduce", "allGather", "allToAll", "scan", "iAllReduce", "dup")) {
                assertTrue(r.out().contains("rank " + me + " coll " + c + " class " + PF + " failedRank"), r.out());
            }
            has(r, me, "agree unacked class " + PF + " flag 1 failed 1");
            has(r, me, "acked 1");
            has(r, me, "after ack any matched probe from " + (me + 3) % 4 + " got " + (300 + (me + 3) % 4)
                    + " expected " + (300 + (me + 3) % 4));
            has(r, me, "agree acked 0");
            has(r, me, "shrunk size 4 sum 6");
            has(r, me, "finalized");
        }
        assertTrue(!r.out().contains("victim survived"), r.out());
    }

    /** Each collective twice: its root killed, then a non-root member; 2 + 4 ranks survive to the end. */
    @ParameterizedTest
    @ValueSource(strings = {"bcast,reduce,barrier", "gather,scatter,allReduce", "allGather,allToAll,scan",
            "iBcast,iAllReduce"})
    void rootAndNonRootKilledInEachCollective(String colls) throws Exception {
        int k = colls.split(",").length, np = 2 * k + 2;
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(np, List.of(), "coll", colls));
        assertEquals(128 + 9, r.code(), r.out() + r.err());
        int sum = 0;
        for (int me = 0; me < 2; me++) sum += me; // the survivors are the two lowest world ranks
        for (int me = 0; me < 2; me++) {
            for (String c : colls.split(",")) {
                for (String how : List.of(" root killed", " member killed")) {
                    String l = "rank " + me + " coll " + c + how + " ";
                    assertTrue(r.out().contains(l + "ok") || r.out().contains(l + "class " + PF)
                            || r.out().contains(l + "class 77"), "missing '" + l + "'\n" + r.out() + r.err());
                }
            }
            has(r, me, "final size 2 sum " + sum);
            has(r, me, "finalized");
        }
    }

    @Test
    void failuresDuringAgreementAndDuringShrink() throws Exception {
        // rank 0 (the agreement's first coordinator) dies entering its 3rd call (the second agree),
        // rank 2 entering its 5th (the shrink), while the others are inside.
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(5,
                List.of("--inject", "rank=0,at-call=3", "--inject", "rank=2,at-call=5"), "agree"));
        assertEquals(128 + 9, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("at its MPI call 3 (agree)"), r.err());
        assertTrue(r.err().contains("at its MPI call 5 (shrink)"), r.err());
        for (int me : new int[] {1, 3, 4}) {
            has(r, me, "agree1 1");
            has(r, me, "agree2 class " + PF + " flag 0");
            has(r, me, "agree3 1");
            has(r, me, "shrunk size 3 sum 8");
            has(r, me, "finalized");
        }
    }

    @Test
    void killKOfNAtRandomPointsOfAnAllreduceLoop() throws Exception {
        int np = 6, k = 2, iters = 40;
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        List<String> inject = new ArrayList<>();
        List<Integer> victims = new ArrayList<>();
        while (victims.size() < k) {
            int v = 1 + rnd.nextInt(np - 1);
            if (!victims.contains(v)) victims.add(v);
        }
        for (int v : victims) {
            // calls: 1 barrier, then allreduce + agree per iteration (and shrinks)
            inject.addAll(List.of("--inject", "rank=" + v + ",at-call=" + (2 + rnd.nextInt(2 * iters - 2))));
        }
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(cmd(np, inject, "loop", Integer.toString(iters)));
        String ctx = "seed " + seed + " " + inject + "\n" + r.out() + r.err();
        assertEquals(128 + 9, r.code(), ctx);
        for (int me = 0; me < np; me++) {
            if (victims.contains(me)) continue;
            has(r, me, "finalized");
            assertTrue(r.out().contains("rank " + me + " loop checked " + iters + " sums, size " + (np - k) + ", shrinks "),
                    ctx);
            assertTrue(r.out().matches("(?s).*rank " + me + " loop checked [^\n]*, all correct\n.*"), ctx);
        }
    }
}
