package org.ftmpi.ddt;

/**
 * Spacer stores for far-strided runs of 8-byte blocks (a matrix column: one double per row).
 *
 * <p>Every access of such a run touches another cache line, and at a stride of 4 KiB or more every
 * line maps to the same L1 set. Measured on the benchmark machine (AMD EPYC, Zen 4; C and Java
 * alike): a tight loop of these accesses runs at half the speed of a slower one, and the faster
 * the loop issues them (unrolled by C2 or {@code gcc -funroll-loops}) the slower it gets (matrix
 * column 1024 x 1024, unpack: plain loop 1.0-1.4 GB/s, unrolled 0.9-1.0). Too many misses to one
 * set in flight evict each other's lines before use; Open MPI's convertor, with a call per
 * element, issues them slowly enough. Three stores per element into a small, cache-hot scratch
 * array cycled sequentially occupy the store queue and keep fewer far accesses in flight: unpack
 * 2.7 GB/s, pack 3.1 GB/s in the same loop (details in {@code docs/datatypes.md}). Below a 4 KiB
 * stride the lines spread over L1 sets and the spacer costs more than it gains.
 *
 * <p>Each thread has one scratch array, used by the convertors it creates (its contents are never
 * read; sharing one between threads would bounce its lines between cores). A convertor belongs
 * to one thread at a time; if a request moves to another thread the stores stay correct, only
 * their cache locality suffers. Stateless otherwise.
 * {@code -Dorg.ftmpi.ddt.noSpacer=true} turns the spacer off.
 */
final class Spacer {
    /** Strides (bytes) from which spacer stores are used. */
    static final long MIN_STRIDE = 4096;
    static final boolean ENABLED = !Boolean.getBoolean("org.ftmpi.ddt.noSpacer");
    private static final int MASK = 255;

    private Spacer() {
    }

    /**
     * One scratch array per thread, reused by every convertor that thread creates: a fresh array per
     * convertor cost an allocation and 32 cold cache lines per message (measured: a col1024 pack
     * with a new convertor per call took 1.5x the time of one reusing its convertor).
     */
    private static final ThreadLocal<long[]> SCRATCH = ThreadLocal.withInitial(() -> new long[MASK + 1]);

    /** The calling thread's scratch array: 256 longs (2 KiB, 32 cache lines). */
    static long[] scratch() {
        return SCRATCH.get();
    }

    /** The three spacer stores that follow element {@code i} of a far-strided run. */
    static void space(long[] scratch, int i) {
        int k = 3 * i;
        scratch[k & MASK] = i;
        scratch[(k + 1) & MASK] = i;
        scratch[(k + 2) & MASK] = i;
    }
}
