package org.ftmpi.testutil;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Waiting in tests and in the rank programs of system tests: for a condition, with a deadline,
 * never a bare sleep.
 */
public final class Await {
    /** How long a rank program waits to be ended from outside before it fails. */
    private static final Duration END_LIMIT = Duration.ofSeconds(60);

    private Await() {}

    /** Waits until {@code condition} holds; fails with {@code what} once {@code limit} has passed. */
    public static void until(String what, Duration limit, BooleanSupplier condition) {
        long end = System.nanoTime() + limit.toNanos();
        long pause = 100_000;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) throw new AssertionError("not within " + limit + ": " + what);
            LockSupport.parkNanos(pause);
            pause = Math.min(pause * 2, 20_000_000);
        }
    }

    /**
     * Blocks until this process is ended from outside (SIGKILL by the test, the launcher's abort
     * or stop); a process still alive after a minute fails loudly instead of carrying on.
     */
    public static void endedFromOutside() throws InterruptedException {
        if (!new CountDownLatch(1).await(END_LIMIT.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("this process was not ended within " + END_LIMIT);
        }
    }

    /** Ends this process with SIGKILL, as a crash would; does not return. */
    public static void killSelf() {
        try {
            org.ftmpi.runtime.Signals.send(ProcessHandle.current().pid(), org.ftmpi.runtime.Signals.SIGKILL);
            endedFromOutside();
        } catch (java.io.IOException e) {
            throw new IllegalStateException("cannot send SIGKILL to this process", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while being killed", e);
        }
    }

    /** Runs {@code action} on another thread once {@code delay} has passed (a fault injected later). */
    public static void after(Duration delay, Runnable action) {
        CompletableFuture.runAsync(action, CompletableFuture.delayedExecutor(delay.toMillis(), TimeUnit.MILLISECONDS));
    }
}
