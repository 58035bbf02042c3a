package org.ftmpi.runtime;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A job whose ranks are threads of one JVM (unit tests, and the threads-as-ranks mode). Each
 * rank gets its own {@link RankRuntime} from {@link #rank(int)}; the ranks still talk to each
 * other through the real transports.
 */
public final class LocalJobRuntime {
    private static final long TIMEOUT_S = 120;
    private final int size;
    private final long jobId;
    private final byte[] secret = new byte[32];
    private final Map<String, String> options;
    private final List<Map<String, byte[]>> endpoints;
    private final ControlListener[] listeners;
    private final CyclicBarrier exchangeBarrier;
    private final CyclicBarrier finalizeBarrier;
    private volatile String aborted;

    public LocalJobRuntime(int size, Map<String, String> options) {
        if (size < 1) throw new IllegalArgumentException("size must be >= 1, got " + size);
        SecureRandom random = new SecureRandom();
        random.nextBytes(secret);
        this.size = size;
        this.jobId = random.nextLong() & Long.MAX_VALUE;
        this.options = Map.copyOf(options);
        this.endpoints = new ArrayList<>(Collections.nCopies(size, null));
        this.listeners = new ControlListener[size];
        this.exchangeBarrier = new CyclicBarrier(size);
        this.finalizeBarrier = new CyclicBarrier(size);
    }

    public int size() { return size; }

    /** The runtime of one rank. */
    public RankRuntime rank(int rank) {
        return new Member(rank);
    }

    /** Aborts the whole local job: every rank's listener hears it. */
    public void abortAll(int code, String reason) {
        aborted = reason;
        for (ControlListener l : listeners) {
            if (l != null) l.abort(code, reason);
        }
    }

    /** Tells every rank but {@code rank} that it failed (the local form of the controller's notice). */
    public void notifyFailed(int failedRank, String how) {
        for (int r = 0; r < size; r++) {
            ControlListener l = listeners[r];
            if (l != null && r != failedRank) l.processFailed(failedRank, failedRank + 1L, how);
        }
    }

    /**
     * Simulates the death of {@code rank} (threads-as-ranks): its own pending and later
     * operations fail as under an abort, so its thread can end, and every other rank gets the
     * failure notice, as from the controller after a SIGKILL.
     */
    public void kill(int rank, String how) {
        ControlListener self = listeners[rank];
        if (self != null) self.abort(137, "rank " + rank + " " + how + " (simulated death)");
        notifyFailed(rank, how);
    }

    public String abortReason() { return aborted; }

    private final class Member implements RankRuntime {
        private final int rank;

        Member(int rank) {
            if (rank < 0 || rank >= size) throw new IllegalArgumentException("rank " + rank + " of " + size);
            this.rank = rank;
        }

        private JobInfo info(List<Map<String, byte[]>> eps) {
            long[] procIds = new long[size];
            String[] hosts = new String[size];
            for (int i = 0; i < size; i++) {
                procIds[i] = i + 1L;
                hosts[i] = "localhost";
            }
            return new JobInfo(jobId, rank, size, procIds, hosts, eps, secret.clone(), options);
        }

        @Override public JobInfo preliminaryInfo() { return info(List.of()); }

        @Override
        public JobInfo exchange(Map<String, byte[]> mine) throws java.io.IOException {
            synchronized (endpoints) {
                endpoints.set(rank, new HashMap<>(mine));
            }
            await(exchangeBarrier, "endpoint exchange");
            synchronized (endpoints) {
                return info(Collections.unmodifiableList(new ArrayList<>(endpoints)));
            }
        }

        @Override public void setListener(ControlListener l) { listeners[rank] = l; }

        @Override public void abort(int exitCode, String reason) { abortAll(exitCode, "rank " + rank + ": " + reason); }

        @Override
        public void finalizeBarrier() throws java.io.IOException {
            if (aborted == null) await(finalizeBarrier, "finalize");
        }

        @Override public void close() { listeners[rank] = null; }

        @Override public boolean ownsProcess() { return false; }

        private void await(CyclicBarrier b, String what) throws java.io.IOException {
            try {
                b.await(TIMEOUT_S, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.IOException(what + " interrupted", e);
            } catch (BrokenBarrierException | TimeoutException e) {
                throw new java.io.IOException(what + ": not every rank arrived within " + TIMEOUT_S + " s", e);
            }
        }
    }

    @Override
    public String toString() {
        return "LocalJobRuntime[size=" + size + ", job=" + Long.toHexString(jobId) + ", listeners="
                + Arrays.stream(listeners).filter(l -> l != null).count() + "]";
    }
}
