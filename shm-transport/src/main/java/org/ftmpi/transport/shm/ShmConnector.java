package org.ftmpi.transport.shm;

import static org.ftmpi.transport.shm.PairDescriptor.*;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.ftmpi.runtime.SharedMemoryFiles;
import org.ftmpi.transport.FrameSink;

/**
 * Sets up the pair files of one rank during {@code connect}: creates (and reserves) the files
 * it is the lower rank of, attaches to the others, probes cross-memory attach both ways, then
 * unlinks the files it created. Every wait is bounded and sleeps (never a busy loop).
 *
 * <p>FT-MPI REBUILD re-makes the pair of a replaced rank in a fresh file named after the
 * replacement's process id ({@link PairDescriptor#replacementFileName}): the survivor creates it
 * ({@link #createFor}, never waiting, under the engine's progress lock) and the replacement
 * attaches to it in its {@code connect} ({@link #attachFor}). Nothing of the old process's
 * rings can reach either side: the old file is not reused. Cross-memory attach is probed when
 * both sides are there ({@link #settle}, retried by the transport's worker thread).
 *
 * <p><b>Note:</b> {@link #connect} and {@link #attachFor} run on the connecting thread, {@link
 * #createFor} under the engine's progress lock, {@link #settle} on the transport's worker thread
 * (with a scratch of its own).
 */
final class ShmConnector {
    static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(60);

    private final ShmConfig config;
    private final long jobId;
    private final int me;
    private final long myPid;
    private final MemorySegment probe;
    private final long probeToken;
    private final boolean cmaHere;
    private final Posix.CmaScratch scratch;

    ShmConnector(ShmConfig config, long jobId, int me, long myPid, MemorySegment probe, long probeToken,
                 boolean cmaHere, Posix.CmaScratch scratch) {
        this.config = config;
        this.jobId = jobId;
        this.me = me;
        this.myPid = myPid;
        this.probe = probe;
        this.probeToken = probeToken;
        this.cmaHere = cmaHere;
        this.scratch = scratch;
    }

    private Path file(int lo, int hi) {
        return config.dir().resolve(fileName(SharedMemoryFiles.prefix(jobId), lo, hi));
    }

    /** Connects to every listed peer; on failure closes whatever it mapped. */
    ShmPair[] connect(int size, List<Integer> peers) throws IOException {
        ShmPair[] pairs = new ShmPair[size];
        MappedRegion[] regions = new MappedRegion[size];
        List<Path> created = new ArrayList<>();
        int cap = config.ringBytes();
        long bytes = fileBytes(cap);
        try {
            for (int r : peers) {
                if (r < me) continue;
                Path p = file(me, r);
                MappedRegion m = MappedRegion.create(p, bytes, config.unsafeAccess());
                regions[r] = m;
                created.add(p);
                initialise(m.words(), me, r, 0);
            }
            for (int r : peers) {
                if (r > me) continue;
                regions[r] = attach(file(r, me), bytes, r, me);
                writeSide(regions[r].words(), side(1));
            }
            for (int r : peers) {
                int mySide = r > me ? 0 : 1;
                ControlWords w = regions[r].words();
                long peerSide = side(1 - mySide);
                awaitInt(w, peerSide + SIDE_STATE, 0, "rank " + r + " to attach");
                long pid = w.getLongPlain(peerSide + SIDE_PID);
                pairs[r] = new ShmPair(r, mySide, regions[r], cap, w.getIntPlain(SALT_OFFSET), pid, myPid);
                w.putIntRelease(side(mySide) + SIDE_CMA_RESULT, probePeer(w, peerSide, pid, scratch) ? CMA_OK : CMA_FAILED);
            }
            for (int r : peers) {
                ShmPair p = pairs[r];
                ControlWords w = p.region.words();
                awaitInt(w, p.peerSide() + SIDE_CMA_RESULT, 0, "rank " + r + " to probe");
                p.peerReadsUs = config.cmaAllowed() && w.getIntAcquire(p.peerSide() + SIDE_CMA_RESULT) == CMA_OK;
            }
            for (Path p : created) Files.deleteIfExists(p);
            return pairs;
        } catch (IOException | RuntimeException e) {
            for (MappedRegion m : regions) if (m != null) m.close();
            for (Path p : created) Files.deleteIfExists(p);
            throw e;
        }
    }

    /** Writes the header and side {@code mySide} of a new pair file, then release-stores the magic word. */
    private void initialise(ControlWords w, int lo, int hi, int mySide) {
        w.putIntPlain(VERSION_OFFSET, LAYOUT_VERSION);
        w.putLongPlain(JOB_ID_OFFSET, jobId);
        w.putIntPlain(CAPACITY_OFFSET, config.ringBytes());
        w.putIntPlain(LO_RANK_OFFSET, lo);
        w.putIntPlain(HI_RANK_OFFSET, hi);
        w.putIntPlain(SALT_OFFSET, ThreadLocalRandom.current().nextInt());
        writeSide(w, side(mySide));
        w.putIntRelease(MAGIC_OFFSET, MAGIC);
    }

    private Path replacementFile(int peer, long replacementProcId) {
        return config.dir().resolve(replacementFileName(SharedMemoryFiles.prefix(jobId), Math.min(me, peer),
                Math.max(me, peer), replacementProcId));
    }

    /**
     * A pair file made ahead of need for a warm spare ({@link #premake}): a fresh file, mode 0600,
     * its space reserved and mapped, nothing written yet. {@link #createFor} writes it and gives
     * it its replacement name if the spare takes over a rank; otherwise {@link #discard}.
     */
    record Premade(Path file, MappedRegion region) {
        /** Unmaps and removes the file (the spare is gone, or the transport closes). */
        void discard() {
            region.close();
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // the launcher removes the job's files when it ends
            }
        }
    }

    /**
     * REBUILD with warm spares, on a background thread: reserves and maps the pair file this
     * process ({@code myProcId}) will share with warm spare {@code spareProcId} should it take over
     * a rank of this host: the {@code posix_fallocate} and the mapping (about 1 ms warm, 2 ms cold)
     * are done here instead of in the recovery.
     */
    static Premade premake(ShmConfig config, long jobId, long myProcId, long spareProcId) throws IOException {
        Path p = config.dir().resolve(spareFileName(jobId, myProcId, spareProcId));
        Path tmp = p.resolveSibling(p.getFileName() + NEW_SUFFIX);
        MappedRegion m = MappedRegion.create(tmp, fileBytes(config.ringBytes()), config.unsafeAccess());
        try {
            // The same atomic rename the takeover makes: its code is not cold then (its first
            // run cost 0.6-2.5 ms under the progress lock).
            Files.move(tmp, p, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | RuntimeException e) {
            m.close();
            Files.deleteIfExists(tmp);
            throw e;
        }
        return new Premade(p, m);
    }

    /**
     * REBUILD, survivor's side: a fresh pair file for process {@code procId} (pid {@code
     * peerPid}), the replacement of rank {@code peer}: the one made ahead for it when it was a
     * warm spare ({@code made}, else null: made now). Its header and this side are written
     * before it gets its name, so the replacement never maps a half-made file; if it cannot be
     * made, a {@link PairDescriptor#DECLINED_SUFFIX} marker tells the replacement to use another
     * transport. Never waits.
     */
    ShmPair createFor(int peer, long procId, long peerPid, Premade made) throws IOException {
        int mySide = me < peer ? 0 : 1;
        Path p = replacementFile(peer, procId);
        Path from = made != null ? made.file() : p.resolveSibling(p.getFileName() + NEW_SUFFIX);
        int cap = config.ringBytes();
        MappedRegion m = made != null ? made.region() : null;
        try {
            if (m == null) m = MappedRegion.create(from, fileBytes(cap), config.unsafeAccess());
            initialise(m.words(), Math.min(me, peer), Math.max(me, peer), mySide);
            Files.move(from, p, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | RuntimeException e) {
            if (m != null) m.close();
            Files.deleteIfExists(from);
            try {
                Files.createFile(p.resolveSibling(p.getFileName() + DECLINED_SUFFIX));
            } catch (IOException ignored) {
                // the replacement then waits for this pair until its 60 s connect timeout
            }
            throw e;
        }
        ShmPair pair = new ShmPair(peer, mySide, m, cap, m.words().getIntPlain(SALT_OFFSET), peerPid, myPid);
        pair.file = p;
        return pair;
    }

    /**
     * REBUILD, replacement's side (this process): attaches to the file the survivor {@code peer}
     * made for it ({@link #createFor}), unlinks it and probes the survivor. Waits for the file as
     * long as the survivor lives: it makes the file when its recovery starts, at its next MPI
     * call, which a long computation can put off for any time (a note on stderr after 60 s says
     * so). Returns null when the survivor declined (it reaches this process over another
     * transport) or when {@code gone}'s {@link FrameSink#peerGone} says its process has failed meanwhile.
     */
    ShmPair attachFor(int peer, long myProcId, FrameSink gone) throws IOException {
        Path p = replacementFile(peer, myProcId);
        int cap = config.ringBytes();
        Stop stop = new ReplacementWait(p.resolveSibling(p.getFileName() + DECLINED_SUFFIX), gone, peer, me,
                System.nanoTime() + TIMEOUT_NS);
        if (!awaitFile(p, fileBytes(cap), peer, Long.MAX_VALUE, stop)) return null;
        int mySide = me < peer ? 0 : 1;
        MappedRegion m = attach(p, fileBytes(cap), Math.min(me, peer), Math.max(me, peer));
        Files.deleteIfExists(p);
        ControlWords w = m.words();
        writeSide(w, side(mySide));
        long peerSide = side(1 - mySide);
        long pid = w.getLongPlain(peerSide + SIDE_PID);
        ShmPair pair = new ShmPair(peer, mySide, m, cap, w.getIntPlain(SALT_OFFSET), pid, myPid);
        w.putIntRelease(side(mySide) + SIDE_CMA_RESULT, probePeer(w, peerSide, pid, scratch) ? CMA_OK : CMA_FAILED);
        return pair;
    }

    /**
     * A re-made pair's cross-memory-attach probe, one step: once the peer has attached, this side
     * probes it (if it has not yet), and once the peer's result is there it says whether the peer
     * reads this process ({@link ShmPair#peerReadsUs}; until then large messages go as copies).
     * Only for the pairs of {@link #createFor} and {@link #attachFor}, on one thread at a time,
     * which owns {@code s}.
     *
     * @return whether the probe is complete
     */
    boolean settle(ShmPair p, Posix.CmaScratch s) {
        ControlWords w = p.region.words();
        long mine = p.mySide() + SIDE_CMA_RESULT;
        if (w.getIntAcquire(mine) == 0) {
            if (w.getIntAcquire(p.peerSide() + SIDE_STATE) != STATE_ATTACHED) return false;
            w.putIntRelease(mine, probePeer(w, p.peerSide(), p.peerPid, s) ? CMA_OK : CMA_FAILED);
        }
        int theirs = w.getIntAcquire(p.peerSide() + SIDE_CMA_RESULT);
        if (theirs == 0) return false;
        p.peerReadsUs = config.cmaAllowed() && theirs == CMA_OK;
        return true;
    }

    private void writeSide(ControlWords w, long side) {
        w.putLongPlain(side + SIDE_PID, myPid);
        w.putLongPlain(side + SIDE_PROBE_ADDRESS, probe.address());
        w.putLongPlain(side + SIDE_PROBE_TOKEN, probeToken);
        w.putIntRelease(side + SIDE_STATE, STATE_ATTACHED);
    }

    /** A check made while waiting for a file: true stops the wait. */
    private interface Stop {
        boolean now() throws IOException;
    }

    /**
     * {@link #attachFor}'s check: the survivor declined, or its process is gone; a note on stderr
     * once after 60 s. A class, not a lambda: a replacement runs it in its MPI_Init, on the
     * recovery's path, and the first run of a lambda's site spins a class (docs/fault-tolerance.md,
     * "Session 24").
     */
    private static final class ReplacementWait implements Stop {
        private final Path declined;
        private final FrameSink gone;
        private final int peer, me;
        private final long noteAt;
        private boolean noted;

        ReplacementWait(Path declined, FrameSink gone, int peer, int me, long noteAt) {
            this.declined = declined;
            this.gone = gone;
            this.peer = peer;
            this.me = me;
            this.noteAt = noteAt;
        }

        @Override
        public boolean now() throws IOException {
            if (Files.deleteIfExists(declined) || gone.peerGone(peer)) return true;
            if (!noted && System.nanoTime() - noteAt > 0) {
                noted = true;
                System.err.println("ftmpi: rank " + me + " (a replacement) still waits for rank " + peer
                        + "'s shared-memory pair file after 60 s; rank " + peer
                        + " makes it when its recovery starts, at its next MPI call");
            }
            return false;
        }
    }

    /**
     * Waits until rank {@code maker} has created file {@code p} of {@code bytes} bytes (at most
     * {@code timeoutNs}, {@code Long.MAX_VALUE} for no bound); false, at once, when {@code stop}
     * (null: none) says so first.
     */
    private static boolean awaitFile(Path p, long bytes, int maker, long timeoutNs, Stop stop) throws IOException {
        long start = System.nanoTime();
        int naps = 0;
        while (!Files.exists(p) || Files.size(p) < bytes) {
            if (stop != null && stop.now()) return false;
            if (System.nanoTime() - start > timeoutNs) {
                throw new IOException("rank " + maker + " did not create " + p + " within 60 s");
            }
            nap(naps++);
        }
        return true;
    }

    /** Waits for the lower rank's file, maps it and checks that it belongs to the pair (lo, hi). */
    private MappedRegion attach(Path p, long bytes, int lo, int hi) throws IOException {
        awaitFile(p, bytes, lo, TIMEOUT_NS, null);
        MappedRegion m = MappedRegion.open(p, bytes, config.unsafeAccess());
        try {
            ControlWords w = m.words();
            awaitInt(w, MAGIC_OFFSET, MAGIC, "rank " + lo + " to initialise " + p);
            if (w.getIntPlain(VERSION_OFFSET) != LAYOUT_VERSION || w.getLongPlain(JOB_ID_OFFSET) != jobId
                    || w.getIntPlain(CAPACITY_OFFSET) != config.ringBytes()
                    || w.getIntPlain(LO_RANK_OFFSET) != lo || w.getIntPlain(HI_RANK_OFFSET) != hi) {
                throw new IOException(p + " does not describe the pair (" + lo + ", " + hi + ") of this job");
            }
            return m;
        } catch (IOException | RuntimeException e) {
            m.close();
            throw e;
        }
    }

    /** Whether this process can read the peer's probe token with process_vm_readv. */
    private boolean probePeer(ControlWords w, long peerSide, long pid, Posix.CmaScratch s) {
        if (!cmaHere || !config.cmaAllowed()) return false;
        long address = w.getLongPlain(peerSide + SIDE_PROBE_ADDRESS);
        long token = w.getLongPlain(peerSide + SIDE_PROBE_TOKEN);
        MemorySegment got = Arena.ofAuto().allocate(8, 8);
        int rc = Posix.processVmRead(s, pid, got, address, 8);
        return rc == 0 && got.get(ValueLayout.JAVA_LONG, 0) == token;
    }

    /**
     * Waits (60 s at most) until the int at {@code offset} is {@code want}, or with {@code want}
     * 0 until it is not 0 (acquire reads). No lambda: replacements run it in their MPI_Init.
     */
    private static void awaitInt(ControlWords w, long offset, int want, String what) throws IOException {
        long deadline = System.nanoTime() + TIMEOUT_NS;
        int naps = 0;
        while (want == 0 ? w.getIntAcquire(offset) == 0 : w.getIntAcquire(offset) != want) {
            if (System.nanoTime() > deadline) throw new IOException("gave up waiting for " + what + " (60 s)");
            nap(naps++);
        }
    }

    private static void nap(int naps) {
        if (naps < 100) {
            Thread.onSpinWait();
        } else {
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(Math.min(1_000, 10L << Math.min(naps - 100, 7))));
        }
    }
}
