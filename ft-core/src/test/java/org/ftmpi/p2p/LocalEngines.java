package org.ftmpi.p2p;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.ftmpi.runtime.LocalJobRuntime;

/** The engines of a {@link LocalJobRuntime} job, made on a thread each (each waits in the endpoint exchange for the others). */
final class LocalEngines {
    private LocalEngines() {}

    static Engine[] start(LocalJobRuntime job) throws Exception {
        int n = job.size();
        @SuppressWarnings("unchecked")
        CompletableFuture<Engine>[] f = new CompletableFuture[n];
        ExecutorService pool = Executors.newFixedThreadPool(n);
        for (int r = 0; r < n; r++) {
            int rank = r;
            f[r] = CompletableFuture.supplyAsync(() -> {
                try {
                    return new Engine(job.rank(rank));
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }, pool);
        }
        Engine[] e = new Engine[n];
        try {
            for (int r = 0; r < n; r++) e[r] = f[r].get(30, TimeUnit.SECONDS);
        } finally {
            pool.shutdown();
        }
        return e;
    }

    static void closeAll(Engine[] e) {
        for (Engine x : e) x.close();
    }
}
