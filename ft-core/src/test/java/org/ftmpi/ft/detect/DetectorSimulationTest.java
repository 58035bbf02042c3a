package org.ftmpi.ft.detect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Many virtual processes, each a {@link DetectorCore}, over a simulated network with a virtual
 * clock (1 ms steps, 0.1-2 ms latency, optional loss). No threads, no sockets, deterministic.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DetectorSimulationTest {
    static final long MS = 1_000_000L;
    static final long PERIOD = 50 * MS;
    static final long TIMEOUT = 500 * MS;

    /** The simulated job. */
    static final class Sim {
        final int n;
        final RingPlan plan;
        final DetectorCore[] cores;
        final boolean[] crashed;
        final long[] pausedUntil;
        final boolean[] fenced;
        final int[][] declaredCount; // [observer][failed]
        final long[][] declaredAt;
        final List<String> log = new ArrayList<>();
        final PriorityQueue<long[]> net = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
        final List<DetectMessage> payloads = new ArrayList<>();
        final SplittableRandom rnd = new SplittableRandom(1);
        final double loss;
        long now;
        long failedMessages;

        Sim(int n, double loss) {
            this.n = n;
            this.loss = loss;
            String[] hosts = new String[n];
            for (int r = 0; r < n; r++) hosts[r] = "h" + r % 4;
            plan = RingPlan.of(1234, hosts);
            long[] procIds = new long[n];
            for (int r = 0; r < n; r++) procIds[r] = r + 1;
            cores = new DetectorCore[n];
            crashed = new boolean[n];
            pausedUntil = new long[n];
            fenced = new boolean[n];
            declaredCount = new int[n][n];
            declaredAt = new long[n][n];
            for (int r = 0; r < n; r++) {
                int me = r;
                cores[r] = new DetectorCore(r, procIds, plan, PERIOD, TIMEOUT, 25 * MS, new DetectorCore.Actions() {
                    @Override
                    public void send(int to, DetectMessage m) {
                        if (m.type() == DetectMessage.FAILED) failedMessages++;
                        if (rnd.nextDouble() < Sim.this.loss) return;
                        payloads.add(m);
                        net.add(new long[] {now + 100_000 + rnd.nextLong(1_900_000), to, payloads.size() - 1});
                    }

                    @Override
                    public void declared(int rank, long procId, String how, boolean here) {
                        declaredCount[me][rank]++;
                        declaredAt[me][rank] = now;
                        log.add(now / MS + " ms: " + me + " declared " + rank + " (" + how + ")");
                    }

                    @Override
                    public void fenced(String why) {
                        fenced[me] = true;
                    }
                });
                cores[r].start(0, 0);
            }
        }

        boolean running(int r) {
            return !crashed[r] && !fenced[r] && now >= pausedUntil[r];
        }

        void run(long untilNs) {
            while (now < untilNs) {
                now += MS;
                // a paused process keeps its datagrams queued, like a socket buffer
                List<long[]> later = new ArrayList<>();
                while (!net.isEmpty() && net.peek()[0] <= now) {
                    long[] e = net.poll();
                    int to = (int) e[1];
                    if (crashed[to] || fenced[to]) continue;
                    if (now < pausedUntil[to]) {
                        later.add(new long[] {pausedUntil[to], to, e[2]});
                        continue;
                    }
                    cores[to].receive(payloads.get((int) e[2]), now);
                }
                net.addAll(later);
                for (int r = 0; r < n; r++) {
                    if (running(r)) cores[r].tick(now);
                }
            }
        }

        /** Every running process declared exactly the given ranks, each exactly once. */
        void assertConsistent(BitSet dead) {
            for (int o = 0; o < n; o++) {
                if (!running(o)) continue;
                for (int r = 0; r < n; r++) {
                    int want = dead.get(r) ? 1 : 0;
                    assertEquals(want, declaredCount[o][r], "process " + o + " declared " + r + " "
                            + declaredCount[o][r] + " times\n" + String.join("\n", log));
                }
            }
        }

        long lastDeclaration(BitSet dead) {
            long last = 0;
            for (int o = 0; o < n; o++) {
                if (!running(o)) continue;
                for (int r = dead.nextSetBit(0); r >= 0; r = dead.nextSetBit(r + 1)) {
                    last = Math.max(last, declaredAt[o][r]);
                }
            }
            return last;
        }
    }

    @Test
    void noFalsePositiveWithoutFailuresEvenWithLossAndShortPauses() {
        Sim s = new Sim(64, 0.05);
        s.run(1_000 * MS);
        s.pausedUntil[5] = s.now + 300 * MS;  // a GC or SIGSTOP below the timeout
        s.pausedUntil[40] = s.now + 450 * MS;
        s.run(4_000 * MS);
        s.assertConsistent(new BitSet());
        assertFalse(s.fenced[5] || s.fenced[40]);
    }

    @Test
    void aCrashIsDeclaredByItsObserverAndReachesEverySurvivorOnceWithinLogHops() {
        Sim s = new Sim(64, 0);
        s.run(1_000 * MS);
        int victim = 17;
        long t0 = s.now;
        s.crashed[victim] = true;
        s.run(t0 + 3_000 * MS);
        BitSet dead = new BitSet();
        dead.set(victim);
        s.assertConsistent(dead);
        long spread = s.lastDeclaration(dead) - t0;
        assertTrue(spread <= TIMEOUT + PERIOD + 6 * 3 * MS, "declared everywhere after " + spread / MS + " ms");
        // a chord broadcast: every survivor forwards once to at most log2(63) + 1 fingers
        assertTrue(s.failedMessages <= 63L * 6, "FAILED messages " + s.failedMessages);
    }

    @Test
    void twoAdjacentRingNeighboursHangingAtOnceAreBothDeclared() {
        Sim s = new Sim(32, 0);
        s.run(1_000 * MS);
        int a = s.plan.rankAt(10);
        int b = s.plan.rankAt(11); // b observes a: only b's successor can see b
        s.pausedUntil[a] = Long.MAX_VALUE;
        s.pausedUntil[b] = Long.MAX_VALUE;
        long t0 = s.now;
        s.run(t0 + 3_000 * MS);
        BitSet dead = new BitSet();
        dead.set(a);
        dead.set(b);
        s.assertConsistent(dead);
        // b after one timeout, then a after the observer adopted it: about two timeouts
        assertTrue(s.lastDeclaration(dead) - t0 <= 2 * TIMEOUT + 3 * PERIOD, s.log.toString());
    }

    @Test
    void manySimultaneousFailuresWithMessageLossConverge() {
        Sim s = new Sim(64, 0.2);
        s.run(1_000 * MS);
        BitSet dead = new BitSet();
        SplittableRandom pick = new SplittableRandom(3);
        while (dead.cardinality() < 8) dead.set(pick.nextInt(64));
        for (int r = dead.nextSetBit(0); r >= 0; r = dead.nextSetBit(r + 1)) s.crashed[r] = true;
        s.run(s.now + 8_000 * MS);
        s.assertConsistent(dead);
        for (int r = 0; r < 64; r++) assertFalse(s.fenced[r], "no survivor fenced");
    }

    @Test
    void aProcessStoppedBeyondTheTimeoutIsFencedWhenItResumes() {
        Sim s = new Sim(16, 0);
        s.run(1_000 * MS);
        int victim = 3;
        s.pausedUntil[victim] = s.now + 1_500 * MS; // SIGSTOP, then SIGCONT
        s.run(s.now + 3_000 * MS);
        assertTrue(s.fenced[victim], "the resumed process learns it is dead");
        BitSet dead = new BitSet();
        dead.set(victim);
        s.assertConsistent(dead);
        assertEquals(0, Arrays.stream(s.declaredCount[victim]).sum(),
                "the stopped process did not blame its own observed peer");
    }

    @Test
    void aBeatDueWithinHalfAPeriodGoesOutWhenThePredecessorsBeatArrives() {
        long[] procIds = {1, 2};
        RingPlan plan = RingPlan.of(1, new String[] {"h", "h"});
        List<Long> sentAt = new ArrayList<>();
        long[] now = {0};
        DetectorCore c = new DetectorCore(0, procIds, plan, PERIOD, TIMEOUT, PERIOD, new DetectorCore.Actions() {
            @Override
            public void send(int to, DetectMessage m) {
                if (m.type() == DetectMessage.HEARTBEAT) sentAt.add(now[0] / MS);
            }

            @Override
            public void declared(int rank, long procId, String how, boolean here) {
                throw new AssertionError("declared " + rank + ": " + how);
            }

            @Override
            public void fenced(String why) {
                throw new AssertionError(why);
            }
        });
        c.start(0, 0);
        c.tick(0); // beats; the next is due at 50 ms
        now[0] = 20 * MS;
        c.receive(DetectMessage.heartbeat(1, 2, 1, new BitSet()), now[0]); // due in 30 ms: not yet
        now[0] = 30 * MS;
        c.receive(DetectMessage.heartbeat(1, 2, 2, new BitSet()), now[0]); // due in 20 ms: now, next at 80
        now[0] = 50 * MS;
        c.tick(now[0]); // nothing due
        now[0] = 80 * MS;
        c.receive(DetectMessage.heartbeat(1, 2, 3, new BitSet()), now[0]); // due now: with the datagram
        c.tick(now[0]); // already sent
        assertEquals(List.of(0L, 30L, 80L), sentAt);
    }

    @Test
    void beatsFallIntoStepAndAreNeverCloserThanHalfAPeriod() {
        Sim s = new Sim(16, 0);
        s.run(2_000 * MS);
        String c = s.cores[3].counters(); // "beats sent S, ..."
        long sent = Long.parseLong(c.substring("beats sent ".length(), c.indexOf(',')));
        assertTrue(sent >= 2_000 / 50 && sent <= 2 * 2_000 / 50 + 1, c);
        s.assertConsistent(new BitSet());
    }

    @Test
    void theObserversOwnStallDoesNotBlameThePeer() {
        long[] procIds = {1, 2};
        List<String> declared = new ArrayList<>();
        DetectorCore c = new DetectorCore(0, procIds, RingPlan.of(1, new String[] {"a", "a"}), PERIOD, TIMEOUT,
                25 * MS, new DetectorCore.Actions() {
                    @Override public void send(int to, DetectMessage m) { }
                    @Override public void declared(int r, long p, String how, boolean here) { declared.add(how); }
                    @Override public void fenced(String why) { }
                });
        c.start(0, 0);
        long t = 0;
        long seq = 0;
        for (; t < 400 * MS; t += 25 * MS) {
            if (t % PERIOD == 0) c.receive(DetectMessage.heartbeat(1, 2, ++seq, new BitSet()), t);
            c.tick(t);
        }
        t += 700 * MS; // this process did not run for 700 ms (a long GC pause)
        c.tick(t);
        assertTrue(declared.isEmpty(), "declared after its own stall: " + declared);
        long resumed = t;
        while (declared.isEmpty() && t < resumed + 2 * TIMEOUT) { // but silence after it counts
            t += 25 * MS;
            c.tick(t);
        }
        assertEquals(1, declared.size());
        assertTrue(t - resumed >= TIMEOUT - 100 * MS, "declared " + (t - resumed) / MS + " ms after resuming");
        assertTrue(declared.get(0).contains("no heartbeat for"), declared.get(0));
    }
}
