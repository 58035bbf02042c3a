package org.ftmpi.p2p;

/**
 * How many idle polls an engine's waiters spin before they start to yield, adapted to whether
 * spinning holds a core that another thread needs. When a streak of idle polls spends its budget,
 * the waiter yields once and times that yield: a yield that took {@link #SHARED_CORE_NS} or more
 * gave the core to another thread (typically the peer of a ping-pong that the scheduler put on the
 * same core), so the budget halves (down to {@link #MIN}); a yield that came straight back (no
 * other thread wanted the core: spinning cost nobody anything) leaves it, and every streak that
 * did not end in such a shared-core yield gives a quarter back (up to {@link #MAX}).
 *
 * <p>Why: when the scheduler puts both ranks of a ping-pong on one core, which a busy host does
 * for stretches of milliseconds, every poll of the waiter's spin phase holds the core its peer
 * needs, so every hand-off cost the whole spin phase (256 polls, ~14 µs, seen with {@code perf
 * sched}: the two rank threads alternating on one CPU every 14-15 µs) plus a context switch; with
 * the budget at {@link #MIN} a hand-off there costs ~16 polls and the switch. With a core per
 * rank a message arrives within the spin phase and the budget stays at {@link #MAX}.
 *
 * <p><b>Note:</b> shared by the engine's waiting threads without synchronisation; the fields are
 * plain and a lost update only delays the adaptation by one streak.
 */
final class SpinBudget {
    /** The longest spin phase, in idle polls (one poll of the transports each; 5-14 µs on shared memory). */
    static final int MAX = 256;
    /** The shortest spin phase: about the polls of one small-message hand-off with a core per rank. */
    static final int MIN = 16;
    /**
     * A yield at least this long had a context switch in it: with nothing else runnable a
     * {@code sched_yield} returned in 0.5-0.6 µs (p99 under 1 µs) on the 2-vCPU test machine,
     * even at load average 30.
     */
    static final long SHARED_CORE_NS = 2_000;

    private int polls = MAX;
    /** Whether the current streak ended its spin phase with a shared-core yield. */
    private boolean shrunk;

    /** Idle polls to spin in the current streak. */
    int polls() {
        return polls;
    }

    /** A waiter starts a new idle streak: the previous one ended with work found. */
    void streakStarted() {
        if (shrunk) {
            shrunk = false;
        } else if (polls < MAX) {
            polls = Math.min(MAX, polls + (polls >> 2) + 1);
        }
    }

    /** The current streak spent its budget; its first yield took {@code yieldNs}. */
    void spent(long yieldNs) {
        if (yieldNs < SHARED_CORE_NS) return;
        shrunk = true;
        if (polls > MIN) polls = Math.max(MIN, polls >> 1);
    }
}
