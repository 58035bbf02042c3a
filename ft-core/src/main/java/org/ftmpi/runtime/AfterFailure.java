package org.ftmpi.runtime;

import java.util.ArrayDeque;

/**
 * The controller's work that a failure causes but the survivors' recovery does not need: finding
 * and killing a declared-failed process's descendants (a walk of all of {@code /proc}), and the
 * lines printed about the death. Each task runs {@code delayMs} after it was queued, in queue
 * order, on one daemon thread {@code ftmpirun-after-failure} of the lowest priority, so that in
 * the first milliseconds after a failure the two cores belong to the survivors (kernel scheduler
 * tracing in session 9: the controller's death-watch thread held a core for ~6 of the ~22 CPU-ms
 * of a recovery, mostly walking {@code /proc}). {@link #flush} runs what is left at once, at the
 * end of the job.
 *
 * <p><b>Note:</b> thread-safe; tasks must not throw (a task that does is reported by the caller's
 * {@code onError} and the next one runs).
 */
final class AfterFailure {
    /** Job option: how long the controller defers a failure's side work, ms ({@code --opt fence-delay=MS}). */
    static final String OPTION = "fence-delay";
    /**
     * Default delay. A recovery at np 4/8 takes 15-60 ms on a quiet 2-core machine, at np 16
     * ~150 ms; 200 ms keeps the walk clear of all of them and is short against the heartbeat
     * detector's timeout (a stopped process is declared ~500 ms after it stopped).
     */
    static final long DEFAULT_DELAY_MS = 200;

    private record Task(long dueNs, Runnable run) {}

    private final long delayNs;
    private final java.util.function.Consumer<RuntimeException> onError;
    private final ArrayDeque<Task> queue = new ArrayDeque<>();
    private Thread thread;

    AfterFailure(long delayMs, java.util.function.Consumer<RuntimeException> onError) {
        this.delayNs = Math.max(0, delayMs) * 1_000_000L;
        this.onError = onError;
    }

    /** The delay of job {@code options} ({@link #OPTION}, ms; validated by {@link LauncherOptions}). */
    static long delayMs(java.util.Map<String, String> options) {
        return Long.parseLong(options.getOrDefault(OPTION, Long.toString(DEFAULT_DELAY_MS)));
    }

    /** Runs {@code r} {@code delayMs} from now on the after-failure thread. */
    void later(Runnable r) {
        synchronized (queue) {
            queue.add(new Task(System.nanoTime() + delayNs, r));
            if (thread == null) {
                thread = Thread.ofPlatform().name("ftmpirun-after-failure").daemon().unstarted(this::loop);
                thread.setPriority(Thread.MIN_PRIORITY);
                thread.start();
            }
            queue.notifyAll();
        }
    }

    /** Runs every queued task now, on the caller's thread (end of the job). */
    void flush() {
        Task t;
        while ((t = next(false)) != null) runOne(t);
    }

    private void loop() {
        while (true) {
            Task t = next(true);
            if (t != null) runOne(t);
        }
    }

    /** The head task once it is due (waiting for it when {@code wait}), or null. */
    private Task next(boolean wait) {
        synchronized (queue) {
            while (true) {
                Task t = queue.peek();
                long left = t == null ? Long.MAX_VALUE : t.dueNs() - System.nanoTime();
                if (t != null && (left <= 0 || !wait)) return queue.poll();
                if (!wait) return null;
                try {
                    if (t == null) queue.wait();
                    else queue.wait(Math.max(1, left / 1_000_000L));
                } catch (InterruptedException e) {
                    // nobody interrupts this thread; keep serving the queue
                }
            }
        }
    }

    private void runOne(Task t) {
        try {
            t.run().run();
        } catch (RuntimeException e) {
            onError.accept(e);
        }
    }
}
