/* The col1024 investigation (docs/datatypes.md, "Results, session 5"): 1024 8-byte accesses at an
 * 8 KiB stride into an 8 MiB matrix, as Open MPI's MPI_Pack/MPI_Unpack of vector(1024, 1, 1024,
 * double) and as plain C loops, on 4 KiB pages or on a 2 MiB-aligned MADV_HUGEPAGE mapping.
 *   mpicc -O2 -o strided bench/peers/ddt/strided.c && ./strided 0 && ./strided 1
 * (argument 1 = huge pages; AnonHugePages shows whether the kernel gave them). MB/s of the column
 * bytes, CPU time of this thread, one line per round. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

#define N 1024
static long scratch[256];

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static long anon_huge_kb(void) {
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char l[256];
    long v = -1;
    while (f && fgets(l, sizeof l, f))
        if (!strncmp(l, "AnonHugePages:", 14)) v = atol(l + 14);
    if (f) fclose(f);
    return v;
}

/* mode: 0 MPI_Unpack, 1 loop unpack, 2 loop unpack + 3 spacer stores, 3 loop unpack + sfence,
 *       4 MPI_Pack, 5 loop pack, 6 loop pack + 3 spacer stores */
static double run(int mode, MPI_Datatype t, double *u, double *p) {
    volatile long *s = scratch;
    long it = 0, t0 = now_ns(), t1;
    do {
        for (int j = 0; j < 64; j++) {
            int pos = 0;
            switch (mode) {
            case 0: MPI_Unpack(p, N * 8, &pos, u, 1, t, MPI_COMM_SELF); break;
            case 1: for (int i = 0; i < N; i++) u[(long) i * N] = p[i]; break;
            case 2: for (int i = 0; i < N; i++) { u[(long) i * N] = p[i]; s[(3 * i) & 255] = i; s[(3 * i + 1) & 255] = i; s[(3 * i + 2) & 255] = i; } break;
            case 3: for (int i = 0; i < N; i++) { u[(long) i * N] = p[i]; __asm__ volatile("sfence" ::: "memory"); } break;
            case 4: MPI_Pack(u, 1, t, p, N * 8, &pos, MPI_COMM_SELF); break;
            case 5: for (int i = 0; i < N; i++) p[i] = u[(long) i * N]; break;
            default: for (int i = 0; i < N; i++) { p[i] = u[(long) i * N]; s[(3 * i) & 255] = i; s[(3 * i + 1) & 255] = i; s[(3 * i + 2) & 255] = i; } break;
            }
            __asm__ volatile("" ::: "memory");
        }
        it += 64;
        t1 = now_ns();
    } while (t1 - t0 < 200000000L);
    return 8.0 * N * it / ((t1 - t0) / 1e9) / 1e6;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int huge = argc > 1 ? atoi(argv[1]) : 0;
    MPI_Datatype t;
    MPI_Type_vector(N, 1, N, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    size_t bytes = (size_t) N * N * 8;
    double *u, *p = aligned_alloc(64, N * 8 + 64);
    if (huge) {
        char *m = mmap(0, bytes + (2 << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        u = (double *) (((long) m + (2 << 20) - 1) & ~((2L << 20) - 1));
        madvise(u, bytes, MADV_HUGEPAGE);
    } else {
        u = aligned_alloc(64, bytes);
    }
    for (long i = 0; i < (long) N * N; i++) u[i] = i;
    for (int i = 0; i < N; i++) p[i] = i;
    printf("huge pages requested %d, AnonHugePages %ld kB\n", huge, anon_huge_kb());
    for (int r = 0; r < 3; r++)
        printf("unpack: MPI %.0f loop %.0f loop+spacer %.0f loop+sfence %.0f | pack: MPI %.0f loop %.0f loop+spacer %.0f MB/s\n",
               run(0, t, u, p), run(1, t, u, p), run(2, t, u, p), run(3, t, u, p), run(4, t, u, p), run(5, t, u, p), run(6, t, u, p));
    MPI_Finalize();
    return 0;
}
