package org.ftmpi.runtime;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The controller's robust-futex death watch over the processes it started on its own host (job
 * option {@code death-watch}, default true). Every rank and spare JVM holds the mutex of its
 * slot in a per-job {@link DeathWatchFile} from a thread that never ends ({@link #holdFromEnv});
 * the controller runs one waiter thread per process, blocked in {@code pthread_mutex_lock}. A
 * process that dies without running its shutdown hooks (SIGKILL, a JVM crash, {@code halt})
 * wakes its waiter with EOWNERDEAD as soon as the kernel starts its exit, before the kernel
 * frees its memory: tens to hundreds of ms before {@code waitpid} or the peers' TCP EOF for a
 * JVM of a few hundred MB. An orderly exit marks the slot {@link DeathWatchFile#EXITING} first
 * and is left to {@code waitpid}, which also gives every exit status.
 *
 * <p>Where the pthread calls or {@code /dev/shm} are missing, {@link #create} returns null and
 * says why once: deaths are then seen by {@code waitpid} only, as before.
 *
 * <p><b>Note:</b> thread-safe. One daemon thread {@code ftmpirun-death-watch-<procId>} per
 * watched process calls {@link Listener#died} at most once.
 */
final class DeathWatch {
    /** Job option turning the watch off ({@code --opt death-watch=false}). */
    static final String OPTION = "death-watch";
    /** File name after the job prefix ({@link SharedMemoryFiles#prefix}). */
    static final String FILE_SUFFIX = "deathwatch";

    /** Called on a watcher thread when a watched process died before marking an orderly exit. */
    interface Listener {
        void died(long procId, long pid, long seenNanos);
    }

    private final DeathWatchFile file;
    private final Listener listener;
    private final LauncherConsole console;
    private final Set<Long> watched = new HashSet<>();

    private DeathWatch(DeathWatchFile file, Listener listener, LauncherConsole console) {
        this.file = file;
        this.listener = listener;
        this.console = console;
    }

    /**
     * The job's watch with room for process ids 1..{@code slots}, or null (with one log line)
     * when the job option turns it off or this platform cannot run it.
     */
    static DeathWatch create(Map<String, String> options, long jobId, int slots, Listener listener,
                             LauncherConsole console) {
        String opt = options.getOrDefault(OPTION, "true");
        if (!opt.equals("true")) {
            console.log("death watch: off (--opt " + OPTION + "=" + opt + "); deaths are seen through waitpid");
            return null;
        }
        Path path = SharedMemoryFiles.dir(options).resolve(SharedMemoryFiles.prefix(jobId) + FILE_SUFFIX);
        try {
            DeathWatch w = new DeathWatch(DeathWatchFile.create(path, slots), listener, console);
            console.log("death watch: robust mutexes in " + path + " (" + slots + " slots)");
            return w;
        } catch (IOException | RuntimeException e) {
            console.log("death watch: unavailable (" + e.getMessage() + "); deaths are seen through waitpid");
            return null;
        }
    }

    /** The value of {@link RuntimeEnv#DEATH_WATCH} for process {@code procId}, or null without a slot. */
    String envFor(long procId) {
        long slot = procId - 1;
        return slot >= 0 && slot < file.slots() ? file.path() + "#" + slot : null;
    }

    /**
     * Starts watching process {@code procId} (once; later calls do nothing), which holds its
     * slot by now: it took the mutex before it connected to the controller.
     */
    void watch(long procId) {
        long slot = procId - 1;
        if (slot < 0 || slot >= file.slots()) return;
        synchronized (watched) {
            if (!watched.add(procId)) return;
        }
        int s = (int) slot;
        if (file.state(s) != DeathWatchFile.HELD || file.procId(s) != procId) {
            console.log("death watch: process id " + procId + " does not hold its slot; its death is seen through waitpid");
            return;
        }
        Thread t = Thread.ofPlatform().name("ftmpirun-death-watch-" + procId).daemon().unstarted(() -> await(s, procId));
        t.setPriority(Thread.MAX_PRIORITY);
        t.start();
    }

    /**
     * Runs, at the job's start, the code a death runs on a watcher thread before its notices go
     * out: the slot reads and the listener, with process id -1 (no process: it does nothing).
     * Each runs interpreted in this C1-only JVM, and the first execution of a call site links it:
     * from the watcher's wake-up to the first notice took 0.3 ms more when cold, measured with
     * nanoTime stamps (docs/fault-tolerance.md, "Session 26").
     */
    void warm() {
        long now = System.nanoTime();
        file.state(0); // the slot reads await makes after a death
        file.pid(0);
        listener.died(-1, -1, now);
    }

    private void await(int slot, long procId) {
        console.log("death watch: watching process id " + procId);
        int rc = file.awaitRelease(slot);
        long now = System.nanoTime();
        int state = file.state(slot);
        if (rc == DeathWatchFile.EOWNERDEAD && state == DeathWatchFile.HELD) {
            listener.died(procId, file.pid(slot), now);
        } else if (rc != DeathWatchFile.EOWNERDEAD && rc != 0) {
            console.log("death watch: process id " + procId + ": pthread_mutex_lock returned " + rc
                    + "; its death is seen through waitpid");
        }
    }

    /**
     * Rank and spare side: when ftmpirun gave this process a slot ({@link RuntimeEnv#DEATH_WATCH}),
     * takes its mutex from a daemon platform thread that then parks for the life of the process,
     * and marks the slot {@link DeathWatchFile#EXITING} from a shutdown hook. Returns once the
     * mutex is held, true; false when it could not be taken (the controller then sees no HELD
     * slot, says so, and uses waitpid) or this process has no slot.
     */
    static boolean holdFromEnv(Map<String, String> env) {
        return startHold(env).join();
    }

    /** This process's {@link #startHold}, or null before {@link #startHoldFromEnv}. */
    private static volatile java.util.concurrent.CompletableFuture<Boolean> holding;

    /**
     * {@link #holdFromEnv} without waiting: the FFM linking and the lock (tens of ms in a cold
     * JVM) overlap the rank's start-up; {@link #awaitHeld} waits for them just before the
     * controller hears of this process.
     */
    static void startHoldFromEnv(Map<String, String> env) {
        holding = startHold(env);
    }

    /**
     * Waits until {@link #startHoldFromEnv}'s mutex is held (or could not be taken); call before
     * REGISTER or SPARE, so that the controller finds the slot HELD. Returns at once without it.
     */
    static void awaitHeld() {
        java.util.concurrent.CompletableFuture<Boolean> h = holding;
        if (h != null) h.join();
    }

    /** Takes the slot {@link RuntimeEnv#DEATH_WATCH} names on a holder thread; completes with whether it is held. */
    private static java.util.concurrent.CompletableFuture<Boolean> startHold(Map<String, String> env) {
        java.util.concurrent.CompletableFuture<Boolean> held = new java.util.concurrent.CompletableFuture<>();
        String v = env.get(RuntimeEnv.DEATH_WATCH);
        String id = env.get(RuntimeEnv.PROC_ID);
        if (v == null || id == null) {
            held.complete(false);
            return held;
        }
        Thread.ofPlatform().name("ftmpi-death-watch").daemon().start(() -> {
            if (DeathWatchFile.UNAVAILABLE != null) {
                held.complete(false);
                return;
            }
            int hash = v.lastIndexOf('#');
            DeathWatchFile f;
            int slot;
            int rc;
            try {
                slot = Integer.parseInt(v.substring(hash + 1));
                long procId = Long.parseLong(id);
                f = DeathWatchFile.open(Path.of(v.substring(0, Math.max(hash, 0))));
                rc = slot < 0 || slot >= f.slots() ? -1 : f.tryHold(slot, ProcessHandle.current().pid(), procId);
            } catch (IOException | RuntimeException e) {
                System.err.println("ftmpi: warning: death watch: " + e.getMessage());
                held.complete(false);
                return;
            }
            if (rc != 0) { // not held: the controller finds no HELD slot and uses waitpid
                held.complete(false);
                return;
            }
            try {
                Runtime.getRuntime().addShutdownHook(new Thread(() -> f.setStateRelease(slot,
                        DeathWatchFile.EXITING), "ftmpi-death-watch-exit"));
            } catch (IllegalStateException e) {
                // already exiting
            }
            held.complete(true);
            while (true) java.util.concurrent.locks.LockSupport.park(); // the mutex lives as long as this thread
        });
        return held;
    }
}
