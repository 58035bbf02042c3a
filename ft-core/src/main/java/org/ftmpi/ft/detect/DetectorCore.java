package org.ftmpi.ft.detect;

import java.util.BitSet;

/**
 * The heartbeat ring detector and the failure broadcast of one process, as a state machine
 * without threads, sockets or clocks: the owner feeds it the time ({@link #tick}) and the
 * decoded datagrams ({@link #receive}), and it answers through {@link Actions}. Unit tests drive
 * many of them over a simulated network; {@link HeartbeatDetector} drives one over UDP.
 *
 * <p>Protocol:
 * <ul>
 * <li>Every {@code period} a process sends a HEARTBEAT to its nearest live successor on the
 *     {@link RingPlan} (earlier, by at most half a period, when its predecessor's beat arrives
 *     first: the ring's beats fall into step); the beat carries the set of ranks the sender knows to be failed
 *     (anti-entropy: a notice lost on the way still travels the ring).</li>
 * <li>A process observes its nearest live predecessor. When no beat came for {@code timeout}
 *     it declares the predecessor failed — suspicion is final — and broadcasts FAILED to its
 *     chord fingers ({@link RingPlan#fingers}); every process forwards the first FAILED it
 *     gets for a rank to its own fingers, so the notice reaches every survivor in at most
 *     ceil(log2 n) hops over redundant paths. Then it adopts the next live predecessor, with a
 *     fresh deadline.</li>
 * <li>Jitter slack: if the observer itself did not run for longer than expected (its own GC or
 *     a scheduling pause), the deadline moves by the time it lost, so only the peer's silence
 *     counts.</li>
 * <li>Fencing: a datagram from a declared process is dropped and answered with FENCED; a
 *     process that sees itself named failed (FENCED, FAILED, or in a heartbeat's failed set)
 *     calls {@link Actions#fenced} and must end.</li>
 * <li>A process leaving after MPI_Finalize sends BYE; its observer skips it without a
 *     failure. After {@link #finalizeDone()} nothing is declared by timeout any more.</li>
 * </ul>
 *
 * <p><b>Note:</b> thread-safe (all methods synchronized); callbacks run under the lock and
 * must not block.
 */
public final class DetectorCore {
    /** What the detector asks of its owner. */
    public interface Actions {
        /** Sends {@code m} to {@code toRank} (best effort; losses are tolerated). */
        void send(int toRank, DetectMessage m);

        /**
         * This process learned, for the first time, that {@code rank} failed.
         *
         * @param detectedHere true when this process's own observation declared it
         */
        void declared(int rank, long procId, String how, boolean detectedHere);

        /** This process was declared failed by the others; it must end at once. */
        void fenced(String why);
    }

    private final int me;
    private final int n;
    private final long[] procIds;
    private final RingPlan plan;
    private final long periodNs;
    private final long timeoutNs;
    private final long tickNs;
    private final long stallSlackNs;
    private final Actions actions;
    private final BitSet failed = new BitSet();
    private final BitSet left = new BitSet();
    private final long[] lastSeq;
    private final long[] lastFencedReplyNs;
    private long seq;
    private int pred = -1;
    private long lastBeatNs;
    private long deadlineNs;
    private long nextBeatNs;
    private long lastTickNs;
    private boolean started;
    private boolean passive;
    private boolean fencedSelf;
    private boolean leaving;
    // counters
    private long beatsSent;
    private long beatsReceived;
    private long dropped;
    private long stalls;
    private long suspicions;

    /**
     * @param tickNs the longest time the owner waits between two {@link #tick} calls when
     *               nothing arrives; a longer gap counts as a stall of this process
     */
    public DetectorCore(int me, long[] procIds, RingPlan plan, long periodNs, long timeoutNs, long tickNs,
                        Actions actions) {
        if (periodNs <= 0 || timeoutNs <= periodNs) {
            throw new IllegalArgumentException("need 0 < period < timeout, got " + periodNs + "/" + timeoutNs);
        }
        this.me = me;
        this.n = procIds.length;
        this.procIds = procIds.clone();
        this.plan = plan;
        this.periodNs = periodNs;
        this.timeoutNs = timeoutNs;
        this.tickNs = tickNs;
        this.stallSlackNs = Math.max(tickNs, 5_000_000L);
        this.actions = actions;
        this.lastSeq = new long[n];
        this.lastFencedReplyNs = new long[n];
    }

    /**
     * Starts observing; the first deadline is {@code startGraceNs} later than the normal
     * timeout, since the processes start their detectors at slightly different times.
     */
    public synchronized void start(long nowNs, long startGraceNs) {
        started = true;
        pred = plan.predecessor(me, gone());
        lastBeatNs = nowNs;
        deadlineNs = nowNs + timeoutNs + startGraceNs;
        nextBeatNs = nowNs;
        lastTickNs = nowNs;
    }

    /** Time-driven work: emit a beat when due, check the predecessor's deadline. */
    public synchronized void tick(long nowNs) {
        if (!started || fencedSelf) return;
        long gap = nowNs - lastTickNs;
        if (gap > tickNs + stallSlackNs) {
            deadlineNs += gap - tickNs; // this process was not running: do not blame the peer
            stalls++;
        }
        lastTickNs = nowNs;
        if (!leaving && nowNs - nextBeatNs >= 0) beat(nowNs);
        if (!passive && pred >= 0 && nowNs - deadlineNs > 0) {
            suspicions++;
            int p = pred;
            declare(p, procIds[p], "declared failed by rank " + me + ": no heartbeat for "
                    + (nowNs - lastBeatNs) / 1_000_000 + " ms", true, nowNs);
        }
    }

    /** Sends a HEARTBEAT to the nearest live successor; the next one is due a period later. */
    private void beat(long nowNs) {
        int succ = plan.successor(me, gone());
        if (succ >= 0) {
            actions.send(succ, DetectMessage.heartbeat(me, procIds[me], ++seq, (BitSet) failed.clone()));
            beatsSent++;
        }
        nextBeatNs = nowNs + periodNs;
    }

    /** When the owner should call {@link #tick} next at the latest. */
    public synchronized long nextDueNs() {
        long due = nextBeatNs;
        if (!passive && pred >= 0 && deadlineNs - due < 0) due = deadlineNs;
        return due;
    }

    /** A verified datagram arrived. */
    public synchronized void receive(DetectMessage m, long nowNs) {
        if (!started || fencedSelf) return;
        int from = m.from();
        if (from < 0 || from >= n || from == me || m.fromProcId() != procIds[from] || m.seq() <= lastSeq[from]) {
            dropped++;
            return;
        }
        lastSeq[from] = m.seq();
        if (failed.get(from)) {
            dropped++;
            if (nowNs - lastFencedReplyNs[from] >= periodNs || lastFencedReplyNs[from] == 0) {
                lastFencedReplyNs[from] = nowNs;
                actions.send(from, DetectMessage.fenced(me, procIds[me], ++seq, from));
            }
            return;
        }
        switch (m.type()) {
            case DetectMessage.HEARTBEAT -> {
                beatsReceived++;
                if (m.failed().get(me)) {
                    fence("rank " + from + " lists this process as failed");
                    return;
                }
                for (int r = m.failed().nextSetBit(0); r >= 0 && r < n; r = m.failed().nextSetBit(r + 1)) {
                    if (!failed.get(r)) {
                        declareQuietly(r, "declared failed (notice relayed by rank " + from + ")", nowNs);
                    }
                }
                if (from == pred) {
                    lastBeatNs = nowNs;
                    deadlineNs = nowNs + timeoutNs;
                    // Beat now if due within half a period: the owner's thread is awake for this
                    // datagram anyway, and the beats of the ring fall into step, one wake-up a
                    // period instead of two. Beats are never closer than half a period.
                    if (!leaving && nextBeatNs - nowNs <= periodNs / 2) beat(nowNs);
                }
            }
            case DetectMessage.FAILED -> {
                int s = m.subject();
                if (s == me) {
                    fence(m.how());
                } else if (s >= 0 && s < n && m.subjectProcId() == procIds[s] && !failed.get(s)) {
                    declare(s, m.subjectProcId(), m.how(), false, nowNs);
                }
            }
            case DetectMessage.FENCED -> {
                if (m.subject() == me) fence("rank " + from + " fenced this process");
            }
            case DetectMessage.BYE -> {
                left.set(from);
                repair(nowNs);
            }
            default -> dropped++;
        }
    }

    /**
     * A failure learned elsewhere (the controller's notice): recorded, the ring repaired, not
     * re-broadcast (the controller told everybody). Returns whether it was new here.
     */
    public synchronized boolean notice(int rank, long procId, String how, long nowNs) {
        if (rank == me) {
            fence(how);
            return false;
        }
        if (rank < 0 || rank >= n || failed.get(rank)) return false;
        failed.set(rank);
        actions.declared(rank, procId, how, false);
        repair(nowNs);
        return true;
    }

    /** Every live rank reached MPI_Finalize: stop declaring by timeout. */
    public synchronized void finalizeDone() {
        passive = true;
    }

    /** This process stops: tell the observer (twice, datagrams may be lost), stop beating. */
    public synchronized void leave() {
        if (leaving || !started || fencedSelf) return;
        leaving = true;
        passive = true;
        int succ = plan.successor(me, gone());
        if (succ >= 0) {
            actions.send(succ, DetectMessage.bye(me, procIds[me], ++seq));
            actions.send(succ, DetectMessage.bye(me, procIds[me], ++seq));
        }
    }

    public synchronized boolean isFailed(int rank) {
        return failed.get(rank);
    }

    /** The rank this process observes now, or -1. */
    public synchronized int observed() {
        return pred;
    }

    /** beats sent, beats received, datagrams dropped, own stalls compensated, suspicions. */
    public synchronized String counters() {
        return "beats sent " + beatsSent + ", received " + beatsReceived + ", dropped " + dropped
                + ", own stalls " + stalls + ", suspicions " + suspicions;
    }

    private void declare(int r, long procId, String how, boolean here, long nowNs) {
        failed.set(r);
        actions.declared(r, procId, how, here);
        for (int f : plan.fingers(me, gone())) {
            actions.send(f, DetectMessage.failed(me, procIds[me], ++seq, r, procId, here ? me : -1, how));
        }
        repair(nowNs);
    }

    private void declareQuietly(int r, String how, long nowNs) {
        failed.set(r);
        actions.declared(r, procIds[r], how, false);
        repair(nowNs);
    }

    /** Re-closes the ring around failed and departed ranks. */
    private void repair(long nowNs) {
        BitSet gone = gone();
        int p = plan.predecessor(me, gone);
        if (p != pred) {
            pred = p;
            lastBeatNs = nowNs;
            deadlineNs = nowNs + timeoutNs;
        }
        nextBeatNs = nowNs; // beat the (possibly new) successor at once
    }

    private void fence(String why) {
        if (fencedSelf) return;
        fencedSelf = true;
        actions.fenced(why);
    }

    private BitSet gone() {
        BitSet g = (BitSet) failed.clone();
        g.or(left);
        return g;
    }
}
