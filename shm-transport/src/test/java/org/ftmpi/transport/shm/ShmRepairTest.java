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
 * probe completes from the idle checks, the pair can be re-made again for a second
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
        ShmTransport r = open(job.rank(1).preliminaryInfo(), sink);
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

    @Test
    void aReplacementGetsAFreshPairAndNothingOfTheOldRings() throws Exception {
        SingleCopyTest.Sink s0 = new SingleCopyTest.Sink(), s1 = new SingleCopyTest.Sink();
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
        send(t1, 0, 11, 40); // left unread by rank 0 when rank 1 "dies"
        send(t0, 1, 12, 40); // left unread by the old rank 1

        SingleCopyTest.Sink sr = new SingleCopyTest.Sink();
        ShmTransport r = replace(t0, 7, sr);
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

        if (ShmTransportProvider.cmaWorksHere()) { // the probe completed in the idle polls: single copy
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
