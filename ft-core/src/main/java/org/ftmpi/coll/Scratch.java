package org.ftmpi.coll;

import java.lang.foreign.MemorySegment;

/**
 * Scratch regions a thread keeps between collective calls, so that a loop of equal reductions
 * allocates none: {@link #take} hands out a kept region of exactly the asked size, or a new one;
 * {@link #giveBack} keeps it for the thread's next call.
 *
 * <p>Regions of up to {@link #KEPT_BYTES} (4 MiB) are kept, so a thread holds at most {@link
 * #SLOTS} times that (in practice two regions of its largest reduction). Until session 30 only
 * regions of up to 4 KiB were: every larger reduction made a new heap array per call, 1 MiB and
 * more as a G1 humongous object, and an np 2 loop of 1 MiB {@code allReduce}s ran some 38 young
 * collections in 300 calls (docs/benchmarks.md, "Session 30").
 *
 * <p>A region is held by one call from {@link #take} to {@link #giveBack}: a nested call (a
 * user operation that itself reduces) gets another one. A call that fails does not give its
 * regions back, so a receive that the failure left behind can never write into a later call's
 * scratch.
 */
public final class Scratch {
    /** Largest region kept between calls. */
    public static final long KEPT_BYTES = 4L << 20;

    /** Regions kept per thread: an in-place copy and a rooted reduction's two partial results. */
    static final int SLOTS = 4;

    private static final ThreadLocal<Kept> KEPT = ThreadLocal.withInitial(Kept::new);

    private Scratch() {}

    /** A region of {@code bytes}: one this thread gave back, if one has that size, else a new one. */
    public static MemorySegment take(long bytes) {
        return KEPT.get().take(bytes);
    }

    /**
     * This thread's kept regions, for a call that takes and gives back several: one
     * thread-local lookup instead of one per {@link #take} and {@link #giveBack}.
     */
    public static Kept kept() {
        return KEPT.get();
    }

    /** One thread's kept regions; use on that thread only. */
    public static final class Kept {
        private final MemorySegment[] kept = new MemorySegment[SLOTS];

        private Kept() {}

        /** {@link Scratch#take} on these regions. */
        public MemorySegment take(long bytes) {
            for (int i = 0; i < SLOTS; i++) {
                MemorySegment s = kept[i];
                if (s != null && s.byteSize() == bytes) {
                    kept[i] = null;
                    return s;
                }
            }
            return bytes < NATIVE_BYTES ? MemorySegment.ofArray(new byte[(int) bytes])
                    : java.lang.foreign.Arena.ofAuto().allocate(bytes, 64);
        }

        /** {@link Scratch#giveBack} to these regions. */
        public void giveBack(MemorySegment s) {
            if (s.byteSize() > KEPT_BYTES) return;
            int free = -1;
            for (int i = 0; i < SLOTS; i++) {
                if (kept[i] == s) return;
                if (kept[i] == null && free < 0) free = i;
            }
            if (free < 0) {
                for (int i = 0; i < SLOTS && free < 0; i++) if (kept[i].byteSize() != s.byteSize()) free = i;
                if (free < 0) free = 0;
            }
            kept[free] = s;
        }
    }

    /**
     * Regions of at least this size are native memory (freed when unreachable): a large message
     * received into one is copied once, straight from the sender's memory where the transport
     * can (shared memory's cross-memory attach), where a heap array takes a second copy through
     * a bounce buffer.
     */
    public static final long NATIVE_BYTES = 32 * 1024;

    /**
     * Keeps {@code s} (from {@link #take}, no longer used by the caller) for this thread's next
     * {@link #take}: in a free slot, else in place of a region of another size. Large regions
     * and a region already kept are ignored.
     */
    public static void giveBack(MemorySegment s) {
        KEPT.get().giveBack(s);
    }

}
