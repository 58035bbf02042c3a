package org.ftmpi;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;
import mpi.Intracomm;
import org.ftmpi.p2p.Engine;
import org.ftmpi.runtime.LocalJobRuntime;

/**
 * Runs an MPI job whose ranks are threads of this JVM, each with its own engine and the real
 * transports between them (threads-as-ranks mode; the unit tests use it).
 *
 * <pre>{@code
 * LocalJob.run(4, world -> {
 *     int rank = world.getRank();
 *     ...
 * });
 * }</pre>
 */
public final class LocalJob {
    /** The code each rank runs; {@code world} is that rank's MPI_COMM_WORLD. */
    @FunctionalInterface
    public interface Body {
        void run(Intracomm world) throws Exception;
    }

    private LocalJob() {}

    public static void run(int ranks, Body body) throws Exception {
        run(ranks, Map.of(), body);
    }

    /**
     * Runs {@code body} on {@code ranks} threads and waits for all of them. If a rank throws,
     * the other ranks' pending operations are aborted and the first exception is rethrown.
     */
    public static void run(int ranks, Map<String, String> options, Body body) throws Exception {
        run(ranks, options, job -> { }, body);
    }

    /**
     * As {@link #run(int, Map, Body)}, but first hands the job's runtime to {@code onStart}
     * (before any rank starts), so that tests can inject runtime notices such as
     * {@link LocalJobRuntime#notifyFailed} or {@link LocalJobRuntime#abortAll} while the ranks run.
     */
    public static void run(int ranks, Map<String, String> options, Consumer<LocalJobRuntime> onStart, Body body)
            throws Exception {
        LocalJobRuntime job = new LocalJobRuntime(ranks, options);
        onStart.accept(job);
        AtomicReferenceArray<Throwable> errors = new AtomicReferenceArray<>(ranks);
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < ranks; r++) {
            int rank = r;
            threads.add(Thread.ofPlatform().name("rank-" + r).start(() -> {
                Engine e = null;
                try {
                    e = new Engine(job.rank(rank));
                    Intracomm world = FacadeAccess.world(e);
                    body.run(world);
                    e.finish();
                } catch (Throwable t) {
                    errors.set(rank, t);
                    job.abortAll(1, "rank " + rank + " failed: " + t);
                    if (e != null) e.close();
                }
            }));
        }
        for (Thread t : threads) t.join();
        for (int r = 0; r < ranks; r++) {
            Throwable t = errors.get(r);
            if (t != null && !isAbortEcho(t)) {
                if (t instanceof Exception ex) throw ex;
                throw new AssertionError("rank " + r + " failed", t);
            }
        }
        for (int r = 0; r < ranks; r++) {
            Throwable t = errors.get(r);
            if (t instanceof Exception ex) throw ex;
            if (t != null) throw new AssertionError("rank " + r + " failed", t);
        }
    }

    private static boolean isAbortEcho(Throwable t) {
        String m = t.getMessage();
        return m != null && m.contains("the job is being aborted");
    }
}
