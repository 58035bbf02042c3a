package org.ftmpi.p2p;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The engine's progress lock: reentrant, unfair, taken with one CAS and released with a
 * release store, where {@link java.util.concurrent.locks.ReentrantLock} releases with a volatile
 * store. On x86 that volatile store is a full fence ({@code lock addl}) that waits until every
 * store before it has left the store buffer, and the last store before a send's unlock is the
 * shared-memory ring record, whose cache line the receiving core holds: every message's unlock
 * waited for that line's ownership to move between the cores (async-profiler on {@code bench
 * bw -m 1:1}: the unlock's {@code setState} was the largest single cost of the sender, a
 * quarter of its time). A release store lets the line move while the thread goes on.
 *
 * <p>Nobody is queued: a thread that finds the lock held spins, then yields, then parks for
 * {@value #PARK_MIN_NS} ns doubling up to {@value #PARK_MAX_NS} ns, and tries again. One
 * parked thread at a time names itself in {@link #parked}; a release reads that field (a plain
 * load of the line it has just written) and wakes it. A waiter that names itself just after
 * that read is not woken, and waits out its timed park instead: a release never needs a fence.
 * The lock's holders keep it for one progress step or one operation's bookkeeping (the engine
 * never blocks under it), so waits are short: a failure notice's control thread waiting for a
 * progress step, the progress agent never (it only tries).
 *
 * <p><b>Note:</b> thread-safe. {@link #unlock} must be called by the thread that holds the lock,
 * as often as it locked it.
 */
public final class ProgressLock {
    private static final VarHandle OWNER, PARKED;
    static {
        try {
            OWNER = MethodHandles.lookup().findVarHandle(ProgressLock.class, "owner", Thread.class);
            PARKED = MethodHandles.lookup().findVarHandle(ProgressLock.class, "parked", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final int SPINS = 128, YIELDS = 64;
    private static final long PARK_MIN_NS = 10_000, PARK_MAX_NS = TimeUnit.MICROSECONDS.toNanos(200);

    /** The holder; written with CAS (take) and release stores (give back). */
    @SuppressWarnings("unused") // through OWNER
    private volatile Thread owner;
    /** The thread parked in {@link #lock}, if one named itself; woken by {@link #unlock}. */
    private volatile Thread parked;
    /** Extra holds of the owner beyond the first; touched only by the owner. */
    private int reentries;

    /** Takes the lock if no other thread holds it; true if this thread holds it now. */
    public boolean tryLock() {
        Thread me = Thread.currentThread();
        Thread o = (Thread) OWNER.getOpaque(this);
        if (o == null) return OWNER.compareAndSet(this, null, me);
        if (o == me) {
            reentries++;
            return true;
        }
        return false;
    }

    /** Takes the lock, waiting (spin, yield, then short parks) while another thread holds it. */
    public void lock() {
        if (tryLock()) return;
        Thread me = Thread.currentThread();
        long parkNs = PARK_MIN_NS;
        for (int i = 0; ; i++) {
            if (i < SPINS) {
                Thread.onSpinWait();
            } else if (i < SPINS + YIELDS) {
                Thread.yield();
            } else {
                boolean named = parked == null;
                if (named) parked = me;
                if (OWNER.getOpaque(this) != null) LockSupport.parkNanos(this, parkNs);
                if (named && parked == me) parked = null;
                parkNs = Math.min(PARK_MAX_NS, parkNs * 2);
            }
            if (OWNER.getOpaque(this) == null && OWNER.compareAndSet(this, null, me)) return;
        }
    }

    /** Gives back one hold; the last one releases the lock (a release store, no fence). */
    public void unlock() {
        if (OWNER.getOpaque(this) != Thread.currentThread()) {
            throw new IllegalMonitorStateException("progress lock released by a thread that does not hold it");
        }
        if (reentries > 0) {
            reentries--;
            return;
        }
        OWNER.setRelease(this, null);
        Thread waiter = (Thread) PARKED.getOpaque(this);
        if (waiter != null) LockSupport.unpark(waiter);
    }

    /** Whether the calling thread holds the lock. */
    public boolean isHeldByCurrentThread() {
        return OWNER.getOpaque(this) == Thread.currentThread();
    }
}
