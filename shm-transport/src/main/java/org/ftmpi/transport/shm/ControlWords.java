package org.ftmpi.transport.shm;

/**
 * Ordered access to the control words (positions, flags, counters) of a mapped shared-memory
 * file. Two implementations exist so that Unsafe-based access can be switched off in one
 * place ({@link MappedRegion#open}): {@link ChronicleControlWords} (Chronicle Bytes, the
 * default) and {@link SegmentControlWords} (JDK {@code VarHandle}s on a {@code MemorySegment}).
 *
 * <p>Offsets are bytes from the start of the file; longs must be 8-byte aligned.
 * <b>Note:</b> stateless apart from the mapping; thread-safe as the memory model allows.
 */
interface ControlWords {
    long getLongAcquire(long offset);

    void putLongRelease(long offset, long value);

    int getIntAcquire(long offset);

    void putIntRelease(long offset, int value);

    boolean compareAndSetInt(long offset, int expected, int value);

    /** Plain (unordered) writes for fields published later by a release store. */
    void putLongPlain(long offset, long value);

    void putIntPlain(long offset, int value);

    long getLongPlain(long offset);

    int getIntPlain(long offset);
}
