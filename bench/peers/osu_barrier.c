/* Barrier latency, OSU osu_barrier methodology (each call timed alone, average over ranks, printed
 * as size 0; --median: each rank's median call); see p2p_common.h. */
#include "p2p_common.h"

int main(int argc, char **argv)
{
    struct p2p_options o;
    int rank, exit_code;
    if (p2p_start(&argc, &argv, P2P_BARRIER, &o, &rank, &exit_code) < 0) return exit_code;
    int iters = p2p_iterations(&o, 0), skip = p2p_warmup(&o, 0);
    double total = 0.0, *calls = (double *)malloc((size_t)iters * sizeof(double));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iters + skip; i++) {
        double t0 = MPI_Wtime();
        MPI_Barrier(MPI_COMM_WORLD);
        double t1 = MPI_Wtime();
        if (i >= skip) {
            total += t1 - t0;
            calls[i - skip] = t1 - t0;
        }
    }
    p2p_row_collective(0, &o, total, calls, iters, rank);
    free(calls);
    p2p_finish();
    return 0;
}
