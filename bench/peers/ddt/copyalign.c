/* The longrun copy pattern (64 blocks of 8 KiB from a source at a 16 KiB stride into a packed
 * buffer) with glibc memcpy and with hand-written AVX2 / AVX-512 loops (what the JVM's copy stubs
 * do), for source/destination offsets from 64-byte alignment (0/16/48 bytes). Median of 5 rounds
 * of >= 100 ms thread CPU time, as pack_bench.c. Session 7 (docs/datatypes.md): a destination 16
 * bytes off 64-byte alignment halves glibc's memcpy (rep movsb from 2112 bytes) but not the loops.
 * Build and run: gcc -O2 -mavx512f -o copyalign bench/peers/ddt/copyalign.c && ./copyalign */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <immintrin.h>

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void avx2(char *d, const char *s, size_t n) {
    for (size_t i = 0; i < n; i += 64) {
        __m256i a = _mm256_loadu_si256((const __m256i *) (s + i));
        __m256i b = _mm256_loadu_si256((const __m256i *) (s + i + 32));
        _mm256_storeu_si256((__m256i *) (d + i), a);
        _mm256_storeu_si256((__m256i *) (d + i + 32), b);
    }
}

static void avx512(char *d, const char *s, size_t n) {
    for (size_t i = 0; i < n; i += 128) {
        __m512i a = _mm512_loadu_si512((const void *) (s + i));
        __m512i b = _mm512_loadu_si512((const void *) (s + i + 64));
        _mm512_storeu_si512((void *) (d + i), a);
        _mm512_storeu_si512((void *) (d + i + 64), b);
    }
}

static volatile int sink;

int main(void) {
    char *user = aligned_alloc(4096, 64 * 16384 + 4096);
    char *packed = aligned_alloc(4096, 524288 + 4096);
    memset(user, 1, 64 * 16384 + 4096);
    memset(packed, 1, 524288 + 4096);
    int offs[][2] = {{0, 0}, {16, 0}, {0, 16}, {16, 16}, {48, 0}};
    const char *names[] = {"memcpy", "avx2  ", "avx512"};
    for (int rep = 0; rep < 2; rep++) {
        for (int o = 0; o < 5; o++) {
            for (int kind = 0; kind < 3; kind++) {
                int so = offs[o][0], dof = offs[o][1];
                double r[5];
                for (int k = 0; k < 5; k++) {
                    long it = 0, t0 = now_ns(), t1;
                    do {
                        for (int j = 0; j < 64; j++) {
                            for (int b = 0; b < 64; b++) {
                                char *d = packed + dof + 8192 * b;
                                const char *s = user + so + 16384L * b;
                                if (kind == 0) memcpy(d, s, 8192);
                                else if (kind == 1) avx2(d, s, 8192);
                                else avx512(d, s, 8192);
                            }
                            sink += packed[j];
                        }
                        it += 64;
                        t1 = now_ns();
                    } while (t1 - t0 < 100000000L);
                    r[k] = 524288.0 * it / ((t1 - t0) / 1e9) / 1e6;
                }
                for (int a = 0; a < 5; a++)
                    for (int b = a + 1; b < 5; b++)
                        if (r[b] < r[a]) { double x = r[a]; r[a] = r[b]; r[b] = x; }
                printf("src+%2d dst+%2d %s %.0f MB/s\n", so, dof, names[kind], r[2]);
            }
        }
    }
    free(user);
    free(packed);
    return 0;
}
