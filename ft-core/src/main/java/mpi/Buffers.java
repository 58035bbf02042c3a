package mpi;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.Buffer;
import org.ftmpi.ddt.Convertor;
import org.ftmpi.ddt.DatatypeException;

/**
 * Turns the buffers the API accepts (Java arrays, direct and heap NIO buffers) into memory
 * regions for the engine, checking type, count and bounds. Offsets follow Open MPI's Java
 * bindings: a heap buffer starts at its array offset, a direct buffer at its address (its
 * position is ignored).
 *
 * <p>A region is what goes on the wire: {@code count} instances of the type back to back
 * ({@code count * size} bytes). Predefined types and dense derived types are a view of the user's
 * memory (zero copy); other derived types are packed by the datatype engine into a staging array
 * when the region is made ({@link #SEND}, {@link #INOUT}) and unpacked from it when the receive
 * completes ({@link Region#finishReceive(long)}).
 */
final class Buffers {
    private Buffers() {}

    /** Region roles: data is read from the user buffer, written into it, or both. */
    static final int SEND = 0, RECV = 1, INOUT = 2;
    /**
     * Roles of a point-to-point send or receive, which may {@linkplain Region#streamed stream}: a
     * large non-dense derived type is then packed (unpacked) by the engine a fragment at a time,
     * with no staging copy of the whole message.
     */
    static final int STREAM_SEND = 3, STREAM_RECV = 4;
    /** Smallest packed message that streams (smaller ones go eager: one staging copy is cheaper). */
    static final long STREAM_MIN_BYTES = 64 * 1024;

    /**
     * A memory region; for {@code boolean[]} the bytes live in a staging array that
     * {@link #finishReceive()} copies back; for a non-dense derived type, {@code seg} is the packed
     * staging array of a {@link Convertor}.
     */
    static final class Region {
        final MemorySegment seg;
        final long off;
        final long bytes;
        final boolean[] bools;
        private final int boolStart;
        /** Byte copy of {@code bools[boolStart ..]} (the whole staged range). */
        private MemorySegment boolStage;
        // packed staging of a derived type: the user object (array, buffer or boolean stage) and offset
        private Datatype type;
        private Object user;
        private long userOff;
        private int count;
        private String op;
        /** Whether the engine packs / unpacks this region a fragment at a time ({@link #payload}); no staging. */
        boolean streamed;

        /** {@link #slice()}, made on first use. */
        private MemorySegment slice;

        /**
         * The region's bytes as one segment ({@code seg} itself when the region is all of it),
         * made once: a cached region serves call after call, and a collective on part of a large
         * buffer then allocates no slice per call. A racing first use makes two equal slices.
         */
        MemorySegment slice() {
            MemorySegment s = slice;
            if (s == null) slice = s = off == 0 && bytes == seg.byteSize() ? seg : seg.asSlice(off, bytes);
            return s;
        }

        /** The region's bytes for a collective: {@link #slice}, or a shared empty segment when it has none. */
        MemorySegment segment() {
            return bytes == 0 ? NO_BYTES : slice();
        }

        Region(MemorySegment seg, long off, long bytes, boolean[] bools, int boolStart) {
            this.seg = seg;
            this.off = off;
            this.bytes = bytes;
            this.bools = bools;
            this.boolStart = boolStart;
            this.boolStage = bools == null ? null : seg;
        }

        /**
         * A fresh stream over the user's data for one send or receive of a {@link #streamed}
         * region: packs (or unpacks) the message in order, a segment at a time, as the engine
         * sends (or receives) its fragments.
         */
        org.ftmpi.p2p.PackedPayload payload(boolean receive) {
            Convertor c = receive ? Convertor.forUnpack(type.ddt, count, user, userOff)
                    : Convertor.forPack(type.ddt, count, user, userOff);
            return new org.ftmpi.p2p.PackedPayload() {
                @Override public void pack(MemorySegment dst, long offset, long n) {
                    c.packNext(dst, offset, n);
                }

                @Override public void unpack(MemorySegment src, long offset, long n) {
                    c.unpackNext(src, offset, n);
                }
            };
        }

        /** Packs the user's data into the staging array again (each start of a persistent send). */
        void refill() throws MPIException {
            if (type == null || streamed) return;
            try {
                Convertor.forPack(type.ddt, count, user, userOff).packNext(seg, 0, bytes);
            } catch (DatatypeException e) {
                throw Datatype.error(e, op);
            }
        }

        /** Completes a receive of all {@link #bytes}. */
        void finishReceive() throws MPIException {
            finishReceive(bytes);
        }

        /**
         * Completes a receive of {@code received} bytes: unpacks them into the user's buffer
         * (derived types) and copies staged booleans back.
         */
        void finishReceive(long received) throws MPIException {
            if (type != null && received > 0 && !streamed) {
                try {
                    Convertor.forUnpack(type.ddt, count, user, userOff).unpackNext(seg, 0, Math.min(received, bytes));
                } catch (DatatypeException e) {
                    throw Datatype.error(e, op);
                }
            }
            if (bools == null) return;
            long n = type == null ? Math.min(received, bytes) : boolStage.byteSize();
            for (long i = 0; i < n; i++) {
                bools[boolStart + (int) i] = boolStage.get(ValueLayout.JAVA_BYTE, i) != 0;
            }
        }
    }

    static final Region EMPTY = new Region(MemorySegment.NULL, 0, 0, null, 0);

    /** The bytes of every empty collective buffer ({@link Region#segment}): shared, it holds nothing. */
    static final MemorySegment NO_BYTES = MemorySegment.ofArray(new byte[0]);

    static Region region(Object buf, int count, Datatype type, String op, boolean receive)
            throws MPIException {
        return region(buf, 0, count, type, op, receive ? RECV : SEND);
    }

    static Region region(Object buf, int count, Datatype type, String op, int mode) throws MPIException {
        return region(buf, 0, count, type, op, mode);
    }

    /**
     * @param elementOffset offset into an array buffer, in base elements of the array
     */
    static Region region(Object buf, int elementOffset, int count, Datatype type, String op, int mode)
            throws MPIException {
        if (type == null) throw MPIException.of(MPI.ERR_TYPE, op + ": datatype is null");
        type.checkComm(op);
        if (count < 0) {
            throw MPIException.of(MPI.ERR_COUNT, op + ": count is negative (" + count + ")");
        }
        if (type.derived || type.pairKind != 0) return derived(buf, elementOffset, count, type, op, mode);
        if (mode == STREAM_SEND) mode = SEND;
        if (mode == STREAM_RECV) mode = RECV;
        long bytes = (long) count * type.sizeBytes;
        if (buf == null) {
            if (count == 0) return EMPTY;
            throw MPIException.of(MPI.ERR_BUFFER, op + ": buf is null but count is " + count);
        }
        if (buf instanceof Buffer b) {
            Region cached = cachedRegion(b, -1, bytes);
            return cached != null ? cached : remember(b, bufferRegion(b, bytes, op));
        }
        checkArray(buf, type, op);
        int elem = elementBytes(arrayKind(buf));
        if (!(buf instanceof boolean[])) {
            Region cached = cachedRegion(buf, (long) elementOffset * elem, bytes);
            if (cached != null) return cached;
        }
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
            return new Region(MemorySegment.ofArray(staging), 0, bytes, mode != SEND ? z : null, elementOffset);
        }
        return remember(buf, new Region(arraySegment(buf), start, bytes, null, 0));
    }

    /**
     * Regions of plain buffers (predefined types; not {@code boolean[]}, whose bytes are staged)
     * by the identity of the user's array or buffer: a program that sends from and receives into
     * the same few buffers (a solver's halo buffers, a benchmark loop) gets its region without
     * allocating a segment view, a buffer duplicate and a region per call. A plain region is
     * immutable and a buffer's memory never moves, so an entry stays valid for as long as it is
     * cached; bounds were checked when it was made (an array's length and a buffer's capacity
     * are fixed). Direct-mapped by identity hash; racy by design: entries are immutable records,
     * and a lost update costs one more allocation. It keeps at most {@link #CACHED} user buffers
     * reachable until another buffer takes their slot.
     */
    private static final int CACHED = 16;
    private static final PlainRegion[] REGIONS = new PlainRegion[CACHED];

    private record PlainRegion(Object owner, Region region) {}

    /** The cached region of {@code owner} at byte {@code start} ({@code -1}: a buffer's own start). */
    private static Region cachedRegion(Object owner, long start, long bytes) {
        PlainRegion c = REGIONS[System.identityHashCode(owner) & (CACHED - 1)];
        return c != null && c.owner == owner && c.region.bytes == bytes && (start < 0 || c.region.off == start)
                ? c.region : null;
    }

    private static Region remember(Object owner, Region r) {
        REGIONS[System.identityHashCode(owner) & (CACHED - 1)] = new PlainRegion(owner, r);
        return r;
    }

    /** Forgets every cached region (MPI.Finalize), so that no user buffer stays reachable from here. */
    static void forgetRegions() {
        java.util.Arrays.fill(REGIONS, null);
    }

    /** Region of a direct buffer for the non-blocking calls, which take only direct buffers. */
    static Region direct(Buffer buf, int count, Datatype type, String op, int mode) throws MPIException {
        if (buf != null && !buf.isDirect()) {
            throw MPIException.of(MPI.ERR_BUFFER, op + ": buf must be a direct buffer (see MPI.newByteBuffer"
                    + " and friends); non-blocking operations do not take heap buffers or arrays");
        }
        return region(buf, 0, count, type, op, mode);
    }

    /** A derived type's region: a view of the user's memory if dense, else a packed staging array. */
    private static Region derived(Object buf, int elementOffset, int count, Datatype type, String op, int mode)
            throws MPIException {
        long bytes = (long) count * type.sizeBytes;
        boolean stream = (mode == STREAM_SEND || mode == STREAM_RECV) && bytes >= STREAM_MIN_BYTES;
        if (mode == STREAM_SEND) mode = SEND;
        if (mode == STREAM_RECV) mode = RECV;
        if (buf == null) {
            if (bytes == 0) return EMPTY;
            throw MPIException.of(MPI.ERR_BUFFER, op + ": buf is null but count is " + count);
        }
        Object user = buf;
        long off = elementOffset;
        boolean[] bools = null;
        int boolLo = 0;
        MemorySegment stage = null;
        if (buf instanceof Buffer b) {
            if (!b.isDirect() && b.isReadOnly() && mode != SEND) {
                throw MPIException.of(MPI.ERR_BUFFER, op + ": buf is a read-only heap buffer");
            }
            off = 0;
        } else {
            checkArray(buf, type, op);
            if (elementOffset < 0) throw MPIException.of(MPI.ERR_BUFFER, op + ": offset " + elementOffset + " is negative");
            if (buf instanceof boolean[] z && bytes > 0) {
                // the engine addresses memory; booleans are staged as 0/1 bytes over the touched range
                org.ftmpi.ddt.Datatype t = type.ddt;
                long span = (count - 1L) * t.extent();
                long lo = elementOffset + t.trueLb() + Math.min(0, span);
                long hi = elementOffset + t.trueLb() + t.trueExtent() + Math.max(0, span);
                if (lo < 0 || hi > z.length) {
                    throw MPIException.of(MPI.ERR_BUFFER, op + ": buf (boolean[" + z.length + "]) is too small for count "
                            + count + " of " + type + ": it touches elements [" + lo + ", " + hi + ")");
                }
                byte[] copy = new byte[(int) (hi - lo)];
                for (int i = 0; i < copy.length; i++) copy[i] = (byte) (z[(int) lo + i] ? 1 : 0);
                stage = MemorySegment.ofArray(copy);
                user = copy;
                off = elementOffset - lo;
                bools = mode != SEND ? z : null;
                boolLo = (int) lo;
            }
        }
        if (bytes == 0) return EMPTY;
        try {
            if (type.isDense()) {
                MemorySegment seg = org.ftmpi.ddt.Buffers.segment(user);
                long start = org.ftmpi.ddt.Buffers.byteOffset(user, off) + type.ddt.lb();
                if (start < 0 || start + bytes > seg.byteSize()) {
                    throw MPIException.of(MPI.ERR_BUFFER, op + ": buf (" + seg.byteSize() + " bytes) is too small for count "
                            + count + " of " + type + " (bytes [" + start + ", " + (start + bytes) + ") )");
                }
                Region r = new Region(seg, start, bytes, bools, boolLo);
                r.boolStage = stage;
                return r;
            }
            if (bytes > Integer.MAX_VALUE - 8) {
                throw MPIException.of(MPI.ERR_COUNT, op + ": " + count + " x " + type + " is more than 2 GiB packed");
            }
            MemorySegment packed = stream ? MemorySegment.NULL : MemorySegment.ofArray(new byte[(int) bytes]);
            Region r = new Region(packed, 0, bytes, bools, boolLo);
            r.streamed = stream;
            r.boolStage = stage;
            r.type = type;
            r.user = user;
            r.userOff = off;
            r.count = count;
            r.op = op;
            if (stream) {
                r.payload(mode == RECV); // checks the buffer's bounds now, as the staging pack does
            } else if (mode == SEND || mode == INOUT) {
                r.refill();
            } else {
                Convertor.forUnpack(type.ddt, count, user, off); // checks the receive buffer's bounds now
            }
            return r;
        } catch (DatatypeException e) {
            throw Datatype.error(e, op);
        }
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

    private static void checkArray(Object buf, Datatype type, String op) throws MPIException {
        int kind = arrayKind(buf);
        if (kind == -1) {
            throw MPIException.of(MPI.ERR_BUFFER, op + ": buf must be a Java primitive array or an NIO buffer, not "
                    + buf.getClass().getName());
        }
        if (!compatible(kind, type)) {
            throw MPIException.of(MPI.ERR_TYPE, op + ": datatype " + type + " does not match buf of type "
                    + buf.getClass().getSimpleName());
        }
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

    /** Arrays of the base type; byte[] for PACKED; int[] also for INT2 (pairs of ints). */
    private static boolean compatible(int arrayKind, Datatype type) {
        if (arrayKind == type.kind) return true;
        if (type.pairKind == Datatype.K_INT && type.sizeBytes == 8) return arrayKind == Datatype.K_INT;
        return arrayKind == Datatype.K_BYTE && type.kind == Datatype.K_PACKED;
    }
}
