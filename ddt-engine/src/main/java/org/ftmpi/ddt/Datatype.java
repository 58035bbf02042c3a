package org.ftmpi.ddt;

import java.util.Arrays;
import java.util.List;

/**
 * An MPI datatype: a type map {(basic type, byte displacement)} with lower bound and extent.
 *
 * <p><b>Units.</b> The engine works in bytes. Following the MPI standard and Open MPI's Java
 * bindings, {@link #vector}, {@link #indexed} and {@link #indexedBlock} take strides and
 * displacements in multiples of the old type's extent (for a basic old type these are
 * <em>elements</em>, e.g. doubles of a {@code double[]}); {@link #hvector}, {@link #hindexed},
 * {@link #hindexedBlock}, {@link #struct} and {@link #resized} take bytes, exactly as Open MPI's
 * {@code createHVector}/{@code createHIndexed}/{@code createStruct}/{@code createResized}.
 * {@link #baseType()} is the element type in which Open MPI's Java getters report lb/extent/size
 * (they divide the byte values by {@link #baseSize()}); a struct's base type is {@code BYTE}.
 *
 * <p><b>Lifecycle.</b> Constructors build an uncommitted type; {@link #commit()} compacts it into
 * flat programs (see {@link Program}). Only committed types can be packed. Predefined types are
 * committed. Instances are immutable apart from the one-time commit; <b>Note:</b> thread-safe.
 */
public final class Datatype {
    /** How a type was built (MPI combiner). */
    public enum Combiner {
        NAMED, DUP, CONTIGUOUS, VECTOR, HVECTOR, INDEXED, HINDEXED, INDEXED_BLOCK, HINDEXED_BLOCK, STRUCT,
        SUBARRAY, DARRAY, RESIZED
    }

    /** Array storage order of {@link #subarray} and {@link #darray}. */
    public enum Order { C, FORTRAN }

    /** Per-dimension distribution of {@link #darray}. */
    public enum Distribution { BLOCK, CYCLIC, NONE }

    /** {@code MPI_DISTRIBUTE_DFLT_DARG}. */
    public static final int DFLT_DARG = -1;

    public static final Datatype BYTE = basic(BasicType.BYTE, "MPI_BYTE");
    public static final Datatype CHAR = basic(BasicType.CHAR, "MPI_CHAR");
    public static final Datatype SHORT = basic(BasicType.SHORT, "MPI_SHORT");
    public static final Datatype BOOLEAN = basic(BasicType.BOOLEAN, "MPI_BOOLEAN");
    public static final Datatype INT = basic(BasicType.INT, "MPI_INT");
    public static final Datatype LONG = basic(BasicType.LONG, "MPI_LONG");
    public static final Datatype FLOAT = basic(BasicType.FLOAT, "MPI_FLOAT");
    public static final Datatype DOUBLE = basic(BasicType.DOUBLE, "MPI_DOUBLE");
    public static final Datatype PACKED = basic(BasicType.PACKED, "MPI_PACKED");
    /** C layouts of the pair types, as Open MPI's Java bindings use them (fields aligned, extent padded). */
    public static final Datatype INT2 = pair("MPI_INT2", BasicType.INT, BasicType.INT, BasicType.INT);
    public static final Datatype SHORT_INT = pair("MPI_SHORT_INT", BasicType.SHORT, BasicType.INT, BasicType.INT);
    public static final Datatype LONG_INT = pair("MPI_LONG_INT", BasicType.LONG, BasicType.INT, BasicType.LONG);
    public static final Datatype FLOAT_INT = pair("MPI_FLOAT_INT", BasicType.FLOAT, BasicType.INT, BasicType.FLOAT);
    public static final Datatype DOUBLE_INT = pair("MPI_DOUBLE_INT", BasicType.DOUBLE, BasicType.INT, BasicType.DOUBLE);

    private final Combiner combiner;
    private final String name;
    private final BasicType basic;     // NAMED basic types only
    private final Datatype impl;       // equivalent constructed type (pairs, subarray, darray)
    private final int[] ints;          // constructor integer arguments (MPI_Type_get_contents order)
    private final long[] addrs;        // constructor byte arguments
    private final Datatype[] types;    // constructor datatype arguments
    private final BasicType baseType;
    final long lb, ub, trueLb, trueUb, size;
    final int align;
    private final boolean explicitBounds;
    private volatile Layout layout;

    /** Committed form: flat programs and derived facts. Built once by {@link #commit()}. */
    static final class Layout {
        final Program bytes;
        final Program typed;
        final TypeSignature signature;
        final long alignedInstanceSize;
        final int maxAlign;
        volatile long firstOverlapShift = -1; // lazily computed, see checkReceive

        Layout(Program bytes, Program typed, TypeSignature signature, long alignedInstanceSize, int maxAlign) {
            this.bytes = bytes;
            this.typed = typed;
            this.signature = signature;
            this.alignedInstanceSize = alignedInstanceSize;
            this.maxAlign = maxAlign;
        }
    }

    private Datatype(Combiner combiner, String name, BasicType basic, Datatype impl, int[] ints, long[] addrs,
                     Datatype[] types, BasicType baseType, long lb, long ub, long trueLb, long trueUb, long size,
                     int align, boolean explicitBounds) {
        this.combiner = combiner;
        this.name = name;
        this.basic = basic;
        this.impl = impl;
        this.ints = ints;
        this.addrs = addrs;
        this.types = types;
        this.baseType = baseType;
        this.lb = lb;
        this.ub = ub;
        this.trueLb = trueLb;
        this.trueUb = trueUb;
        this.size = size;
        this.align = align;
        this.explicitBounds = explicitBounds;
        this.blockDisp = null;
        this.blockLens = null;
    }

    /** Copy of {@code d} carrying the block table of an indexed-family or struct type. */
    private Datatype(Datatype d, long[] blockDisp, int[] blockLens) {
        this.combiner = d.combiner;
        this.name = d.name;
        this.basic = d.basic;
        this.impl = d.impl;
        this.ints = d.ints;
        this.addrs = d.addrs;
        this.types = d.types;
        this.baseType = d.baseType;
        this.lb = d.lb;
        this.ub = d.ub;
        this.trueLb = d.trueLb;
        this.trueUb = d.trueUb;
        this.size = d.size;
        this.align = d.align;
        this.explicitBounds = d.explicitBounds;
        this.blockDisp = blockDisp;
        this.blockLens = blockLens;
    }

    private static Datatype basic(BasicType t, String name) {
        Datatype d = new Datatype(Combiner.NAMED, name, t, null, new int[0], new long[0], new Datatype[0], t,
                0, t.size(), 0, t.size(), t.size(), t.alignment(), false);
        d.commit();
        return d;
    }

    private static Datatype pair(String name, BasicType a, BasicType b, BasicType base) {
        long off = Math.max(a.size(), b.alignment());
        Datatype s = struct(new int[] {1, 1}, new long[] {0, off},
                new Datatype[] {basic(a, "tmp"), basic(b, "tmp")});
        Datatype d = new Datatype(Combiner.NAMED, name, null, s, new int[0], new long[0], new Datatype[0], base,
                s.lb, s.ub, s.trueLb, s.trueUb, s.size, s.align, false);
        d.commit();
        return d;
    }

    // ------------------------------------------------------------------ bounds helper

    /** Accumulates bounds of blocks of a child type placed at byte displacements. */
    private static final class Bounds {
        long lb = Long.MAX_VALUE, ub = Long.MIN_VALUE, tlb = Long.MAX_VALUE, tub = Long.MIN_VALUE, size;
        int align = 1;
        boolean explicit;

        void block(Datatype t, long disp, long blocklen) {
            explicit |= t.explicitBounds;
            align = Math.max(align, t.align);
            if (blocklen == 0) {
                return;
            }
            long ext = t.ub - t.lb;
            long span = Math.multiplyExact(blocklen - 1, ext);
            lb = Math.min(lb, disp + t.lb + Math.min(0, span));
            ub = Math.max(ub, disp + t.ub + Math.max(0, span));
            if (t.size > 0) {
                tlb = Math.min(tlb, disp + t.trueLb + Math.min(0, span));
                tub = Math.max(tub, disp + t.trueUb + Math.max(0, span));
            }
            size = Math.addExact(size, Math.multiplyExact(blocklen, t.size));
        }

        Datatype make(Combiner c, int[] ints, long[] addrs, Datatype[] types, BasicType base, boolean epsilon) {
            if (lb == Long.MAX_VALUE) {
                lb = ub = 0;
            }
            if (tlb == Long.MAX_VALUE) {
                tlb = tub = 0;
            }
            if (epsilon && !explicit) {
                long ext = ub - lb;
                long pad = Math.floorMod(-ext, (long) align);
                ub += pad;
            }
            return new Datatype(c, null, null, null, ints, addrs, types, base, lb, ub, tlb, tub, size, align, explicit);
        }
    }

    private static void requireType(Datatype t, String arg) {
        if (t == null) {
            throw new DatatypeException(DatatypeException.Kind.TYPE, arg + " must not be null");
        }
    }

    private static void nonNeg(long v, String arg) {
        if (v < 0) {
            throw DatatypeException.count(arg + " must be >= 0, was " + v);
        }
    }

    // ------------------------------------------------------------------ constructors

    /** {@code MPI_Type_contiguous}: {@code count} copies of {@code old}, extent apart. */
    public static Datatype contiguous(int count, Datatype old) {
        nonNeg(count, "count");
        requireType(old, "oldType");
        Bounds b = new Bounds();
        b.block(old, 0, count);
        return b.make(Combiner.CONTIGUOUS, new int[] {count}, new long[0], new Datatype[] {old}, old.baseType, false);
    }

    /** {@code MPI_Type_vector}: stride in multiples of {@code old}'s extent (elements for a basic type). */
    public static Datatype vector(int count, int blockLength, int stride, Datatype old) {
        requireType(old, "oldType");
        return vectorImpl(Combiner.VECTOR, count, blockLength, stride * (old.ub - old.lb), old,
                new int[] {count, blockLength, stride}, new long[0]);
    }

    /** {@code MPI_Type_create_hvector}: stride in bytes. */
    public static Datatype hvector(int count, int blockLength, long strideBytes, Datatype old) {
        requireType(old, "oldType");
        return vectorImpl(Combiner.HVECTOR, count, blockLength, strideBytes, old,
                new int[] {count, blockLength}, new long[] {strideBytes});
    }

    private static Datatype vectorImpl(Combiner c, int count, int bl, long strideBytes, Datatype old, int[] ints,
                                       long[] addrs) {
        nonNeg(count, "count");
        nonNeg(bl, "blockLength");
        Bounds b = new Bounds();
        if (count > 0) {
            b.block(old, 0, bl);
            b.block(old, Math.multiplyExact(strideBytes, (long) count - 1), bl);
        } else {
            b.explicit |= old.explicitBounds;
        }
        // size counted twice above for count >= 2; recompute exactly.
        Datatype d = b.make(c, ints, addrs, new Datatype[] {old}, old.baseType, false);
        return d.withSize(Math.multiplyExact(Math.multiplyExact((long) count, bl), old.size));
    }

    private Datatype withSize(long s) {
        return new Datatype(combiner, name, basic, impl, ints, addrs, types, baseType, lb, ub,
                s == 0 ? 0 : trueLb, s == 0 ? 0 : trueUb, s, align, explicitBounds);
    }

    /** {@code MPI_Type_indexed}: displacements in multiples of {@code old}'s extent. */
    public static Datatype indexed(int[] blockLengths, int[] displacements, Datatype old) {
        requireType(old, "oldType");
        checkArrays(blockLengths, displacements == null ? -1 : displacements.length, "displacements");
        long ext = old.ub - old.lb;
        long[] d = new long[displacements.length];
        for (int i = 0; i < d.length; i++) {
            d[i] = displacements[i] * ext;
        }
        int[] ints = concat(new int[] {blockLengths.length}, blockLengths, displacements);
        return indexedImpl(Combiner.INDEXED, blockLengths, d, old, ints, new long[0]);
    }

    /** {@code MPI_Type_create_hindexed}: displacements in bytes. */
    public static Datatype hindexed(int[] blockLengths, long[] displacementsBytes, Datatype old) {
        requireType(old, "oldType");
        checkArrays(blockLengths, displacementsBytes == null ? -1 : displacementsBytes.length, "displacements");
        int[] ints = concat(new int[] {blockLengths.length}, blockLengths);
        return indexedImpl(Combiner.HINDEXED, blockLengths, displacementsBytes.clone(), old, ints,
                displacementsBytes.clone());
    }

    /** {@code MPI_Type_create_indexed_block}: displacements in multiples of {@code old}'s extent. */
    public static Datatype indexedBlock(int blockLength, int[] displacements, Datatype old) {
        requireType(old, "oldType");
        if (displacements == null) {
            throw DatatypeException.arg("displacements must not be null");
        }
        nonNeg(blockLength, "blockLength");
        long ext = old.ub - old.lb;
        long[] d = new long[displacements.length];
        int[] bls = new int[displacements.length];
        for (int i = 0; i < d.length; i++) {
            d[i] = displacements[i] * ext;
            bls[i] = blockLength;
        }
        int[] ints = concat(new int[] {displacements.length, blockLength}, displacements);
        return indexedImpl(Combiner.INDEXED_BLOCK, bls, d, old, ints, new long[0]);
    }

    /** {@code MPI_Type_create_hindexed_block}: displacements in bytes. */
    public static Datatype hindexedBlock(int blockLength, long[] displacementsBytes, Datatype old) {
        requireType(old, "oldType");
        if (displacementsBytes == null) {
            throw DatatypeException.arg("displacements must not be null");
        }
        nonNeg(blockLength, "blockLength");
        int[] bls = new int[displacementsBytes.length];
        Arrays.fill(bls, blockLength);
        return indexedImpl(Combiner.HINDEXED_BLOCK, bls, displacementsBytes.clone(), old,
                new int[] {displacementsBytes.length, blockLength}, displacementsBytes.clone());
    }

    private static Datatype indexedImpl(Combiner c, int[] bls, long[] dispBytes, Datatype old, int[] ints,
                                        long[] addrs) {
        Bounds b = new Bounds();
        b.explicit |= old.explicitBounds;
        for (int i = 0; i < bls.length; i++) {
            nonNeg(bls[i], "blockLengths[" + i + "]");
            b.block(old, dispBytes[i], bls[i]);
        }
        Datatype d = b.make(c, ints, addrs, new Datatype[] {old}, old.baseType, false);
        return new Datatype(d, dispBytes, bls.clone());
    }

    /** {@code MPI_Type_create_struct}: displacements in bytes; extent padded to the largest alignment. */
    public static Datatype struct(int[] blockLengths, long[] displacementsBytes, Datatype[] types) {
        checkArrays(blockLengths, displacementsBytes == null ? -1 : displacementsBytes.length, "displacements");
        if (types == null || types.length != blockLengths.length) {
            throw DatatypeException.arg("types must have blockLengths.length (" + blockLengths.length
                    + ") entries, had " + (types == null ? "null" : types.length));
        }
        Bounds b = new Bounds();
        for (int i = 0; i < types.length; i++) {
            requireType(types[i], "types[" + i + "]");
            nonNeg(blockLengths[i], "blockLengths[" + i + "]");
            b.block(types[i], displacementsBytes[i], blockLengths[i]);
        }
        int[] ints = concat(new int[] {blockLengths.length}, blockLengths);
        Datatype d = b.make(Combiner.STRUCT, ints, displacementsBytes.clone(), types.clone(), BasicType.BYTE, true);
        return new Datatype(d, displacementsBytes.clone(), blockLengths.clone());
    }

    /** {@code MPI_Type_create_resized}: new lower bound and extent in bytes. */
    public static Datatype resized(Datatype old, long lbBytes, long extentBytes) {
        requireType(old, "oldType");
        return new Datatype(Combiner.RESIZED, null, null, null, new int[0], new long[] {lbBytes, extentBytes},
                new Datatype[] {old}, old.baseType, lbBytes, lbBytes + extentBytes, old.trueLb, old.trueUb, old.size,
                old.align, true);
    }

    /** {@code MPI_Type_dup}: same type map; committed if {@code old} is. */
    public Datatype dup() {
        Datatype d = new Datatype(Combiner.DUP, name, null, null, new int[0], new long[0], new Datatype[] {this},
                baseType, lb, ub, trueLb, trueUb, size, align, explicitBounds);
        d.layout = layout;
        return d;
    }

    /**
     * {@code MPI_Type_create_subarray}: the sub-block {@code subsizes} at {@code starts} of an
     * array of {@code sizes} elements of {@code old}; lb 0, extent the whole array.
     */
    public static Datatype subarray(int[] sizes, int[] subsizes, int[] starts, Order order, Datatype old) {
        requireType(old, "oldType");
        if (sizes == null || subsizes == null || starts == null || sizes.length == 0
                || subsizes.length != sizes.length || starts.length != sizes.length) {
            throw DatatypeException.arg("sizes, subsizes and starts must be non-empty arrays of equal length");
        }
        if (order == null) {
            throw DatatypeException.arg("order must not be null");
        }
        int n = sizes.length;
        for (int i = 0; i < n; i++) {
            if (sizes[i] <= 0) {
                throw DatatypeException.arg("sizes[" + i + "] must be > 0, was " + sizes[i]);
            }
            if (subsizes[i] <= 0 || subsizes[i] > sizes[i]) {
                throw DatatypeException.arg("subsizes[" + i + "] must be in [1, sizes[" + i + "]], was " + subsizes[i]);
            }
            if (starts[i] < 0 || starts[i] > sizes[i] - subsizes[i]) {
                throw DatatypeException.arg("starts[" + i + "] must be in [0, sizes[i]-subsizes[i]], was " + starts[i]);
            }
        }
        long ext = old.ub - old.lb;
        // dimension index from fastest to slowest varying
        Datatype t = old;
        long stride = ext;
        long disp = 0;
        for (int k = 0; k < n; k++) {
            int i = order == Order.C ? n - 1 - k : k;
            t = k == 0 ? contiguous(subsizes[i], t) : hvector(subsizes[i], 1, stride, t);
            disp += starts[i] * stride;
            stride *= sizes[i];
        }
        Datatype placed = hindexed(new int[] {1}, new long[] {disp}, t);
        Datatype full = resized(placed, 0, stride);
        int[] ints = concat(new int[] {n}, sizes, subsizes, starts, new int[] {order.ordinal()});
        return derived(Combiner.SUBARRAY, full, ints, new Datatype[] {old}, old.baseType);
    }

    /**
     * {@code MPI_Type_create_darray}: the part of a global array of {@code gsizes} owned by
     * {@code rank} in a row-major process grid {@code psizes}, per dimension BLOCK, CYCLIC or NONE
     * with distribution argument {@code dargs} ({@link #DFLT_DARG} for the default); lb 0, extent
     * the whole global array.
     */
    public static Datatype darray(int size, int rank, int[] gsizes, Distribution[] distribs, int[] dargs,
                                  int[] psizes, Order order, Datatype old) {
        requireType(old, "oldType");
        if (gsizes == null || distribs == null || dargs == null || psizes == null || gsizes.length == 0
                || distribs.length != gsizes.length || dargs.length != gsizes.length
                || psizes.length != gsizes.length) {
            throw DatatypeException.arg("gsizes, distribs, dargs and psizes must be non-empty arrays of equal length");
        }
        if (order == null) {
            throw DatatypeException.arg("order must not be null");
        }
        int n = gsizes.length;
        long procs = 1;
        for (int i = 0; i < n; i++) {
            if (gsizes[i] <= 0) {
                throw DatatypeException.arg("gsizes[" + i + "] must be > 0, was " + gsizes[i]);
            }
            if (psizes[i] <= 0) {
                throw DatatypeException.arg("psizes[" + i + "] must be > 0, was " + psizes[i]);
            }
            if (distribs[i] == null) {
                throw DatatypeException.arg("distribs[" + i + "] must not be null");
            }
            if (distribs[i] == Distribution.NONE && psizes[i] != 1) {
                throw DatatypeException.arg("psizes[" + i + "] must be 1 for DISTRIBUTE_NONE, was " + psizes[i]);
            }
            if (dargs[i] != DFLT_DARG && dargs[i] <= 0) {
                throw DatatypeException.arg("dargs[" + i + "] must be > 0 or DFLT_DARG, was " + dargs[i]);
            }
            if (distribs[i] == Distribution.BLOCK && dargs[i] != DFLT_DARG
                    && (long) dargs[i] * psizes[i] < gsizes[i]) {
                throw DatatypeException.arg("dargs[" + i + "] * psizes[" + i + "] must be >= gsizes[" + i + "]");
            }
            procs *= psizes[i];
        }
        if (procs != size) {
            throw DatatypeException.arg("product of psizes (" + procs + ") must equal size (" + size + ")");
        }
        if (rank < 0 || rank >= size) {
            throw DatatypeException.arg("rank must be in [0, size), was " + rank);
        }
        // process coordinates: row-major grid regardless of order
        int[] coords = new int[n];
        int r = rank;
        for (int i = n - 1; i >= 0; i--) {
            coords[i] = r % psizes[i];
            r /= psizes[i];
        }
        long ext = old.ub - old.lb;
        Datatype t = old;
        long stride = ext;
        for (int k = 0; k < n; k++) {
            int i = order == Order.C ? n - 1 - k : k;
            int[][] blocks = darrayBlocks(gsizes[i], distribs[i], dargs[i], psizes[i], coords[i]);
            Datatype child = k == 0 ? t : resized(t, 0, stride);
            long[] disps = new long[blocks[0].length];
            for (int j = 0; j < disps.length; j++) {
                disps[j] = blocks[0][j] * stride;
            }
            t = hindexed(blocks[1], disps, child);
            stride *= gsizes[i];
        }
        Datatype full = resized(t, 0, stride);
        int[] ints = new int[4 + 4 * n];
        ints[0] = size;
        ints[1] = rank;
        ints[2] = n;
        for (int i = 0; i < n; i++) {
            ints[3 + i] = gsizes[i];
            ints[3 + n + i] = distribs[i].ordinal();
            ints[3 + 2 * n + i] = dargs[i];
            ints[3 + 3 * n + i] = psizes[i];
        }
        ints[3 + 4 * n] = order.ordinal();
        return derived(Combiner.DARRAY, full, ints, new Datatype[] {old}, old.baseType);
    }

    /** {starts[], lengths[]} of the index blocks one process owns in one darray dimension. */
    static int[][] darrayBlocks(int gsize, Distribution d, int darg, int psize, int coord) {
        if (d == Distribution.NONE) {
            return new int[][] {{0}, {gsize}};
        }
        if (d == Distribution.BLOCK) {
            int blk = darg == DFLT_DARG ? (gsize + psize - 1) / psize : darg;
            long start = (long) blk * coord;
            int len = (int) Math.max(0, Math.min(blk, gsize - start));
            return len == 0 ? new int[][] {{}, {}} : new int[][] {{(int) start}, {len}};
        }
        int blk = darg == DFLT_DARG ? 1 : darg;
        int cycles = 0;
        for (long s = (long) coord * blk; s < gsize; s += (long) blk * psize) {
            cycles++;
        }
        int[] st = new int[cycles], ln = new int[cycles];
        int j = 0;
        for (long s = (long) coord * blk; s < gsize; s += (long) blk * psize) {
            st[j] = (int) s;
            ln[j++] = (int) Math.min(blk, gsize - s);
        }
        return new int[][] {st, ln};
    }

    private static Datatype derived(Combiner c, Datatype full, int[] ints, Datatype[] types, BasicType base) {
        return new Datatype(c, null, null, full, ints, new long[0], types, base, full.lb, full.ub, full.trueLb,
                full.trueUb, full.size, full.align, full.explicitBounds);
    }

    private static void checkArrays(int[] bls, int dispLen, String dispName) {
        if (bls == null) {
            throw DatatypeException.arg("blockLengths must not be null");
        }
        if (dispLen < 0) {
            throw DatatypeException.arg(dispName + " must not be null");
        }
        if (dispLen != bls.length) {
            throw DatatypeException.arg(dispName + " length (" + dispLen + ") must equal blockLengths length ("
                    + bls.length + ")");
        }
    }

    private static int[] concat(int[]... parts) {
        int n = 0;
        for (int[] p : parts) {
            n += p.length;
        }
        int[] r = new int[n];
        int q = 0;
        for (int[] p : parts) {
            System.arraycopy(p, 0, r, q, p.length);
            q += p.length;
        }
        return r;
    }

    // indexed/struct block tables (bytes); null for other combiners
    private final long[] blockDisp;
    private final int[] blockLens;

    // ------------------------------------------------------------------ commit

    /**
     * {@code MPI_Type_commit}: flattens the type tree into its compacted byte program and typed
     * program. Idempotent.
     */
    public Datatype commit() {
        if (layout == null) {
            synchronized (this) {
                if (layout == null) {
                    layout = buildLayout();
                }
            }
        }
        return this;
    }

    private Layout buildLayout() {
        ProgramBuilder bytes = new ProgramBuilder(false);
        ProgramBuilder typed = new ProgramBuilder(true);
        TypeSignature.Builder sig = new TypeSignature.Builder();
        emit(this, 0, (off, t, n) -> {
            bytes.run(off, t, n);
            typed.run(off, t, n);
            sig.add(t, n);
        });
        Program tp = typed.build();
        int maxAlign = 1;
        long pos = 0;
        for (int j = 0; j < tp.n; j++) {
            int a = tp.type[j].alignment();
            maxAlign = Math.max(maxAlign, a);
            pos = alignUp(pos, a) + tp.len[j] * tp.count[j] * tp.ocount[j];
        }
        return new Layout(bytes.build(), tp, sig.build(), alignUp(pos, maxAlign), maxAlign);
    }

    static long alignUp(long v, long a) {
        return (v + a - 1) / a * a;
    }

    /** Receives the type map as runs of contiguous elements. */
    interface RunSink {
        void run(long offset, BasicType t, long elements);
    }

    /** Walks the type map of {@code t} displaced by {@code disp}, emitting maximal element runs. */
    static void emit(Datatype t, long disp, RunSink sink) {
        switch (t.combiner) {
            case NAMED -> {
                if (t.impl != null) {
                    emit(t.impl, disp, sink);
                } else {
                    sink.run(disp, t.basic, 1);
                }
            }
            case DUP, RESIZED -> emit(t.types[0], disp, sink);
            case SUBARRAY, DARRAY -> emit(t.impl, disp, sink);
            case CONTIGUOUS -> emitBlock(t.types[0], disp, t.ints[0], sink);
            case VECTOR, HVECTOR -> {
                Datatype old = t.types[0];
                long stride = t.combiner == Combiner.VECTOR ? t.ints[2] * (old.ub - old.lb) : t.addrs[0];
                for (long j = 0; j < t.ints[0]; j++) {
                    emitBlock(old, disp + j * stride, t.ints[1], sink);
                }
            }
            case INDEXED, HINDEXED, INDEXED_BLOCK, HINDEXED_BLOCK -> {
                for (int j = 0; j < t.blockLens.length; j++) {
                    emitBlock(t.types[0], disp + t.blockDisp[j], t.blockLens[j], sink);
                }
            }
            case STRUCT -> {
                for (int j = 0; j < t.blockLens.length; j++) {
                    emitBlock(t.types[j], disp + t.blockDisp[j], t.blockLens[j], sink);
                }
            }
        }
    }

    private static void emitBlock(Datatype t, long disp, long n, RunSink sink) {
        Datatype leaf = t;
        while (leaf.combiner == Combiner.DUP) {
            leaf = leaf.types[0];
        }
        if (leaf.combiner == Combiner.NAMED && leaf.impl == null) {
            sink.run(disp, leaf.basic, n);
            return;
        }
        long ext = t.ub - t.lb;
        for (long k = 0; k < n; k++) {
            emit(t, disp + k * ext, sink);
        }
    }

    Layout layout() {
        Layout l = layout;
        if (l == null) {
            throw new DatatypeException(DatatypeException.Kind.TYPE,
                    "datatype " + this + " is not committed (call commit() before use)");
        }
        return l;
    }

    /**
     * Checks that {@code count} instances of this type can be unpacked into: no byte of the user
     * buffer is written twice. The answer per type is computed once and cached.
     */
    void checkReceive(long count) {
        Layout l = layout();
        if (size == 0 || count == 0) {
            return;
        }
        long shift = l.firstOverlapShift;
        if (shift < 0) {
            shift = computeFirstOverlapShift(l.bytes);
            l.firstOverlapShift = shift;
        }
        if (count - 1 >= shift) {
            throw new DatatypeException(DatatypeException.Kind.TYPE, "receive datatype " + this + " with count "
                    + count + " has overlapping entries (" + (shift == 0 ? "within one instance"
                    : "instances " + shift + " apart overlap") + "); it can only be used for sending");
        }
    }

    /**
     * Smallest d >= 0 such that the instance at d * extent overlaps instance 0 (0 = a single
     * instance overlaps itself), or Long.MAX_VALUE.
     */
    private long computeFirstOverlapShift(Program p) {
        long[][] blocks = p.sortedBlocks();
        for (int i = 1; i < blocks.length; i++) {
            if (blocks[i][0] < blocks[i - 1][0] + blocks[i - 1][1]) {
                return 0;
            }
        }
        long ext = Math.abs(ub - lb);
        if (ext == 0) {
            return 1;
        }
        long span = trueUb - trueLb;
        long maxD = span / ext + 1;
        for (long d = 1; d <= maxD; d++) {
            if (overlapsShifted(blocks, d * ext)) {
                return d;
            }
        }
        return Long.MAX_VALUE;
    }

    private static boolean overlapsShifted(long[][] b, long shift) {
        int i = 0, j = 0;
        while (i < b.length && j < b.length) {
            long a0 = b[i][0], a1 = a0 + b[i][1];
            long c0 = b[j][0] + shift, c1 = c0 + b[j][1];
            if (a0 < c1 && c0 < a1) {
                return true;
            }
            if (a1 <= c1) {
                i++;
            } else {
                j++;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ queries

    /** Packed size of {@code count} instances with native encoding and no padding ({@code MPI_Pack_size}). */
    public long packSize(long count) {
        return packSize(count, PackOptions.NATIVE);
    }

    /** Exact packed size of {@code count} instances in the given padding mode and encoding. */
    public long packSize(long count, PackOptions opts) {
        nonNeg(count, "count");
        Layout l = layout();
        long per = opts.padding() == Padding.ALIGNED ? l.alignedInstanceSize : size;
        return Math.multiplyExact(per, count);
    }

    public boolean isCommitted() {
        return layout != null;
    }

    /** Lower bound in bytes. */
    public long lb() {
        return lb;
    }

    /** Extent (ub - lb) in bytes. */
    public long extent() {
        return ub - lb;
    }

    /** Upper bound in bytes. */
    public long ub() {
        return ub;
    }

    /** True lower bound in bytes (lowest data byte, ignoring resize). */
    public long trueLb() {
        return trueLb;
    }

    /** True extent in bytes (span of the data bytes). */
    public long trueExtent() {
        return trueUb - trueLb;
    }

    /** Number of data bytes in one instance ({@code MPI_Type_size}). */
    public long size() {
        return size;
    }

    /** Alignment of the type (largest alignment of its basic elements). */
    public int alignment() {
        return align;
    }

    /** Element type in which Open MPI's Java getters and array offsets count ({@code BYTE} for structs). */
    public BasicType baseType() {
        return baseType;
    }

    /** Size in bytes of {@link #baseType()}. */
    public int baseSize() {
        return baseType.size();
    }

    public Combiner combiner() {
        return combiner;
    }

    /** The basic type of a predefined basic type, else null. */
    public BasicType basicType() {
        return basic;
    }

    /** Integer constructor arguments in {@code MPI_Type_get_contents} order (copy). */
    public int[] contentsIntegers() {
        return ints.clone();
    }

    /** Byte (address) constructor arguments in {@code MPI_Type_get_contents} order (copy). */
    public long[] contentsAddresses() {
        return addrs.clone();
    }

    /** Datatype constructor arguments (copy). */
    public Datatype[] contentsTypes() {
        return types.clone();
    }

    /** Type signature of one instance; requires commit. */
    public TypeSignature signature() {
        return layout().signature;
    }

    /** The compacted byte program of a committed type, one op per line (diagnostics). */
    public List<String> describeProgram() {
        return layout().bytes.describe();
    }

    /** The compacted typed program of a committed type, one op per line (diagnostics). */
    public List<String> describeTypedProgram() {
        return layout().typed.describe();
    }

    /** True if one instance is a single contiguous run of {@link #size()} bytes starting at lb with extent == size. */
    public boolean isContiguous() {
        Program p = layout().bytes;
        return size == 0 || (p.n == 1 && p.count[0] == 1 && p.ocount[0] == 1 && p.off[0] == lb && size == ub - lb);
    }

    @Override
    public String toString() {
        return name != null ? name : combiner.name().toLowerCase() + "(size=" + size + ", lb=" + lb + ", extent="
                + (ub - lb) + ")";
    }
}
