package org.ftmpi.p2p;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The union agreement of two groups ({@link FtProtocol#joinUnion}, FT-MPI ATOMIC {@code
 * createIntercomm}) with every member's protocol state machine in one thread, over a network
 * that delivers each pair's messages in order and interleaves pairs at random: members whose
 * part succeeded join with 1; members whose part failed vote 0 knowing the other group, or
 * without knowing it (they join when an invitation names them), before or after the invitation
 * arrives; a member may die instead of any of its sends. Every surviving member that joined
 * decides, all decide the same value, and it is 0 whenever a surviving member voted 0.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UnionAgreementTest {
    private static final int CTX_A = 40, CTX_B = 72;
    private static final long TOKEN_A = 0xA0000001L, TOKEN_B = 0xB0000002L;

    /** What a member does in the run: joins with 1, or fails its part knowing the other group or not. */
    enum Part { JOIN, REFUSE_KNOWING, REFUSE_BLIND }

    private record Msg(int from, int to, int context, int kind, byte[] payload) {}

    /** One simulated run; returns its description for messages. */
    private static final class Run {
        final int[] a, b;
        final int n;
        final Part[] part;
        final FtProtocol[] proto;
        final Map<Integer, CommFt>[] comms;
        final boolean[][] knows; // knows[i][w]: member i knows world rank w failed
        final boolean[] dead;
        final int[] sends;
        final List<List<Msg>> links = new ArrayList<>(); // per (from, to) pair, FIFO
        final int victim, killAt;
        int pendingNotice = -1; // deliveries left before the survivors hear of the victim's death
        final Random rnd;
        final String what;

        @SuppressWarnings("unchecked")
        Run(int[] a, int[] b, Part[] part, int victim, int killAt, long seed, int fastSmall) {
            this.a = a;
            this.b = b;
            this.n = a.length + b.length;
            this.part = part;
            this.victim = victim;
            this.killAt = killAt;
            this.rnd = new Random(seed);
            proto = new FtProtocol[n];
            comms = new Map[n];
            knows = new boolean[n][n];
            dead = new boolean[n];
            sends = new int[n];
            for (int i = 0; i < n * n; i++) links.add(new ArrayList<>());
            for (int w = 0; w < n; w++) {
                int me = w;
                comms[w] = new HashMap<>();
                proto[w] = new FtProtocol(new FtProtocol.Host() {
                    @Override
                    public int rank() {
                        return me;
                    }

                    @Override
                    public boolean isFailed(int worldRank) {
                        return knows[me][worldRank];
                    }

                    @Override
                    public void ftSend(int worldRank, int context, int kind, byte[] payload, int length) {
                        send(me, worldRank, context, kind, java.util.Arrays.copyOf(payload, length));
                    }

                    @Override
                    public void revoked(int context, String why) {
                        // not used by union agreements
                    }
                }, comms[w]);
                proto[w].fastSmall(fastSmall);
            }
            what = "groups " + java.util.Arrays.toString(a) + " / " + java.util.Arrays.toString(b) + ", parts "
                    + java.util.Arrays.toString(part) + ", victim " + victim + " at its send " + killAt + ", seed " + seed
                    + ", fast small " + fastSmall;
        }

        void send(int from, int to, int context, int kind, byte[] payload) {
            if (dead[from]) return;
            if (from == victim && sends[from]++ == killAt) {
                dead[from] = true; // dies instead of sending
                pendingNotice = rnd.nextInt(3 * n);
                return;
            }
            links.get(from * n + to).add(new Msg(from, to, context, kind, payload));
        }

        boolean inA(int w) {
            for (int x : a) if (x == w) return true;
            return false;
        }

        /** Member w's action: join with 1, or vote 0. */
        void act(int w) {
            boolean mineA = inA(w);
            int[] own = mineA ? a : b, other = mineA ? b : a;
            int ownCtx = mineA ? CTX_A : CTX_B, otherCtx = mineA ? CTX_B : CTX_A;
            long ownToken = mineA ? TOKEN_A : TOKEN_B, otherToken = mineA ? TOKEN_B : TOKEN_A;
            switch (part[w]) {
                case JOIN -> proto[w].start(proto[w].joinUnion(ownCtx, ownToken, own, otherCtx, otherToken, other),
                        FtProtocol.UNION_K, 1);
                case REFUSE_KNOWING -> proto[w].refuseUnion(ownCtx, ownToken, own, otherCtx, otherToken, other);
                case REFUSE_BLIND -> proto[w].refuseUnion(ownCtx, ownToken, own, -1, 0, null);
            }
        }

        void notice() {
            for (int w = 0; w < n; w++) {
                if (dead[w] || knows[w][victim]) continue;
                knows[w][victim] = true;
                for (CommFt f : List.copyOf(comms[w].values())) {
                    if (f.contains(victim)) proto[w].memberFailed(f);
                }
            }
        }

        /** Runs to quiescence: members act at random points; returns each member's union state (null: never joined). */
        CommFt[] run() {
            List<Integer> toAct = new ArrayList<>();
            for (int w = 0; w < n; w++) toAct.add(w);
            java.util.Collections.shuffle(toAct, rnd);
            int deliveries = 0;
            while (true) {
                if (pendingNotice == 0) {
                    pendingNotice = -1;
                    notice();
                }
                List<Integer> ready = new ArrayList<>();
                for (int i = 0; i < n * n; i++) if (!links.get(i).isEmpty()) ready.add(i);
                if (!toAct.isEmpty() && (ready.isEmpty() || rnd.nextInt(4) == 0)) {
                    int w = toAct.remove(0);
                    if (!dead[w]) act(w);
                    continue;
                }
                if (ready.isEmpty()) {
                    if (pendingNotice > 0) {
                        pendingNotice = 0;
                        continue;
                    }
                    break;
                }
                Msg m = links.get(ready.get(rnd.nextInt(ready.size()))).remove(0);
                if (pendingNotice > 0) pendingNotice--;
                if (dead[m.to()] || knows[m.to()][m.from()]) continue; // the engine fences known-failed peers
                proto[m.to()].onFrame(m.from(), m.context(), m.kind(), MemorySegment.ofArray(m.payload()));
                assertTrue(++deliveries < 100_000, "no end in sight: " + what);
            }
            CommFt[] out = new CommFt[n];
            for (int w = 0; w < n; w++) {
                for (CommFt f : comms[w].values()) if (f.unionContext != null) out[w] = f;
            }
            return out;
        }
    }

    /** Runs one case and checks termination, uniformity and validity; returns the decided value (-1: nobody joined). */
    private static int check(Run r) {
        CommFt[] u = r.run();
        boolean anyJoin = false, liveZero = false;
        for (int w = 0; w < r.n; w++) {
            anyJoin |= r.part[w] == Part.JOIN;
            if (!r.dead[w] && r.part[w] != Part.JOIN) liveZero = true;
        }
        Integer value = null;
        for (int w = 0; w < r.n; w++) {
            if (r.dead[w]) continue;
            if (u[w] == null) {
                // only a blind refuser, and only when no member ever invited it
                assertEquals(Part.REFUSE_BLIND, r.part[w], "member " + w + " never joined: " + r.what);
                continue;
            }
            Agreement g = u[w].agreementIfKept(FtProtocol.UNION_K);
            assertTrue(g != null && g.decided, "member " + w + " did not decide: " + r.what);
            if (value == null) value = g.dValue;
            assertEquals(value, g.dValue, "member " + w + " decided otherwise: " + r.what);
        }
        if (value == null) return -1;
        if (liveZero) assertEquals(0, value, "a surviving member voted 0: " + r.what);
        if (!liveZero && anyJoin && r.victim < 0) assertEquals(1, value, "every member voted 1: " + r.what);
        return value;
    }

    private static Part[] parts(int n, Part first, Part rest, int[] group) {
        Part[] p = new Part[n];
        java.util.Arrays.fill(p, Part.JOIN);
        for (int w : group) p[w] = rest;
        p[group[0]] = first;
        return p;
    }

    @Test
    void everyMemberJoiningDecidesOneEverywhere() {
        for (long seed = 0; seed < 200; seed++) {
            int[] a = {0, 2, 4}, b = {1, 3};
            assertEquals(1, check(new Run(a, b, parts(5, Part.JOIN, Part.JOIN, a), -1, -1, seed, 0)));
            int[] c = {0, 3}, d = {1, 2};
            assertEquals(1, check(new Run(c, d, parts(4, Part.JOIN, Part.JOIN, c), -1, -1, seed, 4)));
        }
    }

    /**
     * The case an agreement over both groups could not handle before: one group's members never
     * learned the other group (their leader died after the leaders' exchange), the other group
     * succeeded. The blind members join when invited, vote 0, and the successful group raises too.
     */
    @ParameterizedTest
    @CsvSource({"0", "4"})
    void aGroupThatNeverLearnedTheOtherIsInvitedAndEveryoneDecidesZero(int fastSmall) {
        for (long seed = 0; seed < 300; seed++) {
            int[] a = {0, 2, 4}, b = {1, 3};
            Part[] p = parts(5, Part.REFUSE_BLIND, Part.REFUSE_BLIND, a);
            assertEquals(0, check(new Run(a, b, p, -1, -1, seed, fastSmall)));
            // the high group blind, the low one joining: the first coordinator is a joiner
            p = parts(5, Part.REFUSE_BLIND, Part.REFUSE_BLIND, b);
            assertEquals(0, check(new Run(a, b, p, -1, -1, seed, fastSmall)));
            // refusers that know the other group
            p = parts(5, Part.REFUSE_KNOWING, Part.REFUSE_KNOWING, b);
            assertEquals(0, check(new Run(a, b, p, -1, -1, seed, fastSmall)));
        }
    }

    @Test
    void whenBothGroupsFailBlindNobodyWaits() {
        int[] a = {0, 2}, b = {1, 3};
        Part[] p = new Part[4];
        java.util.Arrays.fill(p, Part.REFUSE_BLIND);
        for (long seed = 0; seed < 50; seed++) assertEquals(-1, check(new Run(a, b, p, -1, -1, seed, 4)));
    }

    /**
     * One member dies instead of each of its sends in turn (the invitations included), in every
     * mix of parts above, each with 20 interleavings: every survivor that joined decides, all the
     * same, and 0 if a survivor voted 0.
     */
    @Test
    void aMemberDyingAtAnyOfItsSendsLeavesTheSurvivorsUniform() {
        int[] a = {0, 2, 4}, b = {1, 3};
        List<Part[]> mixes = List.of(parts(5, Part.JOIN, Part.JOIN, a), parts(5, Part.REFUSE_BLIND, Part.REFUSE_BLIND, a),
                parts(5, Part.REFUSE_BLIND, Part.REFUSE_BLIND, b), parts(5, Part.REFUSE_KNOWING, Part.REFUSE_BLIND, a),
                parts(5, Part.JOIN, Part.REFUSE_KNOWING, b));
        int runs = 0;
        for (Part[] p : mixes) {
            for (int victim = 0; victim < 5; victim++) {
                for (int killAt = 0; killAt < 14; killAt++) {
                    for (long seed = 0; seed < 20; seed++) {
                        for (int fastSmall : new int[] {0, 8}) {
                            check(new Run(a, b, p, victim, killAt, seed * 31 + killAt, fastSmall));
                            runs++;
                        }
                    }
                }
            }
        }
        assertTrue(runs > 10_000);
    }

    /** Messages of an earlier call on the same context (another token) never reach this call's agreement. */
    @Test
    void anotherCallsMessagesAreKeptApart() {
        int[] a = {0, 2}, b = {1, 3};
        Run r = new Run(a, b, parts(4, Part.JOIN, Part.JOIN, a), -1, -1, 7, 0);
        // a stale invitation for group A's context with another token
        java.nio.ByteBuffer hello = java.nio.ByteBuffer.allocate(28).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        hello.putLong(TOKEN_A + 1).putInt(CTX_B).putLong(TOKEN_B).putInt(1).putInt(1);
        r.proto[2].onFrame(1, CTX_A, FtProtocol.HELLO | FtProtocol.UNION, MemorySegment.ofArray(hello.array()));
        r.proto[2].refuseUnion(CTX_A, TOKEN_A, a, -1, 0, null);
        assertEquals(0, r.proto[2].unionCount(), "a stale invitation does not make member 2 join");
        assertEquals(1, check(new Run(a, b, parts(4, Part.JOIN, Part.JOIN, a), -1, -1, 7, 0)));
    }

    /** Without a recovery, a program that retries a failing call keeps at most UNION_KEEP failed calls here. */
    @Test
    void failedCallsWaitingForAnInvitationAreBounded() {
        int[] a = {0, 2}, b = {1, 3};
        Run r = new Run(a, b, parts(4, Part.JOIN, Part.JOIN, a), -1, -1, 1, 0);
        for (int call = 0; call < 10 * FtProtocol.UNION_KEEP; call++) {
            r.proto[0].refuseUnion(1000 + 2 * call, call, a, -1, 0, null);
        }
        assertEquals(FtProtocol.UNION_KEEP, r.proto[0].refusedCount());
        assertEquals(0, r.proto[0].unionCount());
    }
}
