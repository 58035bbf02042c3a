/*
 * Shared code of the C peer benchmarks (osu_latency.c, osu_bw.c, osu_bibw.c, osu_allreduce.c,
 * osu_barrier.c).
 *
 * Same methodology, defaults, command line and output format as the Java suite
 * (org.ftmpi.bench.Main): OSU Micro-Benchmarks 7.x defaults, sizes doubling from MIN to MAX
 * (0 is followed by 1), a barrier before every size, timing with MPI_Wtime on rank 0, rows
 * printed as "%-10d%18.2f".
 *
 * Options: -m [MIN:]MAX (K/M suffixes = KiB/MiB), -i ITER, -x WARMUP, -W WINDOW, -h.
 * -i / -x override the per-size OSU defaults for every size.
 */
#ifndef FTMPI_P2P_COMMON_H
#define FTMPI_P2P_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <limits.h>
#include <unistd.h>

#define P2P_VERSION "v0.1"
#define P2P_LARGE_MESSAGE_SIZE 8192
#define P2P_DEFAULT_MAX_SIZE (1 << 22)
#define P2P_DEFAULT_WINDOW 64
#define P2P_MAX_WINDOW (1 << 16)
#define P2P_SIZE_WIDTH 10
#define P2P_FIELD_WIDTH 18

#define P2P_DEFAULT_MAX_COLLECTIVE_SIZE (1 << 20)

enum p2p_kind { P2P_LATENCY, P2P_BW, P2P_BIBW, P2P_ALLREDUCE, P2P_BARRIER };

/* Point-to-point kinds run on exactly 2 ranks; the collectives on any number. */
static inline int p2p_pair_only(enum p2p_kind k) { return k == P2P_LATENCY || k == P2P_BW || k == P2P_BIBW; }
static inline int p2p_uses_window(enum p2p_kind k) { return k == P2P_BW || k == P2P_BIBW; }

struct p2p_options {
    enum p2p_kind kind;
    long min_size;
    long max_size;
    int iterations; /* -1: OSU default per size */
    int warmup;     /* -1: OSU default per size */
    int window;
    int median;             /* latency: the median one-way time instead of the mean; bw, bibw: the
                               median window's bandwidth; collectives: each rank's median call,
                               averaged over the ranks */
};

static inline const char *p2p_title(enum p2p_kind k)
{
    switch (k) {
    case P2P_LATENCY: return "Latency Test";
    case P2P_BW: return "Bandwidth Test";
    case P2P_ALLREDUCE: return "Allreduce Latency Test";
    case P2P_BARRIER: return "Barrier Latency Test";
    default: return "Bi-Directional Bandwidth Test";
    }
}

static inline int p2p_default_iterations(enum p2p_kind k, long size)
{
    if (k == P2P_LATENCY) return size > P2P_LARGE_MESSAGE_SIZE ? 1000 : 10000;
    if (!p2p_pair_only(k)) return size > P2P_LARGE_MESSAGE_SIZE ? 100 : 1000;
    return size > P2P_LARGE_MESSAGE_SIZE ? 20 : 100;
}

static inline int p2p_default_warmup(enum p2p_kind k, long size)
{
    if (k == P2P_LATENCY) return size > P2P_LARGE_MESSAGE_SIZE ? 10 : 100;
    if (!p2p_pair_only(k)) return size > P2P_LARGE_MESSAGE_SIZE ? 10 : 200;
    return size > P2P_LARGE_MESSAGE_SIZE ? 2 : 10;
}

static inline int p2p_iterations(const struct p2p_options *o, long size)
{
    return o->iterations > 0 ? o->iterations : p2p_default_iterations(o->kind, size);
}

static inline int p2p_warmup(const struct p2p_options *o, long size)
{
    return o->warmup >= 0 ? o->warmup : p2p_default_warmup(o->kind, size);
}

static inline long p2p_next_size(long size) { return size == 0 ? 1 : size * 2; }

static inline void p2p_usage(FILE *f, const char *prog, enum p2p_kind k)
{
    fprintf(f,
            "Usage: mpirun -np N %s [-m [MIN:]MAX] [-i ITER] [-x WARMUP]%s [-h]\n"
            "  -m [MIN:]MAX  message sizes, doubling (K/M suffixes); default %d:%d\n"
            "  -i ITER       timed iterations for every size (default: OSU's per-size default)\n"
            "  -x WARMUP     warm-up iterations for every size (default: OSU's per-size default)\n"
            "%s",
            prog, p2p_uses_window(k) ? " [-W WINDOW] [--median]" : " [--median]",
            k == P2P_ALLREDUCE ? 4 : k == P2P_LATENCY || k == P2P_BARRIER ? 0 : 1,
            k == P2P_BARRIER ? 0 : p2p_pair_only(k) ? P2P_DEFAULT_MAX_SIZE : P2P_DEFAULT_MAX_COLLECTIVE_SIZE,
            p2p_uses_window(k) ? "  -W WINDOW     outstanding sends/receives per iteration (default 64)\n"
                                 "  --median      time each window alone (rank 0) and report the bandwidth of the\n"
                                 "                median window (robust on a shared host) instead of the mean; a\n"
                                 "                '# dist' line after each row gives the windows' mean, percentiles\n"
                                 "                and the long ones (us per window)\n"
            : k == P2P_LATENCY ? "  --median      time each round trip alone and report the median one-way time\n"
                                 "                (robust on a shared host) instead of the mean; a '# dist' line\n"
                                 "                after each row gives mean, percentiles and the long round trips\n"
                               : "  --median      time each call alone and report each rank's median call, averaged\n"
                                 "                over the ranks (robust on a shared host) instead of the mean; a\n"
                                 "                '# dist' line after each row gives rank 0's mean, percentiles and\n"
                                 "                the long calls\n");
}

/* Returns 0 on success and stores the value, -1 on error. */
static inline int p2p_parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    long mult = 1;
    errno = 0;
    if (*s == '\0') return -1;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s) return -1;
    if (*end == 'k' || *end == 'K') { mult = 1L << 10; end++; }
    else if (*end == 'm' || *end == 'M') { mult = 1L << 20; end++; }
    if (*end != '\0') return -1;
    if (v < 0 || v > LONG_MAX / mult) return -1;
    v *= mult;
    if (v < min || v > max) return -1;
    *out = v;
    return 0;
}

/*
 * Parses argv. Returns 0 to run, 1 if help was printed, 2 on a usage error (message printed by
 * rank 0 only).
 */
static inline int p2p_parse(int argc, char **argv, enum p2p_kind kind, int rank, struct p2p_options *o)
{
    o->kind = kind;
    o->min_size = kind == P2P_ALLREDUCE ? 4 : kind == P2P_LATENCY || kind == P2P_BARRIER ? 0 : 1;
    o->max_size = kind == P2P_BARRIER ? 0 : p2p_pair_only(kind) ? P2P_DEFAULT_MAX_SIZE : P2P_DEFAULT_MAX_COLLECTIVE_SIZE;
    o->iterations = -1;
    o->warmup = -1;
    o->window = P2P_DEFAULT_WINDOW;
    o->median = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long v;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (rank == 0) p2p_usage(stdout, argv[0], kind);
            return 1;
        }
        if (!strcmp(a, "--median")) {
            o->median = 1;
            continue;
        }
        if (i + 1 >= argc || (strcmp(a, "-m") && strcmp(a, "-i") && strcmp(a, "-x") &&
                              (!p2p_uses_window(kind) || strcmp(a, "-W")))) {
            if (rank == 0) {
                fprintf(stderr, "%s: unknown option or missing value: '%s'\n", argv[0], a);
                p2p_usage(stderr, argv[0], kind);
            }
            return 2;
        }
        const char *val = argv[++i];
        if (!strcmp(a, "-m")) {
            char buf[64];
            const char *colon = strchr(val, ':');
            if (strlen(val) >= sizeof buf) goto bad;
            if (colon == NULL) {
                if (p2p_parse_long(val, 0, INT_MAX, &v)) goto bad;
                o->max_size = v;
            } else {
                size_t n = (size_t)(colon - val);
                memcpy(buf, val, n);
                buf[n] = '\0';
                if (n == 0 && colon[1] == '\0') goto bad;
                if (n > 0) {
                    if (p2p_parse_long(buf, 0, INT_MAX, &v)) goto bad;
                    o->min_size = v;
                }
                if (colon[1] != '\0') {
                    if (p2p_parse_long(colon + 1, 0, INT_MAX, &v)) goto bad;
                    o->max_size = v;
                }
            }
        } else if (!strcmp(a, "-i")) {
            if (p2p_parse_long(val, 1, INT_MAX, &v)) goto bad;
            o->iterations = (int)v;
        } else if (!strcmp(a, "-x")) {
            if (p2p_parse_long(val, 0, INT_MAX, &v)) goto bad;
            o->warmup = (int)v;
        } else { /* -W */
            if (p2p_parse_long(val, 1, P2P_MAX_WINDOW, &v)) goto bad;
            o->window = (int)v;
        }
        continue;
    bad:
        if (rank == 0) fprintf(stderr, "%s: invalid value for %s: '%s'\n", argv[0], a, val);
        return 2;
    }
    if (o->max_size < o->min_size) {
        if (rank == 0) fprintf(stderr, "%s: -m: MIN (%ld) is larger than MAX (%ld)\n", argv[0], o->min_size, o->max_size);
        return 2;
    }
    if (kind == P2P_ALLREDUCE && o->min_size < 4) {
        if (rank == 0) fprintf(stderr, "%s: -m: allreduce reduces floats: MIN must be at least 4\n", argv[0]);
        return 2;
    }
    return 0;
}

/* Page-aligned buffer of at least max(size, 1) bytes filled with c (OSU aligns to the page size). */
static inline char *p2p_alloc(long size, char c)
{
    void *p = NULL;
    long page = sysconf(_SC_PAGESIZE);
    size_t n = (size_t)(size > 0 ? size : 1);
    if (posix_memalign(&p, page > 0 ? (size_t)page : 4096, n) != 0) {
        fprintf(stderr, "out of memory allocating %zu bytes\n", n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(p, c, n);
    return p;
}

/*
 * Common start: MPI_Init, parse, check for exactly 2 ranks (point-to-point kinds), print the header
 * on rank 0.
 * Returns -1 if the program should exit with the code stored in *exit_code (MPI already finalized).
 */
static inline int p2p_start(int *argc, char ***argv, enum p2p_kind kind, struct p2p_options *o, int *rank,
                     int *exit_code)
{
    int size, rc;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rc = p2p_parse(*argc, *argv, kind, *rank, o);
    if (rc != 0) {
        MPI_Finalize();
        *exit_code = rc == 1 ? 0 : 2;
        return -1;
    }
    if (size != 2 && p2p_pair_only(kind)) {
        if (*rank == 0) fprintf(stderr, "%s: this benchmark requires exactly 2 processes, got %d\n", (*argv)[0], size);
        MPI_Finalize();
        *exit_code = 1;
        return -1;
    }
    if (*rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        char host[MPI_MAX_PROCESSOR_NAME];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n,")] = '\0';
        for (char *p = lib; *p; p++)
            if (*p == '\t') *p = ' ';
        MPI_Get_processor_name(host, &len);
        printf("# FT-MPI/J %s %s\n", p2p_title(kind), P2P_VERSION);
        printf("# Implementation: %s (C peer)\n", lib);
        if (kind == P2P_LATENCY)
            printf("# Buffer: page-aligned malloc, blocking send/recv\n");
        else if (p2p_uses_window(kind))
            printf("# Buffer: page-aligned malloc, window %d\n", o->window);
        else
            printf("# Buffer: page-aligned malloc, each call timed alone, average over %d ranks\n", size);
        printf("# Host: %s\n", host);
        printf("%-*s%*s\n", P2P_SIZE_WIDTH, "# Size", P2P_FIELD_WIDTH,
               o->median ? (p2p_uses_window(kind) ? "Median-window bandwidth (MB/s)" : "Median latency (us)") : kind == P2P_LATENCY ? "Latency (us)" : p2p_uses_window(kind) ? "Bandwidth (MB/s)" : "Avg Latency (us)");
        fflush(stdout);
    }
    return 0;
}

static inline int p2p_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of n > 0 values (sorts them): the mean of the two middle ones for even n. */
static inline double p2p_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, p2p_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* Nearest-rank percentile of n sorted values. */
static inline double p2p_percentile(const double *sorted, int n, double p)
{
    double exact = p / 100.0 * n - 1e-9; /* 0.999 * 1000 is 999.0000000000001 */
    int rank = (int)exact;
    if (rank < exact) rank++;
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return sorted[rank - 1];
}

/* After p2p_median (which sorts): the distribution of n values (seconds) as a comment line, each
 * divided by per (2: one-way of a round trip, 1: per call) in microseconds, the same line as
 * FT-MPI/J's bench prints. */
static inline void p2p_distribution_per(long size, const double *sorted, int n, int per, const char *unit)
{
    double sum = 0.0, us = 1e6 / per;
    for (int i = 0; i < n; i++) sum += sorted[i];
    printf("# dist %ld: mean %.3f p50 %.3f p90 %.3f p99 %.3f p99.9 %.3f max %.3f (%s);", size, sum / n * us,
           p2p_percentile(sorted, n, 50) * us, p2p_percentile(sorted, n, 90) * us,
           p2p_percentile(sorted, n, 99) * us, p2p_percentile(sorted, n, 99.9) * us, sorted[n - 1] * us, unit);
    /* figures of 10 us, 100 us, 1 ms or more: how many, and their share of the total time */
    for (double bound = 10e-6 * per; bound < 1.5e-3 * per; bound *= 10) {
        int k = 0;
        double t = 0.0;
        for (int i = n - 1; i >= 0 && sorted[i] >= bound; i--) {
            k++;
            t += sorted[i];
        }
        printf(" >=%.0fus %d (%.1f%%)", bound * us, k, 100.0 * t / sum);
    }
    printf("\n");
    fflush(stdout);
}

/* The round trips of a ping-pong, one-way. */
static inline void p2p_distribution(long size, const double *sorted, int n)
{
    p2p_distribution_per(size, sorted, n, 2, "one-way us");
}

static inline void p2p_row(long size, double value)
{
    printf("%-*ld%*.2f\n", P2P_SIZE_WIDTH, size, P2P_FIELD_WIDTH, value);
    fflush(stdout);
}

/* A bandwidth row of a size: with --median (wins: rank 0's n window times, seconds) the median
 * window's bandwidth and the windows' '# dist' line, else OSU's mean over total_seconds;
 * bytes_per_window counts every direction. */
static inline void p2p_row_windows(long size, double bytes_per_window, double *wins, int n, double total_seconds)
{
    if (wins != NULL) {
        p2p_row(size, bytes_per_window / 1e6 / p2p_median(wins, n));
        p2p_distribution_per(size, wins, n, 1, "us per window");
    } else {
        p2p_row(size, bytes_per_window / 1e6 * n / total_seconds);
    }
}

/* OSU's collective row: each rank's mean time per call (us), averaged over the ranks, on rank 0. */
static inline void p2p_row_average(long size, double total_seconds, int iters, int rank)
{
    int n;
    double mine = total_seconds * 1e6 / iters, sum = 0.0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) p2p_row(size, sum / n);
}

/* A collective's row: OSU's average (total_seconds) or, with --median, each rank's median of the n
 * calls (seconds; sorted here), averaged over the ranks, and rank 0's '# dist' line. */
static inline void p2p_row_collective(long size, const struct p2p_options *o, double total_seconds, double *calls,
                                      int iters, int rank)
{
    if (!o->median) {
        p2p_row_average(size, total_seconds, iters, rank);
        return;
    }
    int n;
    double mine = p2p_median(calls, iters) * 1e6, sum = 0.0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        p2p_row(size, sum / n);
        p2p_distribution_per(size, calls, iters, 1, "per call us");
    }
}

/*
 * Barrier, then MPI_Finalize: both ranks have finished all traffic before either starts tearing
 * down (untimed). Known peer problem, not cured by this: Debian's MPICH 4.0.2 with UCX 1.13 over
 * TCP (UCX_TLS=tcp,self) sometimes hangs in MPI_Finalize after osu_bibw (rank 0 flushing its UCX
 * endpoint, rank 1 waiting in the PMI barrier); all rows are printed by then, and compare-p2p.sh's
 * per-run timeout ends the run.
 */
static inline void p2p_finish(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
}

#endif
