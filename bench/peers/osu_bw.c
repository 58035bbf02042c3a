/* Uni-directional windowed bandwidth, OSU osu_bw methodology; see p2p_common.h. */
#include "p2p_common.h"

#define ACK_BYTES 4

int main(int argc, char **argv)
{
    struct p2p_options o;
    int rank, exit_code;
    if (p2p_start(&argc, &argv, P2P_BW, &o, &rank, &exit_code) < 0) return exit_code;
    int peer = 1 - rank;
    char *sbuf = p2p_alloc(o.max_size, 'a');
    char *rbuf = p2p_alloc(o.max_size, 'b');
    char ack[ACK_BYTES] = {0};
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)o.window);
    if (reqs == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
    double *wins = NULL;
    for (long size = o.min_size; size <= o.max_size; size = p2p_next_size(size)) {
        int iters = p2p_iterations(&o, size), skip = p2p_warmup(&o, size);
        double start = 0.0;
        if (o.median && rank == 0) {
            free(wins);
            wins = malloc(sizeof *wins * (size_t)iters);
            if (wins == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (int i = 0; i < iters + skip; i++) {
                if (i == skip) start = MPI_Wtime();
                double t0 = wins != NULL ? MPI_Wtime() : 0.0;
                for (int w = 0; w < o.window; w++)
                    MPI_Isend(sbuf, (int)size, MPI_BYTE, peer, 100, MPI_COMM_WORLD, &reqs[w]);
                MPI_Waitall(o.window, reqs, MPI_STATUSES_IGNORE);
                MPI_Recv(ack, ACK_BYTES, MPI_BYTE, peer, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (wins != NULL && i >= skip) wins[i - skip] = MPI_Wtime() - t0;
            }
            p2p_row_windows(size, (double)size * o.window, wins, iters, MPI_Wtime() - start);
        } else {
            for (int i = 0; i < iters + skip; i++) {
                for (int w = 0; w < o.window; w++)
                    MPI_Irecv(rbuf, (int)size, MPI_BYTE, peer, 100, MPI_COMM_WORLD, &reqs[w]);
                MPI_Waitall(o.window, reqs, MPI_STATUSES_IGNORE);
                MPI_Send(ack, ACK_BYTES, MPI_BYTE, peer, 101, MPI_COMM_WORLD);
            }
        }
    }
    free(wins);
    free(reqs);
    free(sbuf);
    free(rbuf);
    p2p_finish();
    return 0;
}
