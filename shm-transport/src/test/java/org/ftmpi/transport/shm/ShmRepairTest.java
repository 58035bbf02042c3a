package org.ftmpi.transport.shm;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.ftmpi.runtime.JobInfo;
import org.ftmpi.runtime.LocalJobRuntime;
import org.ftmpi.runtime.SharedMemoryFiles;
import org.ftmpi.transport.FrameHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * FT-MPI REBUILD re-makes a survivor's shared-memory pair with the replacement of a rank (in one
 * JVM: rank 0, the old rank 1, and transports standing for its replacements): records the old
 * process left in either ring never reach the new pair, frames flow both ways, the single-copy
 * probe completes on the transports' worker threads, the pair can be re-made again for a second
 * replacement, no file is left, and a replacement does not wait for a survivor known failed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmRepairTest {
    private final List<ShmTransport> opened = new ArrayList<>();
    private final Arena arena = Arena.ofShared();
    private final LocalJobRuntime job = new LocalJobRuntime(2, Map.of());
    private final List<Map<String, byte[]>> endpoints = new ArrayList<>(List.of(Map.of(), Map.of()));

    @AfterEach
    void close() {
        opened.forEach(ShmTransport::close);
        arena.close();
    }

    private ShmTransport open(JobInfo pre, SingleCopyTest.Sink sink) throws Exception {
        ShmConfig config = ShmConfig.from(pre);
        ShmTransport t = new ShmTransport(pre, sink, config, ShmTransportProvider.hostKey(config.dir()),
                ShmTransportProvider.cmaWorksHere());
        opened.add(t);
        return t;
    }

    /** The job as rank {@code rank} knows it: the current endpoints, rank 1 being process {@code procId1}. */
    private JobInfo table(int rank, long procId1, boolean restarted) {
        JobInfo p = job.rank(rank).preliminaryInfo();
        Map<String, String> options = new HashMap<>(p.options());
        if (restarted) options.put("restarted", "true");
        return new JobInfo(p.jobId(), rank, 2, new long[] {p.procIds()[0], procId1}, p.hosts(), List.copyOf(endpoints),
                p.secret(), Map.copyOf(options));
    }

    private static void send(ShmTransport from, int to, int tag, int length) throws Exception {
        MemorySegment h = MemorySegment.ofArray(new byte[FrameHeader.BYTES]);
        FrameHeader.write(h, FrameHeader.EAGER, 0, 0, tag, 0, length, 0, 0, 0, length);
        MemorySegment payload = MemorySegment.ofArray(new byte[length]);
        payload.fill((byte) tag);
        from.send(to, h, payload, 0, length);
    }

    /** The replacement of rank 1 (process {@code procId}) connects on its own thread while rank 0 re-makes the pair. */
    private ShmTransport replace(ShmTransport survivor, long procId, SingleCopyTest.Sink sink) throws Exception {
        return replaceWith(survivor, procId, open(job.rank(1).preliminaryInfo(), sink));
    }

    /** As {@link #replace}, with the replacement's transport opened already (a warm spare's). */
    private ShmTransport replaceWith(ShmTransport survivor, long procId, ShmTransport r) throws Exception {
        endpoints.set(1, Map.of("shm", r.localEndpoint()));
        Throwable[] err = new Throwable[1];
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                r.connect(table(1, procId, true));
            } catch (Throwable e) {
                err[0] = e;
            }
        });
        assertTrue(survivor.reconnect(1, procId, endpoints.get(1)), "the pair is re-made");
        t.join();
        if (err[0] != null) throw new AssertionError(err[0]);
        assertTrue(r.reaches(0));
        return r;
    }

    private List<Path> filesOfTheJob() throws Exception {
        String prefix = SharedMemoryFiles.prefix(job.rank(0).preliminaryInfo().jobId());
        try (Stream<Path> s = Files.list(Path.of(SharedMemoryFiles.DEFAULT_DIR))) {
            return s.filter(p -> p.getFileName().toString().startsWith(prefix)).toList();
        }
    }

    /** Both transports progressed {@code n} times: idle polls, whose checks complete the probe. */
    private static void idle(int n, ShmTransport a, ShmTransport b) {
        for (int i = 0; i < n; i++) {
            a.progress();
            b.progress();
        }
    }

    /**
     * Rank 0 ({@code t0}, sink {@code s0}) and the replacement of rank 1 ({@code r}, sink {@code
     * sr}): nothing of the old rings reaches either side, no file of the job is left, and one
     * frame goes each way.
     */
    private void assertFreshPair(ShmTransport t0, ShmTransport r, SingleCopyTest.Sink s0, SingleCopyTest.Sink sr)
            throws Exception {
        idle(200, t0, r);
        assertEquals(List.of(), s0.payloads, "nothing of the old process's ring reaches the survivor");
        assertEquals(List.of(), sr.payloads, "nothing of the old ring reaches the replacement");
        assertEquals(List.of(), filesOfTheJob(), "the re-made pair's file is unlinked once both sides mapped it");
        send(t0, 1, 21, 100);
        send(r, 0, 22, 10);
        idle(2, t0, r);
        assertEquals(1, sr.payloads.size());
        assertEquals(21, sr.payloads.get(0)[99]);
        assertEquals(1, s0.payloads.size());
        assertEquals(22, s0.payloads.get(0)[9]);
    }

    /** Ranks 0 and 1 (process id 2) connected over shared memory, as at start-up. */
    private ShmTransport[] connected(SingleCopyTest.Sink s0, SingleCopyTest.Sink s1) throws Exception {
        ShmTransport t0 = open(job.rank(0).preliminaryInfo(), s0);
        ShmTransport t1 = open(job.rank(1).preliminaryInfo(), s1);
        endpoints.set(0, Map.of("shm", t0.localEndpoint()));
        endpoints.set(1, Map.of("shm", t1.localEndpoint()));
        Thread c1 = Thread.ofPlatform().start(() -> {
            try {
                t1.connect(table(1, 2, false));
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        t0.connect(table(0, 2, false));
        c1.join();
        return new ShmTransport[] {t0, t1};
    }

    @Test
    void aReplacementGetsAFreshPairAndNothingOfTheOldRings() throws Exception {
        SingleCopyTest.Sink s0 = new SingleCopyTest.Sink(), s1 = new SingleCopyTest.Sink();
        ShmTransport[] ts = connected(s0, s1);
        ShmTransport t0 = ts[0], t1 = ts[1];
        send(t1, 0, 11, 40); // left unread by rank 0 when rank 1 "dies"
        send(t0, 1, 12, 40); // left unread by the old rank 1

        SingleCopyTest.Sink sr = new SingleCopyTest.Sink();
        ShmTransport r = replace(t0, 7, sr);
        assertFreshPair(t0, r, s0, sr);

        if (ShmTransportProvider.cmaWorksHere()) { // the probe completes on the worker threads: single copy
            while (!t0.singleCopyTo(1) || !r.singleCopyTo(0)) Thread.sleep(1);
            int len = 100_000;
            sr.target = arena.allocate(len, 64);
            MemorySegment src = arena.allocate(len, 64);
            src.fill((byte) 5);
            MemorySegment h = MemorySegment.ofArray(new byte[FrameHeader.BYTES]);
            FrameHeader.write(h, FrameHeader.DATA, 0, 0, 0, 0, len, 0, 1, 2, 0);
            t0.sendPinned(1, h, src, 0, len);
            while (!t0.released(1)) r.progress();
            assertEquals(1, r.cmaCalls(), "read with process_vm_readv");
            assertEquals(5, sr.target.get(ValueLayout.JAVA_BYTE, len - 1));
        }

        send(r, 0, 31, 40); // left unread: the first replacement dies too
        SingleCopyTest.Sink sr2 = new SingleCopyTest.Sink();
        ShmTransport r2 = replace(t0, 8, sr2);
        int before = s0.payloads.size();
        idle(200, t0, r2);
        assertEquals(before, s0.payloads.size(), "nothing of the first replacement's ring reaches the survivor");
        send(r2, 0, 41, 8);
        idle(2, t0, r2);
        assertEquals(41, s0.payloads.get(s0.payloads.size() - 1)[7]);
        assertEquals(2, t0.repaired());
        assertEquals(List.of(), s0.lost, "a replaced rank is not reported lost");
    }

    /**
     * Warm spares: rank 0 makes a pair file for each spare ahead of need (fresh, mode 0600, under
     * the job's prefix); a spare that is gone has its file removed; the spare that takes over
     * rank 1 gets the file made for it (nothing of the old process's rings reaches either side,
     * frames flow both ways, no file is left); one still unused when the transport closes is
     * removed.
     */
    @Test
    void aPairFileMadeAheadForAWarmSpareIsTakenAtTheTakeoverAndRemovedOtherwise() throws Exception {
        SingleCopyTest.Sink s0 = new SingleCopyTest.Sink(), s1 = new SingleCopyTest.Sink();
        ShmTransport[] ts = connected(s0, s1);
        ShmTransport t0 = ts[0], t1 = ts[1];
        SingleCopyTest.Sink sr = new SingleCopyTest.Sink();
        ShmTransport spare = open(job.rank(1).preliminaryInfo(), sr);
        Map<String, byte[]> spareEndpoints = Map.of("shm", spare.localEndpoint());
        t0.prepareSpare(7, spareEndpoints).toCompletableFuture().get();
        t0.prepareSpare(9, spareEndpoints).toCompletableFuture().get();
        assertNull(t0.prepareSpare(7, spareEndpoints), "one file per spare");
        assertNull(t0.prepareSpare(11, Map.of("tcp", new byte[4])), "no file for a spare without shared memory here");
        long jobId = job.rank(0).preliminaryInfo().jobId(), maker = job.rank(0).preliminaryInfo().procIds()[0];
        Path made7 = Path.of(SharedMemoryFiles.DEFAULT_DIR, PairDescriptor.spareFileName(jobId, maker, 7));
        Path made9 = Path.of(SharedMemoryFiles.DEFAULT_DIR, PairDescriptor.spareFileName(jobId, maker, 9));
        assertEquals(List.of(made7, made9), filesOfTheJob().stream().sorted().toList());
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(made7)));

        t0.dropSpare(9); // the spare died while waiting
        assertEquals(List.of(made7), filesOfTheJob());

        send(t1, 0, 11, 40); // left unread by rank 0 when rank 1 "dies"
        send(t0, 1, 12, 40); // left unread by the old rank 1
        ShmTransport r = replaceWith(t0, 7, spare);
        assertEquals(1, t0.premadeConnections(), "the file made ahead was taken");
        assertFreshPair(t0, r, s0, sr);
        assertEquals(List.of(), s0.lost, "a replaced rank is not reported lost");

        t0.prepareSpare(13, spareEndpoints).toCompletableFuture().get();
        assertEquals(1, filesOfTheJob().size());
        t0.close();
        assertEquals(List.of(), filesOfTheJob(), "closing removes a file made for a spare that was never used");
    }

    @Test
    void aReplacementDoesNotWaitForASurvivorKnownFailed() throws Exception {
        SingleCopyTest.Sink gone = new SingleCopyTest.Sink();
        gone.gone = true;
        ShmTransport t0 = open(job.rank(0).preliminaryInfo(), new SingleCopyTest.Sink());
        endpoints.set(0, Map.of("shm", t0.localEndpoint()));
        ShmTransport r = open(job.rank(1).preliminaryInfo(), gone);
        endpoints.set(1, Map.of("shm", r.localEndpoint()));
        r.connect(table(1, 9, true)); // rank 0 never makes the file
        assertFalse(r.reaches(0));
    }
}
