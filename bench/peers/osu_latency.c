/* Ping-pong latency, OSU osu_latency methodology; see p2p_common.h. */
#include "p2p_common.h"

int main(int argc, char **argv)
{
    struct p2p_options o;
    int rank, exit_code;
    if (p2p_start(&argc, &argv, P2P_LATENCY, &o, &rank, &exit_code) < 0) return exit_code;
    int peer = 1 - rank;
    char *sbuf = p2p_alloc(o.max_size, 'a');
    char *rbuf = p2p_alloc(o.max_size, 'b');
    double *rtt = NULL;
    for (long size = o.min_size; size <= o.max_size; size = p2p_next_size(size)) {
        int iters = p2p_iterations(&o, size), skip = p2p_warmup(&o, size);
        double start = 0.0;
        if (o.median && rank == 0) {
            free(rtt);
            rtt = malloc(sizeof *rtt * (size_t)iters);
            if (rtt == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0 && o.median) {
            for (int i = 0; i < iters + skip; i++) {
                double t0 = MPI_Wtime();
                MPI_Send(sbuf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (i >= skip) rtt[i - skip] = MPI_Wtime() - t0;
            }
            p2p_row(size, p2p_median(rtt, iters) * 1e6 / 2.0);
            p2p_distribution(size, rtt, iters);
        } else if (rank == 0) {
            for (int i = 0; i < iters + skip; i++) {
                if (i == skip) start = MPI_Wtime();
                MPI_Send(sbuf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            p2p_row(size, (MPI_Wtime() - start) * 1e6 / (2.0 * iters));
        } else {
            for (int i = 0; i < iters + skip; i++) {
                MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
        }
    }
    free(rtt);
    free(sbuf);
    free(rbuf);
    p2p_finish();
    return 0;
}
