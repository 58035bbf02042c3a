package org.ftmpi.transport.shm;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * {@link ControlWords} through JDK {@code VarHandle}s on a {@code MemorySegment} view of the
 * mapping: no {@code sun.misc.Unsafe}. Selected with the job option {@code shm-unsafe=false}.
 */
final class SegmentControlWords implements ControlWords {
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    private final MemorySegment seg;

    SegmentControlWords(MemorySegment seg) {
        this.seg = seg;
    }

    @Override public long getLongAcquire(long offset) { return (long) LONG.getAcquire(seg, offset); }
    @Override public void putLongRelease(long offset, long value) { LONG.setRelease(seg, offset, value); }
    @Override public int getIntAcquire(long offset) { return (int) INT.getAcquire(seg, offset); }
    @Override public void putIntRelease(long offset, int value) { INT.setRelease(seg, offset, value); }
    @Override public boolean compareAndSetInt(long offset, int expected, int value) {
        return INT.compareAndSet(seg, offset, expected, value);
    }
    @Override public void putLongPlain(long offset, long value) { seg.set(ValueLayout.JAVA_LONG, offset, value); }
    @Override public void putIntPlain(long offset, int value) { seg.set(ValueLayout.JAVA_INT, offset, value); }
    @Override public long getLongPlain(long offset) { return seg.get(ValueLayout.JAVA_LONG, offset); }
    @Override public int getIntPlain(long offset) { return seg.get(ValueLayout.JAVA_INT, offset); }
}
