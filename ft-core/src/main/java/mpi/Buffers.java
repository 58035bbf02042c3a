package mpi;

import java.lang.foreign.MemorySegment;
import java.nio.Buffer;

/**
 * Turns the buffers the API accepts (Java arrays, direct and heap NIO buffers) into memory
 * regions for the engine, checking type, count and bounds. Offsets follow Open MPI's Java
 * bindings: a heap buffer starts at its array offset, a direct buffer at its address (its
 * position is ignored).
 */
final class Buffers {
    private Buffers() {}

    /**
     * A memory region; for {@code boolean[]} the bytes live in a staging array that
     * {@link #finishReceive()} copies back.
     */
    static final class Region {
        final MemorySegment seg;
        final long off;
        final long bytes;
        final boolean[] bools;
        private final int boolStart;

        Region(MemorySegment seg, long off, long bytes, boolean[] bools, int boolStart) {
            this.seg = seg;
            this.off = off;
            this.bytes = bytes;
            this.bools = bools;
            this.boolStart = boolStart;
        }

        /** Copies what a receive wrote into the staging bytes back into the user's boolean[]. */
        void finishReceive() {
            if (bools == null) return;
            for (long i = 0; i < bytes; i++) {
                bools[boolStart + (int) i] = seg.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i) != 0;
            }
        }
    }

    static final Region EMPTY = new Region(MemorySegment.NULL, 0, 0, null, 0);

    static Region region(Object buf, int count, Datatype type, String op, boolean receive)
            throws MPIException {
        return region(buf, 0, count, type, op, receive);
    }

    /**
     * @param elementOffset offset into an array buffer, in base elements of the array
     */
    static Region region(Object buf, int elementOffset, int count, Datatype type, String op, boolean receive)
            throws MPIException {
        if (type == null || type.isNull()) {
            throw MPIException.of(MPI.ERR_TYPE, op + ": datatype is null");
        }
        if (count < 0) {
            throw MPIException.of(MPI.ERR_COUNT, op + ": count is negative (" + count + ")");
        }
        long bytes = (long) count * type.sizeBytes;
        if (buf == null) {
            if (count == 0) return EMPTY;
            throw MPIException.of(MPI.ERR_BUFFER, op + ": buf is null but count is " + count);
        }
        if (buf instanceof Buffer b) {
            return bufferRegion(b, bytes, op);
        }
        int kind = arrayKind(buf);
        if (kind == -1) {
            throw MPIException.of(MPI.ERR_BUFFER, op + ": buf must be a Java primitive array or an NIO buffer, not "
                    + buf.getClass().getName());
        }
        if (!compatible(kind, type.kind)) {
            throw MPIException.of(MPI.ERR_TYPE, op + ": datatype " + type + " does not match buf of type "
                    + buf.getClass().getSimpleName());
        }
        int elem = elementBytes(kind);
        long length = java.lang.reflect.Array.getLength(buf);
        long start = (long) elementOffset * elem;
        if (elementOffset < 0 || start + bytes > length * elem) {
            throw MPIException.of(MPI.ERR_BUFFER, op + ": buf (" + buf.getClass().getSimpleName().replace("[]", "")
                    + "[" + length + "]) is too small for count " + count + " of " + type
                    + (elementOffset != 0 ? " at offset " + elementOffset : ""));
        }
        if (buf instanceof boolean[] z) {
            byte[] staging = new byte[(int) bytes];
            for (int i = 0; i < staging.length; i++) staging[i] = (byte) (z[elementOffset + i] ? 1 : 0);
            return new Region(MemorySegment.ofArray(staging), 0, bytes, receive ? z : null, elementOffset);
        }
        return new Region(arraySegment(buf), start, bytes, null, 0);
    }

    /** Region of a direct buffer for the non-blocking calls, which take only direct buffers. */
    static Region direct(Buffer buf, int count, Datatype type, String op) throws MPIException {
        if (buf != null && !buf.isDirect()) {
            throw MPIException.of(MPI.ERR_BUFFER, op + ": buf must be a direct buffer (see MPI.newByteBuffer"
                    + " and friends); non-blocking operations do not take heap buffers or arrays");
        }
        return region(buf, count, type, op, false);
    }

    private static Region bufferRegion(Buffer b, long bytes, String op) throws MPIException {
        MemorySegment seg;
        long off = 0;
        if (b.isDirect()) {
            seg = MemorySegment.ofBuffer(b.duplicate().clear());
        } else {
            if (b.isReadOnly()) {
                throw MPIException.of(MPI.ERR_BUFFER, op + ": buf is a read-only heap buffer");
            }
            Object array = b.array();
            seg = arraySegment(array);
            off = (long) b.arrayOffset() * elementBytes(arrayKind(array));
        }
        if (off + bytes > seg.byteSize()) {
            throw MPIException.of(MPI.ERR_BUFFER, op + ": buf (" + b.getClass().getSimpleName() + ", "
                    + (seg.byteSize() - off) + " bytes) is too small for " + bytes + " bytes");
        }
        return new Region(seg, off, bytes, null, 0);
    }

    private static MemorySegment arraySegment(Object a) {
        return switch (a) {
            case byte[] x -> MemorySegment.ofArray(x);
            case char[] x -> MemorySegment.ofArray(x);
            case short[] x -> MemorySegment.ofArray(x);
            case int[] x -> MemorySegment.ofArray(x);
            case long[] x -> MemorySegment.ofArray(x);
            case float[] x -> MemorySegment.ofArray(x);
            case double[] x -> MemorySegment.ofArray(x);
            default -> throw new IllegalArgumentException(a.getClass().getName());
        };
    }

    static int arrayKind(Object a) {
        return switch (a) {
            case byte[] x -> Datatype.K_BYTE;
            case char[] x -> Datatype.K_CHAR;
            case short[] x -> Datatype.K_SHORT;
            case boolean[] x -> Datatype.K_BOOLEAN;
            case int[] x -> Datatype.K_INT;
            case long[] x -> Datatype.K_LONG;
            case float[] x -> Datatype.K_FLOAT;
            case double[] x -> Datatype.K_DOUBLE;
            default -> -1;
        };
    }

    static int elementBytes(int kind) {
        return switch (kind) {
            case Datatype.K_CHAR, Datatype.K_SHORT -> 2;
            case Datatype.K_INT, Datatype.K_FLOAT -> 4;
            case Datatype.K_LONG, Datatype.K_DOUBLE -> 8;
            default -> 1;
        };
    }

    private static boolean compatible(int arrayKind, int typeKind) {
        if (arrayKind == typeKind) return true;
        return arrayKind == Datatype.K_BYTE && typeKind == Datatype.K_PACKED;
    }
}
