/* Allreduce latency, OSU osu_allreduce methodology (float sum, each call timed alone, a barrier
 * between calls, average over ranks; --median: each rank's median call); see p2p_common.h. */
#include "p2p_common.h"

int main(int argc, char **argv)
{
    struct p2p_options o;
    int rank, exit_code;
    if (p2p_start(&argc, &argv, P2P_ALLREDUCE, &o, &rank, &exit_code) < 0) return exit_code;
    float *sbuf = (float *)p2p_alloc(o.max_size, 1);
    float *rbuf = (float *)p2p_alloc(o.max_size, 0);
    for (long size = o.min_size; size <= o.max_size; size = p2p_next_size(size)) {
        int iters = p2p_iterations(&o, size), skip = p2p_warmup(&o, size);
        int count = (int)(size / (long)sizeof(float));
        double total = 0.0, *calls = (double *)malloc((size_t)iters * sizeof(double));
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < iters + skip; i++) {
            double t0 = MPI_Wtime();
            MPI_Allreduce(sbuf, rbuf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            double t1 = MPI_Wtime();
            if (i >= skip) {
                total += t1 - t0;
                calls[i - skip] = t1 - t0;
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        p2p_row_collective(size, &o, total, calls, iters, rank);
        free(calls);
    }
    free(sbuf);
    free(rbuf);
    p2p_finish();
    return 0;
}
