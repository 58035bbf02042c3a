package org.ftmpi.coll;

import java.lang.foreign.MemorySegment;

/**
 * Small scratch regions a thread keeps between collective calls, so that a loop of equal small
 * reductions allocates none: {@link #take} hands out a kept region of exactly the asked size,
 * or a new one; {@link #giveBack} keeps it for the thread's next call.
 *
 * <p>A region is held by one call from {@link #take} to {@link #giveBack}: a nested call (a
 * user operation that itself reduces) gets another one. A call that fails does not give its
 * regions back, so a receive that the failure left behind can never write into a later call's
 * scratch. Only regions of up to {@link #KEPT_BYTES} are kept, at most {@link #SLOTS} per thread.
 */
public final class Scratch {
    /** Largest region kept between calls. */
    public static final long KEPT_BYTES = 4096;

    /** Regions kept per thread: an in-place copy and a rooted reduction's two partial results. */
    static final int SLOTS = 4;

    private static final ThreadLocal<MemorySegment[]> KEPT = ThreadLocal.withInitial(() -> new MemorySegment[SLOTS]);

    private Scratch() {}

    /** A region of {@code bytes}: one this thread gave back, if one has that size, else a new one. */
    public static MemorySegment take(long bytes) {
        MemorySegment[] kept = KEPT.get();
        for (int i = 0; i < SLOTS; i++) {
            MemorySegment s = kept[i];
            if (s != null && s.byteSize() == bytes) {
                kept[i] = null;
                return s;
            }
        }
        return MemorySegment.ofArray(new byte[(int) bytes]);
    }

    /**
     * Keeps {@code s} (from {@link #take}, no longer used by the caller) for this thread's next
     * {@link #take}: in a free slot, else in place of a region of another size. Large regions
     * and a region already kept are ignored.
     */
    public static void giveBack(MemorySegment s) {
        if (s.byteSize() > KEPT_BYTES) return;
        MemorySegment[] kept = KEPT.get();
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
