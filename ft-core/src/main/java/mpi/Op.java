package mpi;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import org.ftmpi.coll.Reducer;
import org.ftmpi.p2p.P2pException;

/**
 * A reduction operation (MPI_Op): the predefined {@code MPI.MAX ... MPI.NO_OP} or a user
 * function. Source compatible with Open MPI's Java bindings.
 *
 * <p>Which predefined operation applies to which predefined type follows the MPI standard:
 * MAX/MIN to integers ({@code BYTE, CHAR, SHORT, INT, LONG}) and floating point; SUM/PROD also
 * to complex; LAND/LOR/LXOR to integers and {@code BOOLEAN}; BAND/BOR/BXOR to integers and
 * {@code BYTE}. {@code CHAR} is Java's unsigned 16-bit char. REPLACE and NO_OP are for
 * one-sided accumulate operations only; collectives reject them. Other combinations raise
 * {@link MPI#ERR_OP}.
 */
public final class Op implements Freeable {
    static final int MAX = 1, MIN = 2, SUM = 3, PROD = 4, LAND = 5, BAND = 6, LOR = 7, BOR = 8, LXOR = 9,
            BXOR = 10, REPLACE = 11, NO_OP = 12, MINLOC = 13, MAXLOC = 14;

    private final int code;
    private final String name;
    private UserFunction function;
    private final boolean commute;

    Op(int code, String name) {
        this.code = code;
        this.name = name;
        this.commute = true;
    }

    /**
     * A user-defined operation (MPI_OP_CREATE).
     *
     * @param function the function; must be associative
     * @param commute  whether it is commutative (if not, operands combine in rank order)
     */
    public Op(UserFunction function, boolean commute) throws MPIException {
        if (function == null) throw MPIException.of(MPI.ERR_ARG, "Op: function is null");
        this.code = 0;
        this.name = "user op " + function.getClass().getName();
        this.function = function;
        this.commute = commute;
    }

    /** MPI_OP_COMMUTATIVE. */
    public boolean isCommute() throws MPIException {
        return commute;
    }

    /** MPI_OP_FREE: user operations only; the handle becomes null. */
    @Override
    public void free() throws MPIException {
        if (code != 0) throw MPIException.of(MPI.ERR_OP, "free: cannot free the predefined operation " + name);
        if (function == null) throw MPIException.of(MPI.ERR_OP, "free: the operation has already been freed");
        function = null;
        last = null;
    }

    /** Whether this handle is null (a freed user operation). */
    public boolean isNull() {
        return code == 0 && function == null;
    }

    @Override
    public String toString() {
        return name;
    }

    // ------------------------------------------------------------------ reducers

    /** The last reducer {@link #reducer} made, and its datatype: a loop of equal reductions binds once. */
    private record Bound1(Datatype type, Reducer reducer) {}

    private volatile Bound1 last;

    /** Binds this operation to a datatype for a collective, checking that it applies. */
    Reducer reducer(Datatype type, String op) throws MPIException {
        Bound1 b = last;
        if (b != null && b.type == type && (code != 0 || function != null)) return b.reducer;
        Reducer r = bind(type, op);
        last = new Bound1(type, r);
        return r;
    }

    private Reducer bind(Datatype type, String op) throws MPIException {
        if (code == 0) {
            if (function == null) throw MPIException.of(MPI.ERR_OP, op + ": op has been freed");
            UserFunction f = function;
            return new Bound(type, commute) {
                @Override
                void run(MemorySegment in, MemorySegment inout, int count) throws MPIException {
                    callUser(f, in, inout, count, type);
                }
            };
        }
        if (code == REPLACE || code == NO_OP) {
            throw MPIException.of(MPI.ERR_OP, op + ": op " + name + " is only for one-sided accumulate operations");
        }
        if (code == MINLOC || code == MAXLOC || type.pairKind != 0) return locReducer(type, op);
        boolean complex = type.complex;
        if (!applies(code, type.kind) || (complex && code != SUM && code != PROD)) {
            throw MPIException.of(MPI.ERR_OP, op + ": op " + name + " is not defined for datatype " + type);
        }
        if (!type.isHomogeneous()) {
            throw MPIException.of(MPI.ERR_OP, op + ": op " + name + " is not defined for datatype " + type
                    + ": it mixes basic types (predefined operations apply to derived types of one basic type)");
        }
        int kind = type.kind;
        int c = code;
        // a derived type's packed instance is sizeBytes / baseBytes base elements (pairs of them if complex)
        int per = type.sizeBytes / type.baseBytes / (complex ? 2 : 1);
        return new Bound(type, true) {
            @Override
            void run(MemorySegment in, MemorySegment inout, int count) {
                if (complex) complex(c, kind, in, inout, count * per);
                else ReduceKernels.apply(c, kind, in, inout, count * per);
            }

            @Override
            void runScratch(MemorySegment in, MemorySegment inout, int count) {
                if (complex) complex(c, kind, in, inout, count * per);
                else ReduceKernels.applyScratch(c, kind, in, inout, count * per);
            }
        };
    }

    /** MINLOC/MAXLOC on a pair type: packed pairs of (value, int index), the value first. */
    private Reducer locReducer(Datatype type, String op) throws MPIException {
        if ((code != MINLOC && code != MAXLOC) || type.pairKind == 0) {
            throw MPIException.of(MPI.ERR_OP, op + ": op " + name + " is not defined for datatype " + type
                    + (type.pairKind == 0 ? " (MINLOC/MAXLOC take MPI.INT2, SHORT_INT, LONG_INT, FLOAT_INT or DOUBLE_INT)"
                                          : " (pair types take only MINLOC and MAXLOC)"));
        }
        int kind = type.pairKind;
        long vs = type.sizeBytes - 4;
        long stride = type.sizeBytes;
        boolean min = code == MINLOC;
        return new Bound(type, true) {
            @Override
            void run(MemorySegment in, MemorySegment io, int count) {
                for (int i = 0; i < count; i++) {
                    long at = i * stride;
                    int c = compare(kind, in, io, at);
                    int ia = in.get(JAVA_INT_UNALIGNED, at + vs), ib = io.get(JAVA_INT_UNALIGNED, at + vs);
                    if (min ? c < 0 : c > 0) {
                        MemorySegment.copy(in, at, io, at, stride);
                    } else if (c == 0 && ia < ib) {
                        io.set(JAVA_INT_UNALIGNED, at + vs, ia);
                    }
                }
            }
        };
    }

    /** Compares the values of pair {@code at} in {@code a} and {@code b}. */
    private static int compare(int kind, MemorySegment a, MemorySegment b, long at) {
        return switch (kind) {
            case Datatype.K_FLOAT -> Float.compare(a.get(JAVA_FLOAT_UNALIGNED, at), b.get(JAVA_FLOAT_UNALIGNED, at));
            case Datatype.K_DOUBLE -> Double.compare(a.get(JAVA_DOUBLE_UNALIGNED, at), b.get(JAVA_DOUBLE_UNALIGNED, at));
            case Datatype.K_SHORT -> Short.compare(a.get(JAVA_SHORT_UNALIGNED, at), b.get(JAVA_SHORT_UNALIGNED, at));
            case Datatype.K_LONG -> Long.compare(a.get(JAVA_LONG_UNALIGNED, at), b.get(JAVA_LONG_UNALIGNED, at));
            default -> Integer.compare(a.get(JAVA_INT_UNALIGNED, at), b.get(JAVA_INT_UNALIGNED, at));
        };
    }

    /** MPI_REDUCE_LOCAL on regions: {@code inout = in op inout}. */
    void reduceLocal(Datatype type, MemorySegment in, MemorySegment inout, int count, String op)
            throws MPIException {
        Bound b = (Bound) reducer(type, op);
        b.run(in, inout, count);
    }

    /** A reducer for the collective SPI; a user function's MPIException travels in the cause. */
    private abstract static class Bound implements Reducer {
        private final long elementBytes;
        private final boolean commutative;

        Bound(Datatype type, boolean commutative) {
            this.elementBytes = type.sizeBytes;
            this.commutative = commutative;
        }

        abstract void run(MemorySegment in, MemorySegment inout, int count) throws MPIException;

        /** {@link #run} on two scratch regions ({@link Reducer#applyScratch}). */
        void runScratch(MemorySegment in, MemorySegment inout, int count) throws MPIException {
            run(in, inout, count);
        }

        @Override
        public long elementBytes() {
            return elementBytes;
        }

        @Override
        public boolean commutative() {
            return commutative;
        }

        @Override
        public void apply(MemorySegment in, MemorySegment inout, int count) throws P2pException {
            try {
                run(in, inout, count);
            } catch (MPIException e) {
                throw carried(e);
            }
        }

        @Override
        public void applyScratch(MemorySegment in, MemorySegment inout, int count) throws P2pException {
            try {
                runScratch(in, inout, count);
            } catch (MPIException e) {
                throw carried(e);
            }
        }

        /** A user function's error as the collectives' exception, the original as its cause. */
        private static P2pException carried(MPIException e) {
            P2pException p = new P2pException(e.getErrorClass(), e.getMessage());
            p.initCause(e);
            return p;
        }
    }

    /**
     * Runs a user function on copies of the operands in direct buffers ({@code in} and {@code
     * inout}, native byte order, capacity = the operands' bytes), then copies {@code inout} back.
     * The buffers are this thread's and reused from call to call ({@link UserStage}): a new pair
     * of direct buffers per call (as until session 30) cost an {@code allocateDirect} each time,
     * or at 1 MiB and more a fresh huge-page mapping the kernel zeroes: an np 2 {@code allReduce}
     * of 131 072 doubles with a user sum took 15.9 ms per call. A reduction inside the user
     * function itself (the pair is in use) gets a pair of its own.
     */
    private static void callUser(UserFunction f, MemorySegment in, MemorySegment inout, int count, Datatype type)
            throws MPIException {
        long bytes = (long) count * type.sizeBytes;
        UserStage stage = USER_STAGE.get();
        boolean own = !stage.busy;
        ByteBuffer a, b;
        if (own) {
            stage.reserve((int) bytes);
            a = stage.a.slice(0, (int) bytes).order(java.nio.ByteOrder.nativeOrder());
            b = stage.b.slice(0, (int) bytes).order(java.nio.ByteOrder.nativeOrder());
            stage.busy = true;
        } else {
            a = MPI.newByteBuffer((int) bytes);
            b = MPI.newByteBuffer((int) bytes);
        }
        try {
            MemorySegment sa = MemorySegment.ofBuffer(a), sb = MemorySegment.ofBuffer(b);
            MemorySegment.copy(in, 0, sa, 0, bytes);
            MemorySegment.copy(inout, 0, sb, 0, bytes);
            f.call(a, b, count, type);
            MemorySegment.copy(sb, 0, inout, 0, bytes);
        } finally {
            if (own) stage.busy = false;
        }
    }

    private static final ThreadLocal<UserStage> USER_STAGE = ThreadLocal.withInitial(UserStage::new);

    /** A thread's pair of direct buffers for user functions' operands; grows to the largest reduction. */
    private static final class UserStage {
        ByteBuffer a, b;
        /** A user function of this thread is running on {@link #a} and {@link #b}. */
        boolean busy;

        void reserve(int bytes) {
            if (a != null && a.capacity() >= bytes) return;
            int capacity = Math.max(bytes, 4096);
            a = MPI.newByteBuffer(capacity);
            b = MPI.newByteBuffer(capacity);
        }
    }

    private static boolean integer(int kind) {
        return kind == Datatype.K_BYTE || kind == Datatype.K_CHAR || kind == Datatype.K_SHORT
                || kind == Datatype.K_INT || kind == Datatype.K_LONG;
    }

    private static boolean floating(int kind) {
        return kind == Datatype.K_FLOAT || kind == Datatype.K_DOUBLE;
    }

    static boolean applies(int code, int kind) {
        return switch (code) {
            case MAX, MIN -> integer(kind) || floating(kind);
            case SUM, PROD -> integer(kind) || floating(kind);
            case LAND, LOR, LXOR -> integer(kind) || kind == Datatype.K_BOOLEAN;
            case BAND, BOR, BXOR -> integer(kind);
            default -> false;
        };
    }

    private static void complex(int code, int kind, MemorySegment in, MemorySegment io, int count) {
        boolean f = kind == Datatype.K_FLOAT;
        for (int i = 0; i < count; i++) {
            long re = 2L * i, im = re + 1;
            double ar = f ? in.getAtIndex(JAVA_FLOAT_UNALIGNED, re) : in.getAtIndex(JAVA_DOUBLE_UNALIGNED, re);
            double ai = f ? in.getAtIndex(JAVA_FLOAT_UNALIGNED, im) : in.getAtIndex(JAVA_DOUBLE_UNALIGNED, im);
            double br = f ? io.getAtIndex(JAVA_FLOAT_UNALIGNED, re) : io.getAtIndex(JAVA_DOUBLE_UNALIGNED, re);
            double bi = f ? io.getAtIndex(JAVA_FLOAT_UNALIGNED, im) : io.getAtIndex(JAVA_DOUBLE_UNALIGNED, im);
            double rr, ri;
            if (code == SUM) {
                rr = ar + br;
                ri = ai + bi;
            } else {
                rr = ar * br - ai * bi;
                ri = ar * bi + ai * br;
            }
            if (f) {
                io.setAtIndex(JAVA_FLOAT_UNALIGNED, re, (float) rr);
                io.setAtIndex(JAVA_FLOAT_UNALIGNED, im, (float) ri);
            } else {
                io.setAtIndex(JAVA_DOUBLE_UNALIGNED, re, rr);
                io.setAtIndex(JAVA_DOUBLE_UNALIGNED, im, ri);
            }
        }
    }
}
