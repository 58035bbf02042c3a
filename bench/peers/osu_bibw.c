/* Bi-directional windowed bandwidth, OSU osu_bibw methodology; see p2p_common.h. */
#include "p2p_common.h"

int main(int argc, char **argv)
{
    struct p2p_options o;
    int rank, exit_code;
    if (p2p_start(&argc, &argv, P2P_BIBW, &o, &rank, &exit_code) < 0) return exit_code;
    int peer = 1 - rank;
    char *sbuf = p2p_alloc(o.max_size, 'a');
    char *rbuf = p2p_alloc(o.max_size, 'b');
    MPI_Request *sreqs = malloc(sizeof(MPI_Request) * (size_t)o.window);
    MPI_Request *rreqs = malloc(sizeof(MPI_Request) * (size_t)o.window);
    if (sreqs == NULL || rreqs == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
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
        for (int i = 0; i < iters + skip; i++) {
            if (i == skip) start = MPI_Wtime();
            double t0 = wins != NULL ? MPI_Wtime() : 0.0;
            for (int w = 0; w < o.window; w++)
                MPI_Irecv(rbuf, (int)size, MPI_BYTE, peer, 100, MPI_COMM_WORLD, &rreqs[w]);
            for (int w = 0; w < o.window; w++)
                MPI_Isend(sbuf, (int)size, MPI_BYTE, peer, 100, MPI_COMM_WORLD, &sreqs[w]);
            MPI_Waitall(o.window, sreqs, MPI_STATUSES_IGNORE);
            MPI_Waitall(o.window, rreqs, MPI_STATUSES_IGNORE);
            if (wins != NULL && i >= skip) wins[i - skip] = MPI_Wtime() - t0;
        }
        double t = MPI_Wtime() - start;
        if (rank == 0) p2p_row_windows(size, (double)size * o.window * 2.0, wins, iters, t);
    }
    free(wins);
    free(sreqs);
    free(rreqs);
    free(sbuf);
    free(rbuf);
    p2p_finish();
    return 0;
}
