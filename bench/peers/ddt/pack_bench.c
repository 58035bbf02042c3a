/* MPI_Pack / MPI_Unpack bandwidth of Open MPI on the layouts of layouts.h, plus memcpy of the
 * same byte count. Output, one line per layout:
 *   layout <name> bytes <B> pack_MBps <x> unpack_MBps <y> memcpy_MBps <z> huge_kB <h>
 * Usage: pack_bench [-H] [layout...]   (default: all layouts; -H: buffers on 2 MiB pages)
 *
 * DdtPackHarness.java measures exactly the same way (keep the two in sync; docs/datatypes.md,
 * "Benchmarks"):
 *  - buffers: every buffer is its own anonymous mmap, 2 MiB-aligned, advised MADV_HUGEPAGE (-H)
 *    or MADV_NOHUGEPAGE (default), so the page size is chosen here and not by the host's THP
 *    default. The user buffer starts 16 bytes past the 2 MiB boundary (where a large Java
 *    array's data starts in its G1 region, and where glibc's malloc puts a large block); the
 *    packed buffer starts on it. huge_kB is the process's AnonHugePages after the layout's run
 *    (/proc/self/smaps_rollup), to check the page size took.
 *  - warm-up: two rounds each of pack, unpack, memcpy of >= 300 ms, then the timed rounds.
 *  - timing: each figure is the median of ROUNDS rounds of >= MIN_NS of the calling thread's CPU
 *    time (CLOCK_THREAD_CPUTIME_ID: the machine is shared and CPU time does not count waiting
 *    for a core), BATCH operations per clock read; pack, unpack, memcpy in that order. */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "layouts.h"

#define ROUNDS 5
#define MIN_NS 100000000L
#define WARM_NS 300000000L
#define BATCH 64
#define HUGE_PAGE (2L << 20)

static int huge;

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* bytes at offset off past a 2 MiB boundary of a fresh mapping, page size as chosen by -H */
static char *map(size_t bytes, size_t off, void **base, size_t *len) {
    *len = (bytes + off + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE + HUGE_PAGE;
    char *m = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) { perror("mmap"); exit(1); }
    char *a = (char *) (((uintptr_t) m + HUGE_PAGE - 1) & ~(uintptr_t) (HUGE_PAGE - 1));
    if (madvise(m, *len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0) { perror("madvise"); exit(1); }
    *base = m;
    return a + off;
}

static long huge_kb(void) {
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) break;
    }
    if (f) fclose(f);
    return kb;
}

static volatile int sink;

/* mode 0 pack, 1 unpack, 2 memcpy; one round of >= minNs, MB/s */
static double round1(int mode, MPI_Datatype t, int count, void *user, void *packed, int bytes, long minNs) {
    long iters = 0, t0 = now_ns(), t1;
    do {
        for (int j = 0; j < BATCH; j++) {
            int pos = 0;
            if (mode == 0) MPI_Pack(user, count, t, packed, bytes, &pos, MPI_COMM_SELF);
            else if (mode == 1) MPI_Unpack(packed, bytes, &pos, user, count, t, MPI_COMM_SELF);
            else memcpy(packed, user, bytes);
            sink += ((char *) packed)[j % bytes];
        }
        iters += BATCH;
        t1 = now_ns();
    } while (t1 - t0 < minNs);
    return (double) bytes * iters / ((t1 - t0) / 1e9) / 1e6;
}

static double median(int mode, MPI_Datatype t, int count, void *user, void *packed, int bytes) {
    double r[ROUNDS];
    for (int k = 0; k < ROUNDS; k++) r[k] = round1(mode, t, count, user, packed, bytes, MIN_NS);
    qsort(r, ROUNDS, sizeof(double), cmp);
    return r[ROUNDS / 2];
}

static void run(const char *name, MPI_Datatype t, int count, size_t userBytes) {
    MPI_Type_commit(&t);
    int size;
    MPI_Type_size(t, &size);
    int bytes = size * count;
    void *ub, *pb;
    size_t ul, pl;
    char *user = map(userBytes, 16, &ub, &ul);
    char *packed = map((size_t) bytes + 64, 0, &pb, &pl);
    for (size_t i = 0; i < userBytes; i++) user[i] = (char) i;
    for (int w = 0; w < 2; w++)
        for (int mode = 0; mode < 3; mode++) round1(mode, t, count, user, packed, bytes, WARM_NS);
    double p = median(0, t, count, user, packed, bytes);
    double u = median(1, t, count, user, packed, bytes);
    double m = median(2, t, count, user, packed, bytes);
    printf("layout %s bytes %d pack_MBps %.1f unpack_MBps %.1f memcpy_MBps %.1f huge_kB %ld\n",
           name, bytes, p, u, m, huge_kb());
    fflush(stdout);
    munmap(ub, ul);
    munmap(pb, pl);
    MPI_Type_free(&t);
}

static int wanted(int argc, char **argv, const char *name) {
    int any = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') continue;
        any = 1;
        if (strcmp(argv[i], name) == 0) return 1;
    }
    return !any;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) if (strcmp(argv[i], "-H") == 0) huge = 1;
    MPI_Init(&argc, &argv);
    int ns[] = {64, 256, 1024};
    for (int k = 0; k < 3; k++) {
        int n = ns[k];
        char name[32];
        snprintf(name, sizeof name, "col%d", n);
        if (!wanted(argc, argv, name)) continue;
        MPI_Datatype col;
        MPI_Type_vector(n, 1, n, MPI_DOUBLE, &col);
        run(name, col, 1, (size_t) n * n * 8);
    }
    if (wanted(argc, argv, "longrun")) {
        MPI_Datatype lr;
        MPI_Type_vector(64, 1024, 2048, MPI_DOUBLE, &lr);
        run("longrun", lr, 1, (size_t) 64 * 2048 * 8);
    }
    if (wanted(argc, argv, "indexed")) {
        int bl[IDX_BLOCKS], disp[IDX_BLOCKS], at = 0;
        for (int i = 0; i < IDX_BLOCKS; i++) {
            at += 1 + (i * 5) % 11;
            bl[i] = 1 + (i * 7) % 13;
            disp[i] = at;
            at += bl[i];
        }
        MPI_Datatype idx;
        MPI_Type_indexed(IDX_BLOCKS, bl, disp, MPI_DOUBLE, &idx);
        run("indexed", idx, 1, (size_t) at * 8);
    }
    int x21 = wanted(argc, argv, "struct93x21"), x171 = wanted(argc, argv, "struct93x171");
    if (x21 || x171) {
        MPI_Datatype T[6] = {MPI_DOUBLE, MPI_INT, MPI_DOUBLE, MPI_DOUBLE, MPI_FLOAT, MPI_INT};
        int S[6] = {8, 4, 8, 8, 4, 4};
        int sbl[STRUCT_FIELDS];
        MPI_Aint sd[STRUCT_FIELDS];
        MPI_Datatype st[STRUCT_FIELDS];
        long off = 0;
        for (int i = 0; i < STRUCT_FIELDS; i++) {
            int s = S[i % 6];
            off = (off + s - 1) / s * s;
            sbl[i] = 1;
            sd[i] = off;
            st[i] = T[i % 6];
            off += s;
        }
        MPI_Datatype rec;
        MPI_Type_create_struct(STRUCT_FIELDS, sbl, sd, st, &rec);
        MPI_Aint lb, ext;
        MPI_Type_get_extent(rec, &lb, &ext);
        MPI_Datatype rec2;
        MPI_Type_dup(rec, &rec2);
        if (x21) run("struct93x21", rec, 21, (size_t) ext * 21); else MPI_Type_free(&rec);
        if (x171) run("struct93x171", rec2, 171, (size_t) ext * 171); else MPI_Type_free(&rec2);
    }
    MPI_Finalize();
    return 0;
}
