/*
 * Physical limits of the machine the point-to-point benchmarks run on, printed next to the
 * comparison so the MPI numbers can be judged against them:
 *
 *   memcpy bandwidth   1 MiB memcpy between two page-aligned buffers, MB/s (10^6 B/s); an
 *                      intra-node MPI transfer of a large message needs at least one such copy
 *                      (two for copy-in/copy-out shared memory).
 *   cache-line latency two threads pinned to CPUs 0 and 1 bounce one cache line (ping-pong on an
 *                      atomic counter); one-way latency in us = round trip / 2: the floor for any
 *                      shared-memory message hand-off between two cores.
 *
 * Usage: physical-limits [-t SECONDS]   (default 1 s per measurement; median of 5 repetitions)
 * Output: "# ..." comment lines and "key value" lines (keys: memcpy_1MiB_MBps,
 * cacheline_oneway_us, cacheline_pinned).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MIB (1 << 20)
#define REPS 5

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static volatile unsigned char sink;

static double memcpy_mbps(double seconds)
{
    unsigned char *src, *dst;
    if (posix_memalign((void **)&src, 4096, MIB) || posix_memalign((void **)&dst, 4096, MIB)) {
        perror("posix_memalign");
        exit(1);
    }
    memset(src, 0x5a, MIB);
    memset(dst, 0xa5, MIB);
    for (int i = 0; i < 16; i++) memcpy(dst, src, MIB); /* warm-up: fault in, warm caches */
    double results[REPS];
    for (int r = 0; r < REPS; r++) {
        long n = 0;
        double t0 = now(), t;
        do {
            for (int i = 0; i < 16; i++) {
                memcpy(dst, src, MIB);
                src[n & (MIB - 1)] ^= 1; /* keep the compiler from eliding copies */
                n++;
            }
            t = now() - t0;
        } while (t < seconds / REPS);
        sink = dst[n & (MIB - 1)];
        results[r] = (double)n * MIB / t / 1e6;
    }
    free(src);
    free(dst);
    return median(results, REPS);
}

struct line {
    _Alignas(64) atomic_long value;
    char pad[64 - sizeof(atomic_long)];
};

static struct line ping_line;
static atomic_int stop_flag;
static int pinned_ok = 1;

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) pinned_ok = 0;
}

/* Responder: whenever the value is odd (ping), make it even (pong). */
static void *responder(void *arg)
{
    (void)arg;
    pin(1);
    for (;;) {
        long v = atomic_load_explicit(&ping_line.value, memory_order_acquire);
        if (v & 1) {
            atomic_store_explicit(&ping_line.value, v + 1, memory_order_release);
        } else if (atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
            return NULL;
        }
    }
}

static double cacheline_oneway_us(double seconds)
{
    pthread_t t;
    atomic_store(&ping_line.value, 0);
    atomic_store(&stop_flag, 0);
    if (pthread_create(&t, NULL, responder, NULL) != 0) {
        perror("pthread_create");
        exit(1);
    }
    pin(0);
    double results[REPS];
    long v = 0;
    for (int r = -1; r < REPS; r++) { /* r == -1: warm-up */
        long n = 0;
        double t0 = now(), el;
        do {
            for (int i = 0; i < 1000; i++) {
                atomic_store_explicit(&ping_line.value, v + 1, memory_order_release);
                while (atomic_load_explicit(&ping_line.value, memory_order_acquire) != v + 2)
                    ;
                v += 2;
            }
            n += 1000;
            el = now() - t0;
        } while (el < seconds / REPS);
        if (r >= 0) results[r] = el * 1e6 / (2.0 * (double)n);
    }
    atomic_store(&stop_flag, 1);
    pthread_join(t, NULL);
    return median(results, REPS);
}

int main(int argc, char **argv)
{
    double seconds = 1.0;
    if (argc == 3 && strcmp(argv[1], "-t") == 0) {
        seconds = atof(argv[2]);
        if (!(seconds > 0.0)) {
            fprintf(stderr, "physical-limits: -t needs a positive number of seconds\n");
            return 2;
        }
    } else if (argc != 1) {
        fprintf(stderr, "Usage: %s [-t SECONDS]\n", argv[0]);
        return 2;
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    printf("# Physical limits (median of %d repetitions, %.2f s each measurement)\n", REPS, seconds);
    printf("# online CPUs: %ld\n", ncpu);
    printf("memcpy_1MiB_MBps %.2f\n", memcpy_mbps(seconds));
    if (ncpu < 2) {
        printf("# cache-line ping-pong skipped: needs 2 CPUs\n");
        return 0;
    }
    double lat = cacheline_oneway_us(seconds);
    printf("cacheline_oneway_us %.4f\n", lat);
    printf("cacheline_pinned %s\n", pinned_ok ? "cpu0,cpu1" : "no(affinity-failed)");
    return 0;
}
