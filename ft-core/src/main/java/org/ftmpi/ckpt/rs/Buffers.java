package org.ftmpi.ckpt.rs;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/** Argument checking and wrapping of the three buffer kinds into {@link MemorySegment}s. */
final class Buffers {
    private Buffers() {}

    static MemorySegment[] wrap(byte[][] a, String name) {
        if (a == null) throw new IllegalArgumentException(name + ": null");
        MemorySegment[] s = new MemorySegment[a.length];
        for (int i = 0; i < a.length; i++) {
            if (a[i] == null) throw new IllegalArgumentException(name + "[" + i + "]: null");
            s[i] = MemorySegment.ofArray(a[i]);
        }
        return s;
    }

    static MemorySegment[] wrap(ByteBuffer[] a, String name) {
        if (a == null) throw new IllegalArgumentException(name + ": null");
        MemorySegment[] s = new MemorySegment[a.length];
        for (int i = 0; i < a.length; i++) {
            if (a[i] == null) throw new IllegalArgumentException(name + "[" + i + "]: null");
            s[i] = MemorySegment.ofBuffer(a[i]);
        }
        return s;
    }

    static void checkCount(Object[] a, int expected, String name) {
        if (a == null) throw new IllegalArgumentException(name + ": null");
        if (a.length != expected) {
            throw new IllegalArgumentException(name + ": expected " + expected + " shards, got " + a.length);
        }
    }

    static void checkCount(boolean[] present, int expected) {
        if (present == null) throw new IllegalArgumentException("present: null");
        if (present.length != expected) {
            throw new IllegalArgumentException("present: expected " + expected + " entries (k + m), got " + present.length);
        }
    }

    /** Checks all segments are non-null and of one length (equal to {@code expect} if >= 0). */
    static long commonLength(MemorySegment[] s, String name, long expect) {
        long len = expect;
        for (int i = 0; i < s.length; i++) {
            if (s[i] == null) throw new IllegalArgumentException(name + "[" + i + "]: null");
            long l = s[i].byteSize();
            if (len < 0) {
                len = l;
            } else if (l != len) {
                throw new IllegalArgumentException(name + "[" + i + "]: length " + l
                        + " differs from the common shard length " + len);
            }
        }
        return len;
    }

    static void checkWritable(MemorySegment[] s, String name) {
        for (int i = 0; i < s.length; i++) {
            if (s[i].isReadOnly()) throw new IllegalArgumentException(name + "[" + i + "]: read-only buffer");
        }
    }
}
