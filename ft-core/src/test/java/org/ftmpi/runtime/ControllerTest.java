package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.ftmpi.runtime.wire.Auth;
import org.ftmpi.runtime.wire.AuthException;
import org.ftmpi.runtime.wire.FrameCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The controller and control clients in one JVM, without processes. */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class ControllerTest {
    private static final int N = 3;
    private final byte[] secret = new byte[32];
    private final BlockingQueue<String> events = new LinkedBlockingQueue<>();
    private Controller controller;
    private final List<ControlClient> clients = new ArrayList<>();

    @BeforeEach
    void start() throws IOException {
        Arrays.fill(secret, (byte) 7);
        controller = new Controller(N, new long[] {11, 12, 13}, secret, InetAddress.getLoopbackAddress(),
                new LauncherConsole(false), new Controller.Events() {
                    @Override
                    public void abortRequested(int rank, int code, String reason) {
                        events.add("abort " + rank + " " + code + " " + reason);
                    }

                    @Override
                    public void exchangeImpossible(String message) {
                        events.add("impossible " + message);
                    }

                    @Override
                    public void failureReported(int reporter, int rank, long procId, String how) {
                        events.add("reported " + reporter + " " + rank + " " + procId + " " + how);
                    }
                });
    }

    @AfterEach
    void stop() {
        clients.forEach(ControlClient::close);
        controller.close();
    }

    private ControlClient client(int rank) throws IOException {
        return client(rank, 11 + rank, Map.of("k", "v"));
    }

    /** A rank's client as process {@code procId} (a replacement has a new one). */
    private ControlClient client(int rank, long procId, Map<String, String> options) throws IOException {
        JobInfo pre = ControlClient.preliminary(42, rank, N, procId, "host" + rank, secret, options);
        ControlClient c = new ControlClient(pre, "127.0.0.1", controller.port());
        c.onFenced(why -> events.add("fenced " + rank)); // never halt the test JVM
        clients.add(c);
        return c;
    }

    private static CompletableFuture<JobInfo> exchangeAsync(ControlClient c, String ep) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return c.exchange(Map.of("tcp", ep.getBytes(StandardCharsets.UTF_8)));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    private static CompletableFuture<Void> finalizeAsync(ControlClient c) {
        return CompletableFuture.runAsync(() -> {
            try {
                c.finalizeBarrier();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    private List<ControlClient> exchangeAll() throws Exception {
        List<ControlClient> cs = new ArrayList<>();
        List<CompletableFuture<JobInfo>> fs = new ArrayList<>();
        for (int r = 0; r < N; r++) {
            cs.add(client(r));
            fs.add(exchangeAsync(cs.get(r), "ep" + r));
        }
        for (int r = 0; r < N; r++) {
            JobInfo info = fs.get(r).get(10, TimeUnit.SECONDS);
            assertEquals(r, info.rank());
            assertEquals(N, info.size());
            assertEquals(42, info.jobId());
            assertArrayEquals(new long[] {11, 12, 13}, info.procIds());
            assertArrayEquals(new String[] {"host0", "host1", "host2"}, info.hosts());
            for (int p = 0; p < N; p++) {
                assertArrayEquals(("ep" + p).getBytes(StandardCharsets.UTF_8), info.endpoints().get(p).get("tcp"));
            }
            assertEquals("v", info.option("k", null));
        }
        return cs;
    }

    /**
     * The process state the launcher reads for processes that do not beat yet: a running or
     * sleeping process is not stopped, a stopped one reads T, a gone one 0. A stopped child
     * process (a real SIGSTOP) is what {@code Controller.watchStart} looks for.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void theProcessStateOfARunningAStoppedAndAGoneProcess() throws Exception {
        char self = Controller.processState(ProcessHandle.current().pid());
        assertTrue(self == 'R' || self == 'S', "state " + self);
        Process p = new ProcessBuilder("sleep", "60").start();
        try {
            Signals.send(p.pid(), Signals.SIGSTOP);
            org.ftmpi.testutil.Await.until("the child stopped", java.time.Duration.ofSeconds(30),
                    () -> Controller.processState(p.pid()) == 'T');
            Signals.send(p.pid(), Signals.SIGCONT);
            org.ftmpi.testutil.Await.until("the child running again", java.time.Duration.ofSeconds(30),
                    () -> Controller.processState(p.pid()) == 'S');
        } finally {
            p.destroyForcibly().waitFor();
        }
        assertEquals(0, Controller.processState(p.pid()), "reaped: no /proc entry");
    }

    @Test
    void exchangeThenFinalizeBarrierWaitsForEveryLiveRank() throws Exception {
        List<ControlClient> cs = exchangeAll();
        CompletableFuture<Void> f0 = finalizeAsync(cs.get(0));
        CompletableFuture<Void> f1 = finalizeAsync(cs.get(1));
        assertThrows(TimeoutException.class, () -> f0.get(200, TimeUnit.MILLISECONDS),
                "barrier released before rank 2 arrived");
        assertFalse(f1.isDone(), "barrier released before rank 2 arrived");
        controller.rankExited(2, 13); // rank 2 died after the exchange: the barrier counts live ranks
        f0.get(5, TimeUnit.SECONDS);
        f1.get(5, TimeUnit.SECONDS);
    }

    @Test
    void noticesReachTheListenerOnTheControlThread() throws Exception {
        List<ControlClient> cs = exchangeAll();
        BlockingQueue<String> seen = new LinkedBlockingQueue<>();
        cs.get(0).setListener(new ControlListener() {
            @Override
            public void processFailed(int rank, long procId, String how) {
                seen.add(Thread.currentThread().getName() + " failed " + rank + " " + procId + " " + how);
            }

            @Override
            public void abort(int exitCode, String reason) {
                seen.add(Thread.currentThread().getName() + " abort " + exitCode + " " + reason);
            }
        });
        controller.notifyFailure(2, 13, "killed by signal 9 (SIGKILL)");
        controller.notifyAbort(137, "rank 2 died");
        assertEquals("ftmpi-control failed 2 13 killed by signal 9 (SIGKILL)", seen.poll(5, TimeUnit.SECONDS));
        assertEquals("ftmpi-control abort 137 rank 2 died", seen.poll(5, TimeUnit.SECONDS));
        assertTrue(cs.get(0).preliminaryInfo().secret().length == 32);
    }

    /**
     * Issue 7, session 7: the death watch's notice must not wait for a thread that holds the
     * controller's monitor (the connection threads log under it, and a loaded machine preempts
     * them there): {@code unfinalizedRank} and {@code notifyFailure} take no monitor.
     */
    @Test
    void aNoticeNeedsNoMonitorThatALoggingThreadMayHold() throws Exception {
        List<ControlClient> cs = exchangeAll();
        BlockingQueue<String> seen = new LinkedBlockingQueue<>();
        cs.get(0).setListener(new ControlListener() {
            @Override
            public void processFailed(int rank, long procId, String how) {
                seen.add(rank + " " + procId + " " + how);
            }

            @Override
            public void abort(int exitCode, String reason) {
            }
        });
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> holding = new CompletableFuture<>();
        Thread holder = Thread.ofPlatform().name("monitor-holder").start(() -> {
            synchronized (controller) {
                holding.complete(null);
                release.join();
            }
        });
        try {
            holding.get(10, TimeUnit.SECONDS);
            CompletableFuture<Integer> told = CompletableFuture.supplyAsync(() -> {
                int r = controller.unfinalizedRank(13);
                controller.notifyFailure(r, 13, Job.WATCHED_HOW);
                return r;
            });
            assertEquals("2 13 " + Job.WATCHED_HOW, seen.poll(10, TimeUnit.SECONDS),
                    "the notice went out while another thread held the controller's monitor");
            assertEquals(2, told.get(10, TimeUnit.SECONDS));
            assertEquals(-1, controller.unfinalizedRank(99), "no rank runs as process id 99");
        } finally {
            release.complete(null);
            holder.join();
        }
    }

    @Test
    void aFailureIsDeliveredOnceAndTheDeclaredProcessIsFenced() throws Exception {
        List<ControlClient> cs = exchangeAll();
        BlockingQueue<String> seen = new LinkedBlockingQueue<>();
        cs.get(0).setListener(new ControlListener() {
            @Override
            public void processFailed(int rank, long procId, String how) {
                seen.add(rank + " " + how);
            }

            @Override
            public void abort(int exitCode, String reason) {
            }
        });
        controller.notifyFailure(2, 13, "killed by signal 9 (SIGKILL)");
        controller.notifyFailure(2, 13, "killed by signal 9 (SIGKILL)");
        // the controller's notice, or (when rank 1's heartbeat carried it first) the ring's relay of it
        String first = seen.poll(5, TimeUnit.SECONDS);
        assertTrue(List.of("2 killed by signal 9 (SIGKILL)", "2 declared failed (notice relayed by rank 1)").contains(first),
                "the first delivery: " + first);
        // rank 2 still beats: the survivors answer FENCED, and it finds itself dead
        assertEquals("fenced 2", events.poll(5, TimeUnit.SECONDS));
        String twice = seen.poll(300, TimeUnit.MILLISECONDS);
        assertNull(twice, "delivered twice: " + twice);
    }

    @Test
    void abortRequestReachesTheJob() throws Exception {
        List<ControlClient> cs = exchangeAll();
        cs.get(1).abort(5, "bad input");
        assertEquals("abort 1 5 bad input", events.poll(5, TimeUnit.SECONDS));
    }

    @Test
    void rankExitingWithoutRegisteringMakesTheExchangeImpossible() throws Exception {
        exchangeAsync(client(0), "ep0");
        controller.rankExited(1, 12);
        String e = events.poll(5, TimeUnit.SECONDS);
        assertNotNull(e);
        assertTrue(e.startsWith("impossible "), e);
    }

    /**
     * REBUILD with a warm spare: the controller hands rank 2 to process 20 before the job's
     * waitpid thread reports the exit of process 13, its old one. That late report must not mark
     * the rank exited: the replacement's REGISTER is accepted and it gets the table. (Under load
     * the refused REGISTER ended a replacement before MPI_Init and aborted the job.)
     */
    @Test
    void theOldProcessExitReportedAfterTheHandOverDoesNotRefuseTheReplacement() throws Exception {
        exchangeAll();
        controller.replace(2, 20);
        controller.rankExited(2, 13);
        ControlClient replacement = client(2, 20, Map.of("restarted", "true"));
        JobInfo info = exchangeAsync(replacement, "ep2b").get(10, TimeUnit.SECONDS);
        assertEquals(2, info.rank());
        assertEquals(20, info.procIds()[2], "the table names the replacement");
    }

    /**
     * Issue 8, session 18: two ranks replaced by new processes in consecutive recovery rounds.
     * The later replacement registers first; it must not join before the earlier one (which
     * would then wait in MPI_Init for its connection, made only after the next round: the job
     * hung until an accept timeout). It gets its table once the earlier one joined, and every
     * other rank hears of the replacements in the order they were started.
     */
    @Test
    void aReplacementThatRegistersFirstJoinsAfterTheOneStartedBeforeIt() throws Exception {
        BlockingQueue<String> seen = ranks1And2ReplacedInThatOrder();
        ControlClient second = client(2, 22, Map.of("restarted", "true"));
        CompletableFuture<JobInfo> secondTable = exchangeAsync(second, "ep2b");
        awaitRegistered(2);
        assertFalse(secondTable.isDone(), "rank 2's replacement got its table before rank 1's joined");
        assertNull(seen.poll(), "REPLACED for a replacement that has not joined");

        ControlClient first = client(1, 21, Map.of("restarted", "true"));
        JobInfo firstInfo = exchangeAsync(first, "ep1b").get(10, TimeUnit.SECONDS);
        assertEquals(Map.of(), firstInfo.endpoints().get(2), "rank 2 is still being replaced for the first one");
        JobInfo secondInfo = secondTable.get(10, TimeUnit.SECONDS);
        assertArrayEquals("ep1b".getBytes(StandardCharsets.UTF_8), secondInfo.endpoints().get(1).get("tcp"));
        assertArrayEquals(new long[] {11, 21, 22}, secondInfo.procIds());
        assertEquals("replaced 1 21", seen.poll(5, TimeUnit.SECONDS));
        assertEquals("replaced 2 22", seen.poll(5, TimeUnit.SECONDS));
    }

    /** The earlier replacement dies before it registers: the later one joins at once, without it. */
    @Test
    void aDeferredReplacementJoinsWhenTheEarlierOneDiesBeforeRegistering() throws Exception {
        BlockingQueue<String> seen = ranks1And2ReplacedInThatOrder();
        CompletableFuture<JobInfo> secondTable = exchangeAsync(client(2, 22, Map.of("restarted", "true")), "ep2b");
        awaitRegistered(2);
        assertFalse(secondTable.isDone());
        controller.rankExited(1, 21);
        JobInfo info = secondTable.get(10, TimeUnit.SECONDS);
        assertEquals(Map.of(), info.endpoints().get(1), "rank 1's replacement died before joining");
        assertEquals("replaced 2 22", seen.poll(5, TimeUnit.SECONDS));
    }

    /** Ranks 1 then 2 die and get new processes 21 and 22; rank 0's REPLACED notices go to the queue returned. */
    private BlockingQueue<String> ranks1And2ReplacedInThatOrder() throws Exception {
        List<ControlClient> cs = exchangeAll();
        BlockingQueue<String> seen = new LinkedBlockingQueue<>();
        cs.get(0).setListener(new ControlListener() {
            @Override
            public void processFailed(int rank, long procId, String how) {
            }

            @Override
            public void abort(int exitCode, String reason) {
            }

            @Override
            public void processReplaced(int rank, long procId, String host, Map<String, byte[]> endpoints) {
                seen.add("replaced " + rank + " " + procId);
            }
        });
        controller.replace(1, 21);
        controller.rankExited(1, 12);
        controller.replace(2, 22);
        controller.rankExited(2, 13);
        return seen;
    }

    private void awaitRegistered(int rank) {
        org.ftmpi.testutil.Await.until("rank " + rank + " registered", java.time.Duration.ofSeconds(10),
                () -> controller.isRegistered(rank));
    }

    @Test
    void wrongSecretIsRejectedAndTheConnectionClosed() throws Exception {
        byte[] wrong = secret.clone();
        wrong[0] ^= 1;
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), controller.port())) {
            DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            assertThrows(AuthException.class, () -> Auth.client(in, out, wrong));
        }
        JobInfo pre = ControlClient.preliminary(42, 0, N, 11, "h", wrong, Map.of());
        assertThrows(IOException.class, () -> new ControlClient(pre, "127.0.0.1", controller.port()));
    }

    @Test
    void clientThatNeverAuthenticatesCannotRegister() throws Exception {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), controller.port())) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            FrameCodec.write(out, ControlMessages.register(new ControlMessages.Register(0, 11, "h", Map.of())));
            s.setSoTimeout(5_000);
            assertEquals(-1, s.getInputStream().read(), "controller must close the connection");
        }
    }

    @Test
    void badFrameAfterAuthenticationClosesTheConnection() throws Exception {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), controller.port())) {
            DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            Auth.client(in, out, secret);
            out.write(new byte[] {0, 0, 0, 2, 99, 10}); // wire version 99
            out.flush();
            s.setSoTimeout(5_000);
            assertEquals(-1, in.read(), "controller must close the connection");
        }
    }

    @Test
    void clientKeepsRunningWhenTheControllerIsGone() throws Exception {
        List<ControlClient> cs = exchangeAll();
        controller.close();
        CompletableFuture<Void> f = finalizeAsync(cs.get(0));
        f.get(5, TimeUnit.SECONDS);
    }

    @Test
    void singletonRuntimeWithoutLauncher() throws Exception {
        try (RankRuntime rt = RankRuntimes.fromEnvironment(Map.of())) {
            JobInfo pre = rt.preliminaryInfo();
            assertEquals(0, pre.rank());
            assertEquals(1, pre.size());
            assertEquals(32, pre.secret().length);
            JobInfo info = rt.exchange(Map.of("tcp", new byte[] {1}));
            assertArrayEquals(new byte[] {1}, info.endpoints().get(0).get("tcp"));
            rt.finalizeBarrier();
        }
    }

    @Test
    void launcherEnvironmentWithoutRankMainIsAnError() {
        assertThrows(IllegalStateException.class,
                () -> RankRuntimes.fromEnvironment(Map.of(RuntimeEnv.RANK, "0")));
    }

    @Test
    void optionsSurviveTheEnvironmentEncoding() {
        Map<String, String> m = Map.of("a b", "c&d=e", "tcp-bind", "10.0.0.1");
        assertEquals(m, RuntimeEnv.decodeOptions(RuntimeEnv.encodeOptions(m)));
    }
}
