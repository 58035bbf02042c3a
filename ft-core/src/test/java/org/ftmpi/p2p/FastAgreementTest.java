package org.ftmpi.p2p;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.ftmpi.runtime.LocalJobRuntime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The agreement's fast path (two passes, {@link FtProtocol}; job option {@code agree-fast=8}),
 * all-to-all ({@code agree-direct=8}) and by recursive doubling ({@code agree-direct=0}), with a member
 * killed at each of its steps: before each message of the value pass, before each message of
 * the acceptance pass, and right after it decided. Ranks are engines on threads of this JVM
 * (TCP between them); the death is simulated ({@link LocalJobRuntime#kill}) synchronously at the
 * step, so the victim's message of that step is dropped by every survivor (they already know
 * it failed). Every survivor must decide, and every member that decided, the victim included,
 * must decide the same value and failed set; the value keeps every survivor's zero bit.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FastAgreementTest {
    /** The job options of a run: fast path up to 8 members, all-to-all up to {@code direct}. */
    private static Map<String, String> options(int direct) {
        return Map.of("recovery-mode", "ignore", "agree-fast", "8", "agree-direct", Integer.toString(direct));
    }

    /** The steps at which {@code victim} of {@code n} sends (pass, position), and the decision (2, 0). */
    private static List<int[]> stepsOf(int victim, int n, int direct) {
        List<int[]> out = new ArrayList<>();
        int[] sched = n <= direct ? FtProtocol.direct(victim, n) : FtProtocol.schedule(victim, n);
        for (int pass = 0; pass < 2; pass++) {
            for (int pos = 0; pos < sched.length; pos++) {
                if ((sched[pos] & 1) != 0) out.add(new int[] {pass, pos}); // a step that sends
            }
        }
        out.add(new int[] {2, 0});
        return out;
    }

    static Stream<Arguments> deaths() {
        List<Arguments> out = new ArrayList<>();
        int[][] cases = {{4, 0}, {4, 3}, {6, 0}, {6, 1}, {8, 5}};
        for (int direct : new int[] {0, 8}) {
            for (int[] c : cases) {
                for (int[] s : stepsOf(c[1], c[0], direct)) out.add(Arguments.of(direct, c[0], c[1], s[0], s[1]));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "agree-direct {0}, n {1}, rank {2} dies at pass {3} step {4}")
    @MethodSource("deaths")
    void aMemberKilledAtAnyFastStepLeavesOneDecision(int direct, int n, int victim, int pass, int pos) throws Exception {
        var decisions = new ConcurrentHashMap<Integer, Engine.Decision>();
        var after = new ConcurrentHashMap<Integer, Engine.Decision>();
        boolean[] fired = new boolean[1];
        run(n, direct, (job, engines) -> engines[victim].ftProtocol().stepListener = (k, p, s) -> {
            if (k == 1 && p == pass && s == pos && !fired[0]) {
                fired[0] = true;
                job.kill(victim, "was killed by the test at fast pass " + pass + " step " + pos);
            }
        }, (rank, e, f) -> {
            decisions.put(rank, e.agree(f, 1, ~(1 << rank)));
            after.put(rank, e.agree(f, 2, -1)); // the next instance: the failure is known, coordinator protocol
        });
        String ctx = "agree-direct " + direct + ", n " + n + ", victim " + victim + " at pass " + pass + " step " + pos + ": " + describe(decisions);
        assertTrue(fired[0], "the victim never reached the step; " + ctx);
        for (int r = 0; r < n; r++) {
            if (r != victim) {
                assertTrue(decisions.containsKey(r), "survivor " + r + " did not decide; " + ctx);
                assertTrue(after.containsKey(r), "survivor " + r + " did not decide the next instance; " + ctx);
            }
        }
        Engine.Decision first = decisions.get(victim == 0 ? 1 : 0);
        for (var d : decisions.entrySet()) {
            assertEquals(first.value(), d.getValue().value(), "rank " + d.getKey() + " decided another value; " + ctx);
            assertArrayEquals(first.failedWorld(), d.getValue().failedWorld(),
                    "rank " + d.getKey() + " decided another failed set; " + ctx);
        }
        for (int r = 0; r < n; r++) {
            if (r != victim) assertEquals(0, first.value() & (1 << r), "survivor " + r + "'s zero bit lost; " + ctx);
            else assertTrue(first.failedWorld().length == 0 || first.failedWorld()[0] == victim, ctx);
        }
        assertEquals(-1, first.value() | ((1 << n) - 1), "a bit no member cleared was cleared; " + ctx);
        var next = after.values().iterator().next();
        for (var d : after.values()) assertArrayEquals(next.failedWorld(), d.failedWorld(), ctx);
        assertArrayEquals(new int[] {victim}, next.failedWorld(), "the next instance names the victim; " + ctx);
    }

    @ParameterizedTest(name = "agree-direct {0}")
    @org.junit.jupiter.params.provider.ValueSource(ints = {0, 8})
    void withoutFailuresTheFastPathDecidesTheAndWithNoFailedMember(int direct) throws Exception {
        for (int n : new int[] {2, 3, 4, 5, 7, 8}) {
            var decisions = new ConcurrentHashMap<Integer, Engine.Decision>();
            var steps = new ConcurrentHashMap<Integer, Integer>();
            run(n, direct, (job, engines) -> {
                for (int r = 0; r < n; r++) {
                    int rank = r;
                    engines[r].ftProtocol().stepListener = (k, p, s) -> steps.merge(rank, 1, Integer::sum);
                }
            }, (rank, e, f) -> decisions.put(rank, e.agree(f, 1, rank == n - 1 ? 0x0f : -1)));
            for (int r = 0; r < n; r++) {
                assertEquals(0x0f, decisions.get(r).value(), "n " + n + ", rank " + r);
                assertEquals(0, decisions.get(r).failedWorld().length, "n " + n + ", rank " + r);
                assertTrue(steps.getOrDefault(r, 0) > 0, "n " + n + ", rank " + r + " did not run the fast path");
            }
        }
    }

    @Test
    void byDefaultCommunicatorsOfUpToFourMembersTakeTheAllToAllFastPath() throws Exception {
        for (int n : new int[] {2, 4, 5}) {
            var decisions = new ConcurrentHashMap<Integer, Engine.Decision>();
            var steps = new ConcurrentHashMap<Integer, Integer>();
            run(n, Map.of("recovery-mode", "ignore"), (job, engines) -> {
                for (int r = 0; r < n; r++) {
                    int rank = r;
                    engines[r].ftProtocol().stepListener = (k, p, s) -> steps.merge(rank, 1, Integer::sum);
                }
            }, (rank, e, f) -> decisions.put(rank, e.agree(f, 1, rank == 0 ? 6 : 3)));
            for (int r = 0; r < n; r++) {
                assertEquals(2, decisions.get(r).value(), "n " + n + ", rank " + r);
                // all-to-all: n - 1 sends per pass, and the decision
                assertEquals(n <= FtProtocol.FAST_SMALL_AUTO ? 2 * (n - 1) + 1 : 0, steps.getOrDefault(r, 0), "n " + n + ", rank " + r);
            }
        }
    }

    @Test
    void theScheduleIsRecursiveDoublingWithTheExtraRanksFoldedIn() {
        // n 6: ranks 0-3 pair up (0 -> 1, 2 -> 3); 1, 3, 4, 5 double as new ranks 0-3
        assertArrayEquals(new int[] {1 << 8 | 1, 1 << 8 | 63 << 2 | 2}, FtProtocol.schedule(0, 6));
        assertArrayEquals(new int[] {0 << 8 | 2, 3 << 8 | 1 << 2 | 3, 4 << 8 | 2 << 2 | 3, 0 << 8 | 63 << 2 | 1},
                FtProtocol.schedule(1, 6));
        assertArrayEquals(new int[] {5 << 8 | 1 << 2 | 3, 1 << 8 | 2 << 2 | 3}, FtProtocol.schedule(4, 6));
        assertArrayEquals(new int[] {1 << 8 | 1 << 2 | 3, 2 << 8 | 2 << 2 | 3}, FtProtocol.schedule(0, 4));
    }

    @Test
    void theDirectScheduleSendsToEveryMemberThenReceivesFromEach() {
        // rank 1 of 3: its messages carry slot 2 (its rank + 1); it reads slot 1 from rank 0, slot 3 from rank 2
        assertArrayEquals(new int[] {0 << 8 | 2 << 2 | 1, 2 << 8 | 2 << 2 | 1, 0 << 8 | 1 << 2 | 2, 2 << 8 | 3 << 2 | 2},
                FtProtocol.direct(1, 3));
    }

    /**
     * {@code ft-trace=all} records an application's agreement (context 0, not a recovery's): its
     * start, each FAST message sent and received, and the decision; {@code ft-trace=messages}
     * records the recoveries' agreements only, so nothing here.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void ftTraceAllRecordsTheApplicationsAgreements() throws Exception {
        for (String mode : new String[] {"all", "messages"}) {
            Map<String, String> o = new java.util.HashMap<>(options(8));
            o.put("ft-trace", mode);
            String[] printed = new String[3];
            run(3, o, (job, engines) -> { }, (rank, e, f) -> {
                assertEquals(1, e.agree(f, 64, 1).value());
                java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
                e.trace().print(new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8), rank);
                printed[rank] = out.toString(java.nio.charset.StandardCharsets.UTF_8);
            });
            for (int r = 0; r < 3; r++) {
                String p = printed[r];
                if (mode.equals("messages")) {
                    assertEquals("", p, "ft-trace=messages, rank " + r);
                    continue;
                }
                String at = "ftmpi: trace: rank " + r + ": t=";
                int start = p.indexOf("agreement started, context 0, instance 64");
                int decided = p.indexOf("decided, value 1, failed 0");
                assertTrue(start >= 0 && decided > start, "rank " + r + ":\n" + p);
                assertTrue(p.contains("sent FAST to rank") && p.contains("received FAST from rank"), "rank " + r + ":\n" + p);
                for (String line : p.split("\n")) assertTrue(line.startsWith(at), line);
            }
        }
    }

    // ------------------------------------------------------------------ harness

    interface Setup {
        void accept(LocalJobRuntime job, Engine[] engines);
    }

    interface Body {
        void run(int rank, Engine e, CommFt world) throws Exception;
    }

    /** Makes n engines on threads, lets {@code setup} see them, runs {@code body} on each; a killed rank's error is its death. */
    private static void run(int n, int direct, Setup setup, Body body) throws Exception {
        run(n, options(direct), setup, body);
    }

    private static void run(int n, Map<String, String> options, Setup setup, Body body) throws Exception {
        LocalJobRuntime job = new LocalJobRuntime(n, options);
        Engine[] engines = new Engine[n];
        List<Thread> made = new ArrayList<>();
        Throwable[] errors = new Throwable[n];
        for (int r = 0; r < n; r++) {
            int rank = r;
            made.add(Thread.ofPlatform().name("make-" + r).start(() -> {
                try {
                    engines[rank] = new Engine(job.rank(rank));
                } catch (Throwable t) {
                    errors[rank] = t;
                }
            }));
        }
        for (Thread t : made) t.join();
        for (Throwable t : errors) if (t != null) throw new AssertionError("engine not made", t);
        setup.accept(job, engines);
        int[] world = new int[n];
        for (int r = 0; r < n; r++) world[r] = r;
        List<Thread> ranks = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            CommFt f = engines[r].registerComm(0, world);
            ranks.add(Thread.ofPlatform().name("rank-" + r).start(() -> {
                try {
                    body.run(rank, engines[rank], f);
                } catch (P2pException e) {
                    if (!String.valueOf(e.getMessage()).contains("simulated death")) errors[rank] = e;
                } catch (Throwable t) {
                    errors[rank] = t;
                }
            }));
        }
        for (Thread t : ranks) t.join();
        for (Engine e : engines) e.close();
        for (int r = 0; r < n; r++) {
            if (errors[r] != null) throw new AssertionError("rank " + r + " failed", errors[r]);
        }
    }

    private static String describe(Map<Integer, Engine.Decision> d) {
        StringBuilder b = new StringBuilder();
        d.forEach((r, x) -> b.append(" rank ").append(r).append(": ").append(Integer.toHexString(x.value()))
                .append(' ').append(java.util.Arrays.toString(x.failedWorld())));
        return b.toString();
    }
}
