/* MPI_Pack / MPI_Unpack bandwidth of Open MPI on the layouts of layouts.h, plus memcpy of the
 * same byte count. Output, one line per layout:
 *   layout <name> bytes <B> pack_MBps <x> unpack_MBps <y> memcpy_MBps <z>
 * Each figure is the median of ROUNDS timed rounds of >= MIN_NS each, timed in CPU time of the
 * calling thread (CLOCK_THREAD_CPUTIME_ID): the benchmark machine is shared, and CPU time does not
 * count the time the process waits for a core. DdtPackHarness.java measures the same way. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "layouts.h"

#define ROUNDS 5
#define MIN_NS 100000000L
#define BATCH 64

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static volatile int sink;

/* mode 0 pack, 1 unpack, 2 memcpy */
static double measure(int mode, MPI_Datatype t, int count, void *user, void *packed, int bytes) {
    double r[ROUNDS];
    for (int k = 0; k < ROUNDS; k++) {
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
        } while (t1 - t0 < MIN_NS);
        r[k] = (double) bytes * iters / ((t1 - t0) / 1e9) / 1e6;
    }
    qsort(r, ROUNDS, sizeof(double), cmp);
    return r[ROUNDS / 2];
}

static void run(const char *name, MPI_Datatype t, int count, size_t userBytes) {
    MPI_Type_commit(&t);
    int bytes;
    MPI_Pack_size(count, t, MPI_COMM_SELF, &bytes);
    int size;
    MPI_Type_size(t, &size);
    bytes = size * count;
    char *user = aligned_alloc(64, (userBytes + 63) / 64 * 64);
    char *packed = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    for (size_t i = 0; i < userBytes; i++) user[i] = (char) i;
    double p = measure(0, t, count, user, packed, bytes);
    double u = measure(1, t, count, user, packed, bytes);
    double m = measure(2, t, count, user, packed, bytes);
    printf("layout %s bytes %d pack_MBps %.1f unpack_MBps %.1f memcpy_MBps %.1f\n", name, bytes, p, u, m);
    fflush(stdout);
    free(user);
    free(packed);
    MPI_Type_free(&t);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int ns[] = {64, 256, 1024};
    for (int k = 0; k < 3; k++) {
        int n = ns[k];
        MPI_Datatype col;
        MPI_Type_vector(n, 1, n, MPI_DOUBLE, &col);
        char name[32];
        snprintf(name, sizeof name, "col%d", n);
        run(name, col, 1, (size_t) n * n * 8);
    }
    MPI_Datatype lr;
    MPI_Type_vector(64, 1024, 2048, MPI_DOUBLE, &lr);
    run("longrun", lr, 1, (size_t) 64 * 2048 * 8);

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
    MPI_Datatype rec2 = rec;
    MPI_Type_dup(rec, &rec2);
    run("struct93x21", rec, 21, (size_t) ext * 21);
    run("struct93x171", rec2, 171, (size_t) ext * 171);
    MPI_Finalize();
    return 0;
}
