/*
 * cma-cost: CPU time of process_vm_readv (cross-memory attach), the copy the shared-memory
 * single-copy paths of FT-MPI/J and Open MPI's vader are made of, against memcpy of the same
 * bytes. The process reads its own memory (the kernel path is the same as for a peer's:
 * find the task, check ptrace access, pin the remote pages, copy page by page).
 *
 *   build/cma-cost SIZE [BATCH [HUGE]]
 *
 * SIZE bytes per piece, BATCH pieces per call (one iovec pair each, default 1), HUGE 1 to put
 * source and destination in 2 MiB-aligned mappings marked MADV_HUGEPAGE (transparent huge
 * pages, as MPI.newByteBuffer does from 1 MiB), 0 (default) for 4 KiB pages. Prints three
 * repetitions: MB/s of the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID, which a loaded
 * machine does not inflate the way it inflates wall time), microseconds per piece, and memcpy's
 * MB/s for the same bytes. docs/benchmarks.md, "Issue 3, session 7".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define HUGE_PAGE (2UL << 20)
#define MAX_BATCH 64

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static char *map(size_t n, int huge)
{
    size_t len = (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    char *p = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    p = (char *)(((unsigned long)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
    if (huge && madvise(p, len, MADV_HUGEPAGE) != 0) perror("madvise(MADV_HUGEPAGE)");
    return p;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "Usage: %s SIZE [BATCH [HUGE]]\n", argv[0]);
        return 2;
    }
    size_t size = strtoul(argv[1], NULL, 10);
    int batch = argc > 2 ? atoi(argv[2]) : 1;
    int huge = argc > 3 ? atoi(argv[3]) : 0;
    if (size == 0 || batch < 1 || batch > MAX_BATCH) {
        fprintf(stderr, "cma-cost: SIZE must be positive and BATCH between 1 and %d\n", MAX_BATCH);
        return 2;
    }
    char *src = map(size, huge), *dst = map(size, huge);
    memset(src, 1, size);
    memset(dst, 2, size);
    struct iovec local[MAX_BATCH], remote[MAX_BATCH];
    for (int i = 0; i < batch; i++) { /* every piece the same bytes, as osu_bw's window */
        local[i] = (struct iovec){dst, size};
        remote[i] = (struct iovec){src, size};
    }
    size_t per_call = size * (size_t)batch;
    long calls = (long)((4UL << 30) / per_call);
    if (calls < 10) calls = 10;
    pid_t self = getpid();
    for (int rep = 0; rep < 3; rep++) {
        double t0 = cpu_seconds();
        for (long k = 0; k < calls; k++) {
            if (process_vm_readv(self, local, (unsigned long)batch, remote, (unsigned long)batch, 0) != (ssize_t)per_call) {
                perror("process_vm_readv");
                return 1;
            }
        }
        double cma = cpu_seconds() - t0;
        t0 = cpu_seconds();
        for (long k = 0; k < calls * batch; k++) {
            memcpy(dst, src, size);
            __asm__ volatile("" ::: "memory");
        }
        double mc = cpu_seconds() - t0;
        printf("size %zu batch %d huge %d: process_vm_readv %.0f MB/s (%.2f us per piece), memcpy %.0f MB/s\n",
               size, batch, huge, (double)per_call * (double)calls / cma / 1e6, cma / (double)calls / batch * 1e6,
               (double)per_call * (double)calls / mc / 1e6);
    }
    return 0;
}
