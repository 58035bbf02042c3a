package org.ftmpi.runtime;

import java.util.List;
import java.util.Map;

/**
 * What a rank learns from its runtime at start-up: who it is, who the others are and how to
 * reach them. Immutable.
 *
 * @param jobId      job id (random per job; appears in shared-memory names, logs)
 * @param rank       this process's rank in MPI_COMM_WORLD
 * @param size       number of ranks in MPI_COMM_WORLD
 * @param procIds    never-reused process id of each rank (index = rank); a replacement process
 *                   gets a new id
 * @param hosts      host name of each rank (index = rank)
 * @param endpoints  per rank, transport name to that transport's endpoint bytes, as published
 *                   by the rank in {@link RankRuntime#exchange}
 * @param secret     per-job random secret (32 bytes), used to authenticate every connection
 * @param options    job options from the launcher command line (for example {@code comm-mode},
 *                   {@code tcp-bind}, {@code transports}); never null
 */
public record JobInfo(long jobId, int rank, int size, long[] procIds, String[] hosts,
                      List<Map<String, byte[]>> endpoints, byte[] secret,
                      Map<String, String> options) {

    public String option(String key, String dflt) {
        String v = options.get(key);
        return v == null ? dflt : v;
    }
}
