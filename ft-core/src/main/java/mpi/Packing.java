package mpi;

import java.lang.foreign.MemorySegment;
import java.nio.Buffer;
import org.ftmpi.ddt.Convertor;
import org.ftmpi.ddt.DatatypeException;
import org.ftmpi.ddt.PackOptions;

/**
 * MPI_PACK / MPI_UNPACK and their external32 forms: the datatype engine's {@link Convertor}
 * writes straight from the user's buffer into the pack buffer at {@code position} (and back),
 * in native representation or big-endian external32. {@code boolean[]} buffers (no memory view)
 * are staged through {@link Buffers}; their one-byte elements read the same in both representations.
 */
final class Packing {
    private Packing() {}

    /** The representation named by {@code datarep}: only "external32" is defined by MPI for these calls. */
    static PackOptions datarep(String datarep, String op) throws MPIException {
        if ("external32".equals(datarep)) return PackOptions.EXTERNAL32;
        throw MPIException.of(MPI.ERR_ARG, op + ": datarep \"" + datarep + "\" is not supported (only \"external32\")");
    }

    /** Bytes {@code count} instances of {@code type} take packed. */
    static int size(int count, Datatype type, String op) throws MPIException {
        if (type == null) throw MPIException.of(MPI.ERR_TYPE, op + ": datatype is null");
        type.checkComm(op);
        if (count < 0) throw MPIException.of(MPI.ERR_COUNT, op + ": incount is negative (" + count + ")");
        long n = (long) count * type.sizeBytes;
        if (n > Integer.MAX_VALUE) throw MPIException.of(MPI.ERR_COUNT, op + ": " + count + " x " + type + " is more than 2^31-1 bytes");
        return (int) n;
    }

    /** Packs {@code count} instances of {@code inbuf} into {@code outbuf} at {@code position}; returns the new position. */
    static int pack(Object inbuf, int count, Datatype type, PackOptions opts, byte[] outbuf, int position, String op)
            throws MPIException {
        int n = room(outbuf, "outbuf", position, size(count, type, op), op);
        if (n == 0) return position;
        if (staged(inbuf, type, op)) {
            Buffers.Region g = Buffers.region(inbuf, count, type, op, Buffers.SEND);
            MemorySegment.copy(g.seg, g.off, MemorySegment.ofArray(outbuf), position, g.bytes);
            return position + n;
        }
        try {
            Convertor.forPack(type.ddt, count, inbuf, 0, opts).packNext(outbuf, position, n);
        } catch (DatatypeException e) {
            throw Datatype.error(e, op);
        }
        return position + n;
    }

    /** Unpacks {@code count} instances from {@code inbuf} at {@code position} into {@code outbuf}; returns the new position. */
    static int unpack(byte[] inbuf, int position, Object outbuf, int count, Datatype type, PackOptions opts, String op)
            throws MPIException {
        int n = room(inbuf, "inbuf", position, size(count, type, op), op);
        if (n == 0) return position;
        if (staged(outbuf, type, op)) {
            Buffers.Region g = Buffers.region(outbuf, count, type, op, Buffers.RECV);
            MemorySegment.copy(MemorySegment.ofArray(inbuf), position, g.seg, g.off, g.bytes);
            g.finishReceive();
            return position + n;
        }
        if (outbuf instanceof Buffer b && !b.isDirect() && b.isReadOnly()) {
            throw MPIException.of(MPI.ERR_BUFFER, op + ": outbuf is a read-only heap buffer");
        }
        try {
            Convertor.forUnpack(type.ddt, count, outbuf, 0, opts).unpackNext(inbuf, position, n);
        } catch (DatatypeException e) {
            throw Datatype.error(e, op);
        }
        return position + n;
    }

    /** Checks that {@code n} packed bytes fit in {@code b} at {@code position}; returns {@code n}. */
    private static int room(byte[] b, String name, int position, int n, String op) throws MPIException {
        if (b == null) throw MPIException.of(MPI.ERR_BUFFER, op + ": " + name + " is null");
        if (position < 0 || (long) position + n > b.length) {
            throw MPIException.of(MPI.ERR_TRUNCATE, op + ": " + name + " (byte[" + b.length + "]) has no room for "
                    + n + " bytes at position " + position);
        }
        return n;
    }

    /**
     * Whether a buffer goes through {@link Buffers} (its checks and boolean staging) rather than
     * straight to the engine: booleans, and every array, so that array/type mismatches are
     * reported as the other calls report them.
     */
    private static boolean staged(Object buf, Datatype type, String op) throws MPIException {
        if (buf == null || buf instanceof boolean[]) return true;
        if (!(buf instanceof Buffer)) Buffers.region(buf, 0, type, op, Buffers.SEND); // type/array check only
        return false;
    }
}
