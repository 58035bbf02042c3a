/*
 * ISA-L peer for the FT-MPI/J Reed-Solomon benchmark (bench/peers/isal/compare.sh).
 *
 * Same shapes and method as org.ftmpi.bench.rs.RsHarness: Cauchy generator
 * (gf_gen_cauchy1_matrix), ec_init_tables + ec_encode_data for encode; decode with the first m
 * data shards lost = invert the k x k submatrix of surviving rows (gf_invert_matrix), take the
 * rows of the lost shards, ec_init_tables + ec_encode_data. Single thread, 64-byte aligned
 * buffers. Reports data GB/s = k * shard bytes / time, median of interleaved samples.
 *
 * usage: isal_bench [shard_bytes=1048576] [reps=7] [ms_per_sample=200] [shapes=4x2,8x2,16x4]
 * prints: SAMPLE isal <op> <k> <m> <GB/s>, RESULT isal <op> <k> <m> <median GB/s>,
 *         PARITYHASH <k> <m> <fnv1a64 of parity for the deterministic pattern>
 */
#include <isa-l/erasure_code.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static unsigned char *alloc_buf(size_t len) {
    void *p = NULL;
    if (posix_memalign(&p, 64, len ? len : 64) != 0) {
        perror("posix_memalign");
        exit(1);
    }
    return p;
}

struct ctx {
    int k, m, len;
    unsigned char **data, **parity;   /* encode */
    unsigned char *enc_tbls;
    unsigned char **srcs, **rec;      /* decode */
    unsigned char *dec_tbls;
};

static void do_encode(struct ctx *c) {
    ec_encode_data(c->len, c->k, c->m, c->enc_tbls, c->data, c->parity);
}

static void do_decode(struct ctx *c) {
    ec_encode_data(c->len, c->k, c->m, c->dec_tbls, c->srcs, c->rec);
}

/* ops per second over about `ms` milliseconds */
static double sample(void (*fn)(struct ctx *), struct ctx *c, double ms) {
    long n = 0;
    double t0 = now(), t;
    do {
        fn(c);
        n++;
        t = now();
    } while ((t - t0) * 1e3 < ms);
    return n / (t - t0);
}

static uint64_t fnv1a(uint64_t h, const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static void run_shape(int k, int m, int len, int reps, double ms) {
    struct ctx c = {.k = k, .m = m, .len = len};
    int n = k + m;
    unsigned char *a = malloc((size_t)n * k);
    gf_gen_cauchy1_matrix(a, n, k);

    unsigned char **shards = malloc(sizeof(*shards) * n);
    for (int i = 0; i < n; i++) shards[i] = alloc_buf(len);
    /* deterministic pattern shared with the Java harness for the parity cross-check */
    for (int i = 0; i < k; i++)
        for (int j = 0; j < len; j++) shards[i][j] = (unsigned char)(i * 131 + j * 7);
    c.data = shards;
    c.parity = shards + k;
    c.enc_tbls = alloc_buf(32 * (size_t)k * m);
    ec_init_tables(k, m, &a[k * k], c.enc_tbls);
    do_encode(&c);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int p = 0; p < m; p++) h = fnv1a(h, c.parity[p], len);
    printf("PARITYHASH %d %d %016llx\n", k, m, (unsigned long long)h);

    /* random data for timing */
    srand(1);
    for (int i = 0; i < k; i++)
        for (int j = 0; j < len; j++) shards[i][j] = (unsigned char)rand();
    do_encode(&c);

    /* decode: shards 0..m-1 lost; sources = the first k surviving shards m..m+k-1 */
    unsigned char *b = malloc((size_t)k * k), *inv = malloc((size_t)k * k), *dm = malloc((size_t)m * k);
    for (int r = 0; r < k; r++) memcpy(&b[r * k], &a[(m + r) * k], k);
    if (gf_invert_matrix(b, inv, k) != 0) {
        fprintf(stderr, "singular decode matrix\n");
        exit(1);
    }
    for (int e = 0; e < m; e++) memcpy(&dm[e * k], &inv[e * k], k); /* lost data shard e = row e of inverse */
    c.dec_tbls = alloc_buf(32 * (size_t)k * m);
    ec_init_tables(k, m, dm, c.dec_tbls);
    c.srcs = shards + m;
    c.rec = malloc(sizeof(*c.rec) * m);
    for (int e = 0; e < m; e++) c.rec[e] = alloc_buf(len);
    do_decode(&c);
    for (int e = 0; e < m; e++)
        if (memcmp(c.rec[e], shards[e], len) != 0) {
            fprintf(stderr, "ISA-L decode mismatch on shard %d\n", e);
            exit(1);
        }

    double bytes = (double)k * len;
    for (int w = 0; w < 3; w++) {
        sample(do_encode, &c, ms);
        sample(do_decode, &c, ms);
    }
    double *enc = malloc(sizeof(double) * reps), *dec = malloc(sizeof(double) * reps);
    for (int r = 0; r < reps; r++) {
        if (r & 1) {
            dec[r] = sample(do_decode, &c, ms) * bytes / 1e9;
            enc[r] = sample(do_encode, &c, ms) * bytes / 1e9;
        } else {
            enc[r] = sample(do_encode, &c, ms) * bytes / 1e9;
            dec[r] = sample(do_decode, &c, ms) * bytes / 1e9;
        }
        printf("SAMPLE isal encode %d %d %.3f\nSAMPLE isal decode %d %d %.3f\n", k, m, enc[r], k, m, dec[r]);
    }
    qsort(enc, reps, sizeof(double), cmp_double);
    qsort(dec, reps, sizeof(double), cmp_double);
    printf("RESULT isal encode %d %d %.3f (min %.3f max %.3f)\n", k, m, enc[reps / 2], enc[0], enc[reps - 1]);
    printf("RESULT isal decode %d %d %.3f (min %.3f max %.3f)\n", k, m, dec[reps / 2], dec[0], dec[reps - 1]);
    fflush(stdout);
}

int main(int argc, char **argv) {
    int len = argc > 1 ? atoi(argv[1]) : 1 << 20;
    int reps = argc > 2 ? atoi(argv[2]) : 7;
    double ms = argc > 3 ? atof(argv[3]) : 200;
    char shapes[256] = "4x2,8x2,16x4";
    if (argc > 4) snprintf(shapes, sizeof shapes, "%s", argv[4]);
    if (reps < 1 || len < 0) {
        fprintf(stderr, "usage: %s [shard_bytes] [reps] [ms_per_sample] [shapes]\n", argv[0]);
        return 2;
    }
    for (char *tok = strtok(shapes, ","); tok; tok = strtok(NULL, ",")) {
        int k, m;
        if (sscanf(tok, "%dx%d", &k, &m) != 2 || k < 1 || m < 1 || k + m > 256) {
            fprintf(stderr, "bad shape %s\n", tok);
            return 2;
        }
        run_shape(k, m, len, reps, ms);
    }
    return 0;
}
