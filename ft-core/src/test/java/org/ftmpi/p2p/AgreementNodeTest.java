package org.ftmpi.p2p;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The agreement state machine driven without an engine ({@link AgreementNode}), message by
 * message, in one thread: the default pattern for communicators of more than 16 members (the
 * recursive-doubling fast path, falling back to the coordinator protocol) with one member killed
 * exactly at each of its sends, the first coordinator among the victims, and the failure notice
 * arriving either at once or only after every message in flight was delivered.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AgreementNodeTest {
    /** What one run decided. */
    private record Outcome(int messages, int victimSends) {}

    /** A message between two members, as {@link AgreementNode.Io} hands it over. */
    private record Msg(int from, int to, int kind, byte[] payload) {}

    /**
     * n members agree (member i contributes ~(1 << i % 31)) over a FIFO network; {@code victim}
     * dies instead of sending its {@code killAt}-th message (never with -1); the survivors hear
     * of it at once ({@code noticeLate} false) or once the network is empty. Checks uniformity,
     * validity and the failed set, and returns the counts.
     */
    private static Outcome run(int n, int fastMin, int victim, int killAt, boolean noticeLate) {
        ArrayDeque<Msg> net = new ArrayDeque<>();
        boolean[] dead = new boolean[n];
        int[] sends = new int[n];
        AgreementNode[] nodes = new AgreementNode[n];
        boolean[] noticePending = {false};
        AgreementNode.Io io = (from, to, kind, payload) -> {
            if (dead[from]) return;
            if (from == victim && sends[from]++ == killAt) {
                dead[from] = true; // dies instead of sending
                noticePending[0] = true;
                return;
            }
            net.add(new Msg(from, to, kind, payload));
        };
        for (int i = 0; i < n; i++) nodes[i] = new AgreementNode(i, n, fastMin, Integer.MAX_VALUE, io);
        for (int i = 0; i < n; i++) nodes[i].start(0, ~(1 << (i % 31)));
        int delivered = 0;
        while (true) {
            if (noticePending[0] && (!noticeLate || net.isEmpty())) {
                noticePending[0] = false;
                for (int i = 0; i < n; i++) if (!dead[i]) nodes[i].failed(victim);
                continue;
            }
            Msg m = net.poll();
            if (m == null) break;
            if (dead[m.to()]) continue;
            nodes[m.to()].receive(m.from(), m.kind(), m.payload());
            delivered++;
            assertTrue(delivered < 50 * n * n, "no end in sight: n " + n + ", victim " + victim + " at " + killAt);
        }
        String ctx = "n " + n + ", victim " + victim + " killed at its send " + killAt + (noticeLate ? ", late notice" : "");
        Decided d = uniform(nodes, dead, ctx);
        int value = d.value();
        int[] failed = d.failed();
        for (int i = 0; i < n; i++) {
            if (!dead[i]) assertEquals(0, value & (1 << (i % 31)), "the value keeps member " + i + "'s zero: " + ctx);
        }
        boolean named = Arrays.stream(failed).anyMatch(f -> f == victim);
        if (!dead[victim]) assertArrayEquals(new int[0], failed, ctx);
        // a member outside the failed set contributed: its zero bit is in the value
        if (!named) assertEquals(0, value & (1 << (victim % 31)), "the victim's contribution: " + ctx);
        return new Outcome(delivered, sends[victim]);
    }

    /** The decision of instance 0: its value and failed set. */
    private record Decided(int value, int[] failed) {}

    /**
     * Checks that every live member decided instance 0 and that every member that decided (dead
     * ones too) decided the same value and failed set; returns it.
     */
    private static Decided uniform(AgreementNode[] nodes, boolean[] dead, String ctx) {
        Decided d = null;
        for (int i = 0; i < nodes.length; i++) {
            if (!nodes[i].decided(0)) {
                assertTrue(dead[i], "live member " + i + " did not decide: " + ctx);
                continue;
            }
            if (d == null) d = new Decided(nodes[i].value(0), nodes[i].failedSet(0));
            assertEquals(d.value(), nodes[i].value(0), "member " + i + ": " + ctx);
            assertArrayEquals(d.failed(), nodes[i].failedSet(0), "member " + i + ": " + ctx);
        }
        assertTrue(d != null, "nobody decided: " + ctx);
        return d;
    }

    @Test
    void aMemberKilledAtEachOfItsSendsLeavesOneUniformDecision() {
        for (int n : new int[] {17, 20, 32}) {
            for (int victim : new int[] {0, 1, n / 2, n - 1}) {
                int total = run(n, FtProtocol.FAST_MIN_AUTO, victim, -1, false).victimSends();
                assertTrue(total > 0, "member " + victim + " of " + n + " sends");
                for (int s = 0; s <= total; s++) {
                    run(n, FtProtocol.FAST_MIN_AUTO, victim, s, false);
                    run(n, FtProtocol.FAST_MIN_AUTO, victim, s, true);
                }
            }
        }
    }

    @Test
    void theDirectFastPathLeavesOneUniformDecisionWhenAMemberDiesAtAnySend() {
        // fastMin 2: communicators of up to FtProtocol.DIRECT_MAX_AUTO members exchange all-to-all
        for (int n = 2; n <= FtProtocol.DIRECT_MAX_AUTO; n++) {
            for (int victim : new int[] {0, 1, n - 1}) {
                int total = run(n, 2, victim, -1, false).victimSends();
                assertEquals(2 * (n - 1), total, "member " + victim + " of " + n + " sends n - 1 per pass");
                for (int s = 0; s <= total; s++) {
                    run(n, 2, victim, s, false);
                    run(n, 2, victim, s, true);
                }
            }
        }
    }

    @Test
    void aMemberThatStartsAnInstanceTheOthersDecidedLongAgoGetsTheirDecision() {
        // As a REBUILD replacement that numbers its agreements from 0 again: the others decided
        // instance 0 by the fast path and answer the newcomer's FAST messages with COMMIT.
        for (int fastMin : new int[] {2, FtProtocol.FAST_MIN_AUTO}) {
            int n = fastMin == 2 ? 4 : 17;
            ArrayDeque<Object[]> net = new ArrayDeque<>();
            AgreementNode.Io io = (from, to, kind, payload) -> net.add(new Object[] {from, to, kind, payload});
            AgreementNode[] nodes = new AgreementNode[n];
            for (int i = 0; i < n; i++) nodes[i] = new AgreementNode(i, n, fastMin, Integer.MAX_VALUE, io);
            for (int i = 0; i < n; i++) nodes[i].start(0, i == 0 ? 5 : 7);
            deliver(net, nodes);
            for (int i = 0; i < n; i++) assertEquals(5, nodes[i].value(0), "member " + i + " of " + n);
            nodes[2] = new AgreementNode(2, n, fastMin, Integer.MAX_VALUE, io); // the newcomer
            nodes[2].start(0, 1);
            deliver(net, nodes);
            assertTrue(nodes[2].decided(0), "the newcomer decided, n " + n);
            assertEquals(5, nodes[2].value(0), "the others' decision, n " + n);
        }
    }

    private static void deliver(ArrayDeque<Object[]> net, AgreementNode[] nodes) {
        for (int i = 0; !net.isEmpty(); i++) {
            assertTrue(i < 100_000, "no end in sight");
            Object[] m = net.poll();
            nodes[(Integer) m[1]].receive((Integer) m[0], (Integer) m[2], (byte[]) m[3]);
        }
    }

    @Test
    void theDirectFastPathTakesTwoPassesOfNMinusOneMessagesPerMember() {
        for (int n : new int[] {2, 3, 4, 8}) {
            int[] perMember = new int[n];
            ArrayDeque<Object[]> net = new ArrayDeque<>();
            AgreementNode[] nodes = new AgreementNode[n];
            for (int i = 0; i < n; i++) {
                nodes[i] = new AgreementNode(i, n, 2, Integer.MAX_VALUE,
                        (from, to, kind, payload) -> net.add(new Object[] {from, to, kind, payload}));
            }
            for (int i = 0; i < n; i++) nodes[i].start(0, i == 1 ? 0x0f : -1);
            while (!net.isEmpty()) {
                Object[] m = net.poll();
                assertEquals(FtProtocol.FAST, m[2], "only FAST messages without a failure");
                perMember[(Integer) m[0]]++;
                perMember[(Integer) m[1]]++;
                nodes[(Integer) m[1]].receive((Integer) m[0], (Integer) m[2], (byte[]) m[3]);
            }
            for (int i = 0; i < n; i++) {
                assertTrue(nodes[i].decided(0), "member " + i + " of " + n);
                assertEquals(0x0f, nodes[i].value(0), "member " + i + " of " + n);
                assertEquals(4 * (n - 1), perMember[i], "member " + i + " of " + n);
            }
        }
    }

    @Test
    void theDefaultPatternIsLogarithmicAtEveryMemberWithoutFailures() {
        // 2 passes of log2 n rounds: every member sends and receives 2 log2 n messages
        for (int n : new int[] {32, 256, 1024}) {
            int[] perMember = new int[n];
            ArrayDeque<int[]> net = new ArrayDeque<>();
            ArrayDeque<byte[]> payloads = new ArrayDeque<>();
            AgreementNode[] nodes = new AgreementNode[n];
            int maxBytes = 0;
            for (int i = 0; i < n; i++) {
                nodes[i] = new AgreementNode(i, n, FtProtocol.FAST_MIN_AUTO, Integer.MAX_VALUE, (from, to, kind, payload) -> {
                    net.add(new int[] {from, to, kind});
                    payloads.add(payload);
                });
            }
            for (int i = 0; i < n; i++) nodes[i].start(0, -1);
            while (!net.isEmpty()) {
                int[] m = net.poll();
                byte[] p = payloads.poll();
                maxBytes = Math.max(maxBytes, p.length);
                perMember[m[0]]++;
                perMember[m[1]]++;
                nodes[m[1]].receive(m[0], m[2], p);
            }
            int lg = Integer.numberOfTrailingZeros(n);
            for (int i = 0; i < n; i++) {
                assertTrue(nodes[i].decided(0), "member " + i + " of " + n);
                assertEquals(-1, nodes[i].value(0));
                assertEquals(4 * lg, perMember[i], "member " + i + " of " + n);
            }
            assertTrue(maxBytes <= 4 * (6 + 2 * 2), "a mask is one run of members: " + maxBytes + " bytes at n " + n);
        }
    }

    /**
     * Random runs in communicators of 3 to 8 members with the fast path on (all-to-all), one to
     * three of them dead before the agreement starts: each survivor knows a random part of those
     * deaths when it starts (so some run the fast path and some the coordinator protocol) and
     * learns the rest at random moments; the survivors start at random moments; messages between
     * each pair arrive in order but pairs interleave at random; in half the runs one more member
     * dies at a random one of its sends. Every survivor must decide,
     * every member that decided (the late victim too) the same value and failed set; the failed
     * set holds every member that never contributed and only dead ones; the value keeps the zero
     * bit of every member outside it.
     */
    @Test
    void survivorsThatKnowDifferentFailuresAtTheStartDecideAlike() {
        for (int seed = 0; seed < 4000; seed++) {
            Random rnd = new Random(seed);
            int n = 3 + rnd.nextInt(6);
            boolean[] dead = new boolean[n];
            int preDead = 1 + rnd.nextInt(Math.min(3, n - 2));
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < n; i++) order.add(i);
            Collections.shuffle(order, rnd);
            for (int i = 0; i < preDead; i++) dead[order.get(i)] = true;
            int victim = rnd.nextBoolean() ? order.get(preDead) : -1, killAt = rnd.nextInt(2 * n);
            String ctx = "seed " + seed + ", n " + n + ", dead before " + order.subList(0, preDead) + ", victim " + victim + " at send " + killAt;
            List<Msg> net = new ArrayList<>(); // in the order sent
            int[] sends = new int[n];
            AgreementNode[] nodes = new AgreementNode[n];
            List<int[]> notices = new ArrayList<>(); // {member, dead member}
            AgreementNode.Io io = (from, to, kind, payload) -> {
                if (dead[from]) return;
                if (from == victim && sends[from]++ == killAt) {
                    dead[from] = true;
                    for (int i = 0; i < n; i++) if (!dead[i]) notices.add(new int[] {i, from});
                    return;
                }
                net.add(new Msg(from, to, kind, payload));
            };
            List<Integer> toStart = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                nodes[i] = new AgreementNode(i, n, 2, Integer.MAX_VALUE, io);
                if (dead[i]) continue;
                toStart.add(i);
                for (int d = 0; d < n; d++) {
                    if (!dead[d]) continue;
                    if (rnd.nextInt(3) > 0) nodes[i].failed(d);
                    else notices.add(new int[] {i, d});
                }
            }
            Collections.shuffle(toStart, rnd);
            for (int steps = 0; ; steps++) {
                assertTrue(steps < 100 * n * n, "no end in sight: " + ctx);
                int choice = rnd.nextInt(4);
                if (choice == 0 && !toStart.isEmpty()) {
                    int i = toStart.remove(toStart.size() - 1);
                    if (!dead[i]) nodes[i].start(0, ~(1 << i));
                } else if (choice == 1 && !notices.isEmpty()) {
                    int[] nt = notices.remove(rnd.nextInt(notices.size()));
                    if (!dead[nt[0]]) nodes[nt[0]].failed(nt[1]);
                } else if (!net.isEmpty()) {
                    // a random message's pair, whose oldest message arrives: FIFO per pair
                    Msg pick = net.get(rnd.nextInt(net.size()));
                    int at = 0;
                    while (net.get(at).from() != pick.from() || net.get(at).to() != pick.to()) at++;
                    Msg m = net.remove(at);
                    if (!dead[m.to()]) nodes[m.to()].receive(m.from(), m.kind(), m.payload());
                } else if (toStart.isEmpty() && notices.isEmpty()) {
                    break;
                }
            }
            Decided d = uniform(nodes, dead, ctx);
            int value = d.value();
            int[] failed = d.failed();
            boolean[] inFailed = new boolean[n];
            for (int f : failed) {
                assertTrue(dead[f], "the failed set names live member " + f + ": " + ctx);
                inFailed[f] = true;
            }
            for (int i = 0; i < preDead; i++) assertTrue(inFailed[order.get(i)], "member " + order.get(i) + " never contributed: " + ctx);
            for (int i = 0; i < n; i++) {
                if (!inFailed[i]) assertEquals(0, value & (1 << i), "the value keeps member " + i + "'s zero: " + ctx);
            }
        }
    }

    @Test
    void theCoordinatorProtocolIsLinearAtTheCoordinator() {
        int n = 64;
        int[] perMember = new int[n];
        ArrayDeque<Object[]> net = new ArrayDeque<>();
        AgreementNode[] nodes = new AgreementNode[n];
        for (int i = 0; i < n; i++) {
            nodes[i] = new AgreementNode(i, n, 2, 0, (from, to, kind, payload) -> net.add(new Object[] {from, to, kind, payload}));
        }
        for (int i = 0; i < n; i++) nodes[i].start(0, -1);
        while (!net.isEmpty()) {
            Object[] m = net.poll();
            perMember[(Integer) m[0]]++;
            perMember[(Integer) m[1]]++;
            nodes[(Integer) m[1]].receive((Integer) m[0], (Integer) m[2], (byte[]) m[3]);
        }
        // contributions, proposals, acknowledgements and commits: 4 (n - 1) at the coordinator
        assertEquals(4 * (n - 1), perMember[0]);
        assertEquals(4, perMember[1]);
    }

    @Test
    void theJobOptionAgreeDirectBoundsTheAllToAllPattern() throws Exception {
        assertEquals(FtProtocol.DIRECT_MAX_AUTO, Engine.agreeDirect("auto"));
        assertEquals(0, Engine.agreeDirect("0"));
        assertEquals(FtProtocol.DIRECT_LIMIT, Engine.agreeDirect(Integer.toString(FtProtocol.DIRECT_LIMIT)));
        for (String bad : new String[] {"-1", "all", "", Integer.toString(FtProtocol.DIRECT_LIMIT + 1)}) {
            String msg = assertThrows(java.io.IOException.class, () -> Engine.agreeDirect(bad)).getMessage();
            assertTrue(msg.startsWith("job option agree-direct=" + bad + " must be auto"), msg);
        }
    }

    @Test
    void theJobOptionFailureParkUsIsMicrosecondsFrom0To1000() throws Exception {
        assertEquals(20, Engine.failureParkMicros(Integer.toString(Engine.FAILURE_PARK_US_DEFAULT)));
        assertEquals(0, Engine.failureParkMicros("0"));
        assertEquals(1000, Engine.failureParkMicros(" 1000 "));
        for (String bad : new String[] {"-1", "1001", "park", "", "2.5"}) {
            String msg = assertThrows(java.io.IOException.class, () -> Engine.failureParkMicros(bad)).getMessage();
            assertTrue(msg.startsWith("job option failure-park-us=" + bad + " must be a number of microseconds"), msg);
        }
    }

    @Test
    void theJobOptionChoosesWhichCommunicatorsTryTheFastPath() throws Exception {
        assertArrayEquals(new int[] {17, Integer.MAX_VALUE, 4}, Engine.agreeFast("auto"));
        assertArrayEquals(new int[] {2, 8, 0}, Engine.agreeFast("8"));
        assertArrayEquals(new int[] {2, 0, 0}, Engine.agreeFast("0"));
        for (String bad : new String[] {"-1", "fast", ""}) {
            String msg = assertThrows(java.io.IOException.class, () -> Engine.agreeFast(bad)).getMessage();
            assertTrue(msg.startsWith("job option agree-fast=" + bad + " must be auto"), msg);
        }
    }

    @Test
    void badArgumentsAreNamed() {
        AgreementNode.Io io = (from, to, kind, payload) -> { };
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new AgreementNode(0, 0, 2, 2, io)).getMessage().startsWith("n: "));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new AgreementNode(4, 4, 2, 2, io)).getMessage().startsWith("rank: "));
        AgreementNode one = new AgreementNode(0, 2, 2, 2, io);
        assertTrue(assertThrows(IllegalStateException.class, () -> one.value(0)).getMessage().contains("not decided"));
    }
}
