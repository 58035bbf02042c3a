package org.ftmpi.ddt;

import java.lang.foreign.MemorySegment;
import java.nio.Buffer;

/**
 * Maps the buffers the Java binding accepts to memory segments and byte offsets. Java primitive
 * arrays are addressed in elements of the array (Open MPI's Java semantics); {@link
 * java.nio.ByteBuffer}s (heap or direct) and {@link MemorySegment}s in bytes. A buffer's offset
 * is relative to its start (a ByteBuffer's position is ignored).
 */
public final class Buffers {
    private Buffers() {
    }

    /** The whole buffer as a segment. */
    public static MemorySegment segment(Object buf) {
        return switch (buf) {
            case null -> throw DatatypeException.buffer("buffer must not be null");
            case MemorySegment s -> s;
            case Buffer b -> {
                try {
                    yield MemorySegment.ofBuffer(b.duplicate().clear());
                } catch (IllegalArgumentException e) {
                    throw DatatypeException.buffer("unsupported buffer " + b.getClass().getName() + ": " + e.getMessage());
                }
            }
            case byte[] a -> MemorySegment.ofArray(a);
            case char[] a -> MemorySegment.ofArray(a);
            case short[] a -> MemorySegment.ofArray(a);
            case int[] a -> MemorySegment.ofArray(a);
            case long[] a -> MemorySegment.ofArray(a);
            case float[] a -> MemorySegment.ofArray(a);
            case double[] a -> MemorySegment.ofArray(a);
            case boolean[] a -> throw DatatypeException.buffer(
                    "boolean[] has no memory-segment view; use a byte[] or ByteBuffer of 0/1 bytes");
            default -> throw DatatypeException.buffer("unsupported buffer type " + buf.getClass().getName());
        };
    }

    /**
     * Size in bytes of a primitive array buffer (not {@code boolean[]}), or -1 for anything else.
     * Plain {@code instanceof} tests, most common first: a convertor asks this once per message.
     */
    static long arrayBytes(Object buf) {
        if (buf instanceof double[] a) {
            return 8L * a.length;
        } else if (buf instanceof byte[] a) {
            return a.length;
        } else if (buf instanceof int[] a) {
            return 4L * a.length;
        } else if (buf instanceof long[] a) {
            return 8L * a.length;
        } else if (buf instanceof float[] a) {
            return 4L * a.length;
        } else if (buf instanceof char[] a) {
            return 2L * a.length;
        } else if (buf instanceof short[] a) {
            return 2L * a.length;
        }
        return -1;
    }

    /** Element size of an array buffer, 1 for byte-addressed buffers. */
    public static int unit(Object buf) {
        return switch (buf) {
            case char[] a -> 2;
            case short[] a -> 2;
            case int[] a -> 4;
            case float[] a -> 4;
            case long[] a -> 8;
            case double[] a -> 8;
            default -> 1;
        };
    }

    /** Byte offset of {@code offset} (elements for arrays, bytes otherwise) into {@code buf}. */
    public static long byteOffset(Object buf, long offset) {
        return Math.multiplyExact(offset, (long) unit(buf));
    }
}
