package org.ftmpi.ft.detect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.ftmpi.testutil.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Three detectors over loopback UDP, driven by their own threads (which wake when a beat or a
 * deadline is due and for a datagram, not on a fixed half-period tick): they beat each other
 * without a suspicion, and one that stops beating (closed without BYE: a hang, as far as its
 * observer can tell) is declared by its observer and the news reaches the third.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HeartbeatDetectorTest {
    @Test
    void beatsFlowAndASilentProcessIsDeclaredByItsObserver() throws Exception {
        String[] hosts = {"h", "h", "h"};
        var declared = new ConcurrentHashMap<Integer, String>(); // "observer:subject" -> how
        HeartbeatDetector[] d = ring(7, new long[] {11, 12, 13}, hosts, 400, declared);
        try {
            Await.until("every detector received beats", Duration.ofSeconds(20),
                    () -> java.util.Arrays.stream(d).allMatch(x -> received(x) >= 5));
            assertTrue(declared.isEmpty(), "no suspicion among beating processes: " + declared);
            RingPlan plan = RingPlan.of(7, hosts);
            int silent = 1, observer = plan.successor(silent, new java.util.BitSet()), third = 3 - silent - observer;
            // silent: its socket closes without BYE (close() would say BYE): a hang to the others
            d[silent].closeSilently();
            Await.until("rank " + silent + " declared by its observer " + observer, Duration.ofSeconds(20),
                    () -> declared.containsKey(observer * 10 + silent));
            assertTrue(declared.get(observer * 10 + silent).startsWith("declared failed by rank " + observer + ": no heartbeat"),
                    declared.toString());
            Await.until("rank " + third + " learns of it", Duration.ofSeconds(20),
                    () -> declared.containsKey(third * 10 + silent));
            assertEquals(2, declared.size(), "only the silent process was declared: " + declared);
        } finally {
            for (HeartbeatDetector x : d) x.close();
        }
    }

    /**
     * The overhead benchmark's pause ({@code bench ft-overhead paired}): paused detectors send
     * nothing, and a pause of every detector longer than the timeout is counted as a stall of
     * each process itself, so nobody is declared when they resume.
     */
    @Test
    void aPauseOfEveryDetectorLongerThanTheTimeoutDeclaresNobody() throws Exception {
        int n = 3;
        long timeoutMs = 300;
        var declared = new ConcurrentHashMap<Integer, String>();
        HeartbeatDetector[] d = ring(8, new long[] {21, 22, 23}, new String[] {"h", "h", "h"}, timeoutMs, declared);
        try {
            Await.until("every detector received beats", Duration.ofSeconds(20),
                    () -> java.util.Arrays.stream(d).allMatch(x -> received(x) >= 3));
            for (HeartbeatDetector x : d) x.pause(true);
            long[] sent = new long[n];
            // a beat already being sent when the pause was set may still count: read after one period
            long t0 = System.nanoTime();
            Await.until("one period", Duration.ofSeconds(5), () -> System.nanoTime() - t0 > 40_000_000L);
            for (int r = 0; r < n; r++) sent[r] = sent(d[r]);
            Await.until("three timeouts paused", Duration.ofSeconds(20),
                    () -> System.nanoTime() - t0 > TimeUnit.MILLISECONDS.toNanos(3 * timeoutMs));
            for (int r = 0; r < n; r++) assertEquals(sent[r], sent(d[r]), "rank " + r + " sent beats while paused");
            long[] got = new long[n];
            for (int r = 0; r < n; r++) got[r] = received(d[r]);
            for (HeartbeatDetector x : d) x.pause(false);
            Await.until("beats flow again", Duration.ofSeconds(20), () -> {
                for (int r = 0; r < n; r++) if (received(d[r]) < got[r] + 5) return false;
                return true;
            });
            assertTrue(declared.isEmpty(), "nobody declared after a pause of every detector: " + declared);
        } finally {
            for (HeartbeatDetector x : d) x.close();
        }
    }

    /**
     * Threads waiting in MPI calls drive the detector ({@link HeartbeatDetector#pollFromWaiter},
     * called from the engine's idle loop): while they poll, the rounds are theirs, beats flow
     * and a silent process is still declared and the news relayed by a process whose rounds are
     * all done by its waiters; when they stop polling, the detector thread takes the rounds back
     * and nobody is blamed for the hand-off.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "heartbeat board: {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void waitingThreadsDriveTheRoundsAndTheDetectorThreadTakesThemBackWhenTheyStop(boolean board,
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        int n = 3;
        String[] hosts = {"h", "h", "h"};
        var declared = new ConcurrentHashMap<Integer, String>();
        HeartbeatDetector[] d = ring(9, new long[] {31, 32, 33}, hosts, 600, board ? dir : null, declared);
        boolean[] polling = new boolean[n];
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        Thread[] waiters = new Thread[n];
        for (int r = 0; r < n; r++) {
            HeartbeatDetector x = d[r];
            int me = r;
            polling[r] = true;
            waiters[r] = new Thread(() -> {
                while (!stop.get()) {
                    boolean on;
                    synchronized (polling) {
                        on = polling[me];
                    }
                    if (on) x.pollFromWaiter();
                    java.util.concurrent.locks.LockSupport.parkNanos(200_000); // a waiter's park phase
                }
            }, "waiter-" + r);
            waiters[r].setDaemon(true);
            waiters[r].start();
        }
        try {
            Await.until("waiting threads did rounds on every process, beats flowed", Duration.ofSeconds(20),
                    () -> java.util.Arrays.stream(d).allMatch(x -> waiterRounds(x) >= 5 && received(x) >= 5));
            assertTrue(declared.isEmpty(), "no suspicion while waiters drive: " + declared);

            // process 0's waiters stop (its application computes): its detector thread takes over
            synchronized (polling) {
                polling[0] = false;
            }
            long threadRounds0 = threadRounds(d[0]);
            long got = received(d[plan(hosts).successor(0, new java.util.BitSet())]);
            Await.until("process 0's detector thread beats again", Duration.ofSeconds(20),
                    () -> threadRounds(d[0]) >= threadRounds0 + 5
                            && received(d[plan(hosts).successor(0, new java.util.BitSet())]) >= got + 5);
            assertTrue(declared.isEmpty(), "nobody blamed for the hand-off: " + declared);

            // a silent process (closed without BYE) is declared; the third learns it from a datagram
            synchronized (polling) {
                polling[1] = false;
            }
            silenceAndAwaitTheNews(d, plan(hosts), 1, declared);
        } finally {
            stop.set(true);
            for (Thread t : waiters) t.join(10_000);
            for (HeartbeatDetector x : d) x.close();
        }
    }

    /**
     * Ranks of one host beat through the heartbeat board (a 0600 file in the job's shared-memory
     * directory): most beats are board writes, not datagrams (1 in {@link
     * HeartbeatDetector#DATAGRAM_EVERY} still is), nobody is suspected, and a silent rank is
     * declared and the news reaches the third rank by a datagram announced on the board.
     */
    @Test
    void ranksOfOneHostBeatThroughTheBoard(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        String[] hosts = {"h", "h", "h"};
        var declared = new ConcurrentHashMap<Integer, String>();
        HeartbeatDetector[] d = ring(10, new long[] {41, 42, 43}, hosts, 400, dir, declared);
        try {
            java.nio.file.Path file = HeartbeatBoard.file(dir, 10);
            assertEquals(java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"),
                    java.nio.file.Files.getPosixFilePermissions(file), "the board is private to the job's user");
            Await.until("every detector received 20 beats", Duration.ofSeconds(20),
                    () -> java.util.Arrays.stream(d).allMatch(x -> received(x) >= 20));
            assertTrue(declared.isEmpty(), "no suspicion among beating processes: " + declared);
            for (HeartbeatDetector x : d) {
                assertTrue(counter(x, "board beats ") > counter(x, "beats sent ") / 2,
                        "most beats went through the board: " + x.counters());
            }
            silenceAndAwaitTheNews(d, RingPlan.of(10, hosts), 2, declared); // its board slot stops moving
        } finally {
            for (HeartbeatDetector x : d) x.close();
        }
    }

    @Test
    void theDetectorThreadSleepsAnEighthOfTheTimeoutAtLeastAPeriodWhileWaitersDrive() {
        assertEquals(250_000_000L, HeartbeatDetector.handoffNs(50_000_000L, 2_000_000_000L));
        assertEquals(200_000_000L, HeartbeatDetector.handoffNs(200_000_000L, 1_000_000_000L));
    }

    @Test
    void waitsAreRoundedUpToWholeMilliseconds() {
        assertEquals(0, HeartbeatDetector.ceilMs(-5));
        assertEquals(0, HeartbeatDetector.ceilMs(0));
        assertEquals(1, HeartbeatDetector.ceilMs(1));
        assertEquals(1, HeartbeatDetector.ceilMs(1_000_000));
        assertEquals(25, HeartbeatDetector.ceilMs(24_000_001));
    }

    /**
     * Detectors of one ring over loopback UDP, one per process id, started with a 20 ms period
     * and {@code timeoutMs}; every declaration goes into {@code declared} as observer * 10 + subject.
     */
    private static HeartbeatDetector[] ring(long jobId, long[] procIds, String[] hosts, long timeoutMs,
                                            ConcurrentHashMap<Integer, String> declared) throws Exception {
        return ring(jobId, procIds, hosts, timeoutMs, null, declared);
    }

    /** {@link #ring}, the ranks of one host beating through a heartbeat board in {@code boardDir} (or null). */
    private static HeartbeatDetector[] ring(long jobId, long[] procIds, String[] hosts, long timeoutMs,
                                            java.nio.file.Path boardDir,
                                            ConcurrentHashMap<Integer, String> declared) throws Exception {
        int n = procIds.length;
        InetAddress lo = InetAddress.getLoopbackAddress();
        HeartbeatDetector[] d = new HeartbeatDetector[n];
        InetSocketAddress[] peers = new InetSocketAddress[n];
        for (int r = 0; r < n; r++) {
            d[r] = HeartbeatDetector.open(lo);
            peers[r] = HeartbeatDetector.decodeEndpoint(d[r].endpoint());
        }
        for (int r = 0; r < n; r++) {
            int me = r;
            d[r].start(jobId, new byte[32], me, procIds, hosts, peers, 20, timeoutMs, boardDir, new HeartbeatDetector.Owner() {
                @Override
                public void declared(int rank, long procId, String how, boolean detectedHere) {
                    declared.put(me * 10 + rank, how);
                }

                @Override
                public void fenced(String why) {
                    declared.put(me * 10 + me, "fenced: " + why);
                }
            });
        }
        return d;
    }

    /**
     * Closes {@code silent}'s detector without BYE (a hang, to the others) in a ring of three, and
     * waits until its observer declared it and the third rank learned of it, from a datagram.
     */
    private static void silenceAndAwaitTheNews(HeartbeatDetector[] d, RingPlan plan, int silent,
                                               ConcurrentHashMap<Integer, String> declared) {
        int observer = plan.successor(silent, new java.util.BitSet()), third = 3 - silent - observer;
        d[silent].closeSilently();
        Await.until("rank " + silent + " declared by its observer " + observer, Duration.ofSeconds(20),
                () -> declared.containsKey(observer * 10 + silent));
        Await.until("rank " + third + " learns of it", Duration.ofSeconds(20),
                () -> declared.containsKey(third * 10 + silent));
        assertEquals(2, declared.size(), "only the silent process was declared: " + declared);
    }

    private static RingPlan plan(String[] hosts) {
        return RingPlan.of(9, hosts);
    }

    private static long waiterRounds(HeartbeatDetector d) {
        return counter(d, "rounds by waiting threads ");
    }

    private static long threadRounds(HeartbeatDetector d) {
        return counter(d, "by the detector thread ");
    }

    private static long counter(HeartbeatDetector d, String name) {
        String c = d.counters();
        int i = c.indexOf(name) + name.length();
        int e = c.indexOf(',', i);
        return Long.parseLong(c.substring(i, e < 0 ? c.length() : e));
    }

    private static long sent(HeartbeatDetector d) {
        String c = d.counters(); // "beats sent S, received R, ..."
        int i = c.indexOf("sent ") + "sent ".length();
        return Long.parseLong(c.substring(i, c.indexOf(',', i)));
    }

    private static long received(HeartbeatDetector d) {
        String c = d.counters(); // "beats sent S, received R, ..."
        int i = c.indexOf("received ") + "received ".length();
        return Long.parseLong(c.substring(i, c.indexOf(',', i)));
    }
}
