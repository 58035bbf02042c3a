package mpi;

import org.ftmpi.ddt.BasicType;
import org.ftmpi.ddt.DatatypeException;

/**
 * An MPI datatype ({@code MPI_Datatype}): a handle on a type of the {@code ddt-engine}
 * ({@link org.ftmpi.ddt.Datatype}), with Open MPI's Java units on top of it.
 *
 * <p>Every type has a <em>base type</em>, the predefined type whose Java array (or elements of a
 * buffer) it describes: a derived type inherits it from its old type, a struct has {@code BYTE}.
 * Getters ({@link #getExtent()}, {@link #getLb()}, {@link #getSize()}, ...) count in base elements
 * (bytes divided by the base size, as Open MPI's bindings do); vector strides and indexed
 * displacements count in extents of the old type; hvector/hindexed/struct displacements and
 * {@link #createResized} bounds are bytes.
 *
 * <p><b>Note:</b> a datatype may be used by many threads once committed; constructing,
 * committing and freeing one is not synchronised with its use.
 */
public class Datatype implements Freeable, Cloneable {
    // base-type kinds (which Java array a type goes with)
    static final int K_NULL = 0, K_BYTE = 1, K_CHAR = 2, K_SHORT = 3, K_BOOLEAN = 4, K_INT = 5,
            K_LONG = 6, K_FLOAT = 7, K_DOUBLE = 8, K_PACKED = 9;

    /** Kind of the base type. */
    final int kind;
    /** Data bytes of one instance (MPI_Type_size): its length in a packed stream. */
    final int sizeBytes;
    /** Size of one base element (the unit in which array offsets and extents count). */
    final int baseBytes;
    /** The engine type; {@code null} for {@code DATATYPE_NULL}. */
    final org.ftmpi.ddt.Datatype ddt;
    /** Made by a constructor (must be committed, may be freed), not predefined. */
    final boolean derived;
    /** Built over FLOAT_COMPLEX / DOUBLE_COMPLEX: reductions treat pairs of base elements as complex. */
    final boolean complex;
    /** Kind of the value of a MINLOC/MAXLOC pair type ({@code INT2}, {@code DOUBLE_INT}, ...), else 0. */
    final int pairKind;
    private boolean freed;
    private String name;
    /** Cached attributes (copied by dup, dropped by free). */
    private Attributes attrs = new Attributes(Attributes.Kind.TYPE);

    /** A predefined type of {@code sizeBytes / baseBytes} base elements. */
    Datatype(int kind, int sizeBytes, int baseBytes, String name) {
        this(kind, sizeBytes, baseBytes, engineType(kind, sizeBytes / Math.max(1, baseBytes)), false,
                baseBytes > 0 && sizeBytes == 2 * baseBytes, 0, name);
    }

    /** A predefined MINLOC/MAXLOC pair type: base {@code BYTE}, as in Open MPI. */
    Datatype(org.ftmpi.ddt.Datatype pair, int valueKind, String name) {
        this(K_BYTE, (int) pair.size(), 1, pair, false, false, valueKind, name);
    }

    private Datatype(int kind, int sizeBytes, int baseBytes, org.ftmpi.ddt.Datatype ddt, boolean derived,
                     boolean complex, int pairKind, String name) {
        this.kind = kind;
        this.sizeBytes = sizeBytes;
        this.baseBytes = baseBytes;
        this.ddt = ddt;
        this.derived = derived;
        this.complex = complex;
        this.pairKind = pairKind;
        this.name = name;
    }

    private static org.ftmpi.ddt.Datatype engineType(int kind, int n) {
        org.ftmpi.ddt.Datatype b = switch (kind) {
            case K_BYTE -> org.ftmpi.ddt.Datatype.BYTE;
            case K_CHAR -> org.ftmpi.ddt.Datatype.CHAR;
            case K_SHORT -> org.ftmpi.ddt.Datatype.SHORT;
            case K_BOOLEAN -> org.ftmpi.ddt.Datatype.BOOLEAN;
            case K_INT -> org.ftmpi.ddt.Datatype.INT;
            case K_LONG -> org.ftmpi.ddt.Datatype.LONG;
            case K_FLOAT -> org.ftmpi.ddt.Datatype.FLOAT;
            case K_DOUBLE -> org.ftmpi.ddt.Datatype.DOUBLE;
            case K_PACKED -> org.ftmpi.ddt.Datatype.PACKED;
            default -> null;
        };
        return b == null || n == 1 ? b : org.ftmpi.ddt.Datatype.contiguous(n, b).commit();
    }

    /** A derived type over {@code t}, with the base type of {@code base}. */
    private static Datatype derive(org.ftmpi.ddt.Datatype t, Datatype base, String op) throws MPIException {
        if (t.size() > Integer.MAX_VALUE) {
            throw MPIException.of(MPI.ERR_ARG, op + ": the new datatype holds " + t.size()
                    + " bytes, more than 2^31-1");
        }
        boolean struct = base == null;
        return new Datatype(struct ? K_BYTE : base.kind, (int) t.size(), struct ? 1 : base.baseBytes, t, true,
                !struct && base.complex, 0, null);
    }

    /** The engine type of an argument, checked: not null, not freed. */
    private static org.ftmpi.ddt.Datatype arg(Datatype t, String op, String arg) throws MPIException {
        if (t == null || t.isNull()) {
            throw MPIException.of(MPI.ERR_TYPE, op + ": " + arg + " is " + (t == null ? "null" : t.nullName()));
        }
        return t.ddt;
    }

    /** Engine errors as MPI errors with the operation named. */
    static MPIException error(DatatypeException e, String op) {
        int cls = switch (e.kind()) {
            case TYPE -> MPI.ERR_TYPE;
            case COUNT -> MPI.ERR_COUNT;
            case ARG -> MPI.ERR_ARG;
            case BUFFER -> MPI.ERR_BUFFER;
            case TRUNCATE -> MPI.ERR_TRUNCATE;
            case OTHER -> MPI.ERR_OTHER;
        };
        return MPIException.of(cls, op + ": " + e.getMessage());
    }

    @FunctionalInterface
    private interface Make {
        org.ftmpi.ddt.Datatype make();
    }

    private static Datatype build(String op, Datatype base, Make m) throws MPIException {
        try {
            return derive(m.make(), base, op);
        } catch (DatatypeException e) {
            throw error(e, op);
        }
    }

    // ------------------------------------------------------------------ constructors

    /** MPI_TYPE_CONTIGUOUS: {@code count} copies of {@code oldType}; same base type. */
    public static Datatype createContiguous(int count, Datatype oldType) throws MPIException {
        org.ftmpi.ddt.Datatype o = arg(oldType, "createContiguous", "oldType");
        return build("createContiguous", oldType, () -> org.ftmpi.ddt.Datatype.contiguous(count, o));
    }

    /** MPI_TYPE_VECTOR: {@code stride} in extents of {@code oldType} (elements for a predefined type). */
    public static Datatype createVector(int count, int blockLength, int stride, Datatype oldType)
            throws MPIException {
        org.ftmpi.ddt.Datatype o = arg(oldType, "createVector", "oldType");
        return build("createVector", oldType, () -> org.ftmpi.ddt.Datatype.vector(count, blockLength, stride, o));
    }

    /** MPI_TYPE_CREATE_HVECTOR: {@code stride} in bytes. */
    public static Datatype createHVector(int count, int blockLength, int stride, Datatype oldType)
            throws MPIException {
        org.ftmpi.ddt.Datatype o = arg(oldType, "createHVector", "oldType");
        return build("createHVector", oldType, () -> org.ftmpi.ddt.Datatype.hvector(count, blockLength, stride, o));
    }

    /** MPI_TYPE_INDEXED: displacements in extents of {@code oldType}. */
    public static Datatype createIndexed(int[] blockLengths, int[] displacements, Datatype oldType)
            throws MPIException {
        org.ftmpi.ddt.Datatype o = arg(oldType, "createIndexed", "oldType");
        checkArrays("createIndexed", blockLengths, displacements);
        return build("createIndexed", oldType, () -> org.ftmpi.ddt.Datatype.indexed(blockLengths, displacements, o));
    }

    /** MPI_TYPE_CREATE_HINDEXED: displacements in bytes. */
    public static Datatype createHIndexed(int[] blockLengths, int[] displacements, Datatype oldType)
            throws MPIException {
        org.ftmpi.ddt.Datatype o = arg(oldType, "createHIndexed", "oldType");
        checkArrays("createHIndexed", blockLengths, displacements);
        return build("createHIndexed", oldType,
                () -> org.ftmpi.ddt.Datatype.hindexed(blockLengths, longs(displacements), o));
    }

    /** MPI_TYPE_CREATE_INDEXED_BLOCK *(ext: not in Open MPI's Java bindings)*: displacements in extents of {@code oldType}. */
    public static Datatype createIndexedBlock(int blockLength, int[] displacements, Datatype oldType)
            throws MPIException {
        org.ftmpi.ddt.Datatype o = arg(oldType, "createIndexedBlock", "oldType");
        if (displacements == null) throw MPIException.of(MPI.ERR_ARG, "createIndexedBlock: displacements is null");
        return build("createIndexedBlock", oldType,
                () -> org.ftmpi.ddt.Datatype.indexedBlock(blockLength, displacements, o));
    }

    /** MPI_TYPE_CREATE_HINDEXED_BLOCK *(ext)*: displacements in bytes. */
    public static Datatype createHIndexedBlock(int blockLength, int[] displacements, Datatype oldType)
            throws MPIException {
        org.ftmpi.ddt.Datatype o = arg(oldType, "createHIndexedBlock", "oldType");
        if (displacements == null) throw MPIException.of(MPI.ERR_ARG, "createHIndexedBlock: displacements is null");
        return build("createHIndexedBlock", oldType,
                () -> org.ftmpi.ddt.Datatype.hindexedBlock(blockLength, longs(displacements), o));
    }

    /** MPI_TYPE_CREATE_STRUCT: byte displacements; the base type is {@code BYTE} (use byte buffers). */
    public static Datatype createStruct(int[] blockLengths, int[] displacements, Datatype[] types)
            throws MPIException {
        checkArrays("createStruct", blockLengths, displacements);
        if (types == null) throw MPIException.of(MPI.ERR_ARG, "createStruct: types is null");
        org.ftmpi.ddt.Datatype[] t = new org.ftmpi.ddt.Datatype[types.length];
        for (int i = 0; i < t.length; i++) t[i] = arg(types[i], "createStruct", "types[" + i + "]");
        return build("createStruct", null, () -> org.ftmpi.ddt.Datatype.struct(blockLengths, longs(displacements), t));
    }

    /**
     * MPI_TYPE_CREATE_SUBARRAY *(ext)*: the {@code subsizes} block at {@code starts} of an array
     * of {@code sizes} elements of {@code oldType}; {@code order} is {@link MPI#ORDER_C} or
     * {@link MPI#ORDER_FORTRAN}.
     */
    public static Datatype createSubarray(int[] sizes, int[] subsizes, int[] starts, int order, Datatype oldType)
            throws MPIException {
        org.ftmpi.ddt.Datatype o = arg(oldType, "createSubarray", "oldType");
        org.ftmpi.ddt.Datatype.Order ord = order(order, "createSubarray");
        return build("createSubarray", oldType, () -> org.ftmpi.ddt.Datatype.subarray(sizes, subsizes, starts, ord, o));
    }

    /** {@link MPI#ORDER_C} or {@link MPI#ORDER_FORTRAN} as the engine's order; else {@code ERR_ARG} naming {@code op}. */
    private static org.ftmpi.ddt.Datatype.Order order(int order, String op) throws MPIException {
        return switch (order) {
            case MPI.ORDER_C -> org.ftmpi.ddt.Datatype.Order.C;
            case MPI.ORDER_FORTRAN -> org.ftmpi.ddt.Datatype.Order.FORTRAN;
            default -> throw MPIException.of(MPI.ERR_ARG, op + ": order " + order
                    + " is neither MPI.ORDER_C nor MPI.ORDER_FORTRAN");
        };
    }

    /**
     * MPI_TYPE_CREATE_DARRAY (extension: Open MPI's Java bindings have none): the part of a
     * global array of {@code gsizes} elements that process {@code rank} of {@code size} owns in a
     * process grid {@code psizes}, per dimension {@link MPI#DISTRIBUTE_BLOCK},
     * {@link MPI#DISTRIBUTE_CYCLIC} or {@link MPI#DISTRIBUTE_NONE} with distribution argument
     * {@code dargs} ({@link MPI#DISTRIBUTE_DFLT_DARG} for the default), in {@code order}. Its
     * extent is the whole global array, so a receive of one darray places a rank's blocks where
     * they belong in a buffer of the global array's size.
     */
    public static Datatype createDarray(int size, int rank, int[] gsizes, int[] distribs, int[] dargs,
                                        int[] psizes, int order, Datatype oldType) throws MPIException {
        org.ftmpi.ddt.Datatype o = arg(oldType, "createDarray", "oldType");
        org.ftmpi.ddt.Datatype.Order ord = order(order, "createDarray");
        if (distribs == null) throw MPIException.of(MPI.ERR_ARG, "createDarray: distribs is null");
        org.ftmpi.ddt.Datatype.Distribution[] d = new org.ftmpi.ddt.Datatype.Distribution[distribs.length];
        for (int i = 0; i < d.length; i++) {
            d[i] = switch (distribs[i]) {
                case MPI.DISTRIBUTE_BLOCK -> org.ftmpi.ddt.Datatype.Distribution.BLOCK;
                case MPI.DISTRIBUTE_CYCLIC -> org.ftmpi.ddt.Datatype.Distribution.CYCLIC;
                case MPI.DISTRIBUTE_NONE -> org.ftmpi.ddt.Datatype.Distribution.NONE;
                default -> throw MPIException.of(MPI.ERR_ARG, "createDarray: distribs[" + i + "] = " + distribs[i]
                        + " is not MPI.DISTRIBUTE_BLOCK, _CYCLIC or _NONE");
            };
        }
        return build("createDarray", oldType,
                () -> org.ftmpi.ddt.Datatype.darray(size, rank, gsizes, d, dargs, psizes, ord, o));
    }

    /** MPI_TYPE_CREATE_RESIZED: new lower bound and extent in bytes. */
    public static Datatype createResized(Datatype oldType, int lb, int extent) throws MPIException {
        org.ftmpi.ddt.Datatype o = arg(oldType, "createResized", "oldType");
        return build("createResized", oldType, () -> org.ftmpi.ddt.Datatype.resized(o, lb, extent));
    }

    /** MPI_TYPE_DUP: same type map, committed if this type is, same base type. */
    public Datatype dup() throws MPIException {
        org.ftmpi.ddt.Datatype o = arg(this, "dup", "the datatype");
        Datatype d = new Datatype(kind, sizeBytes, baseBytes, o.dup(), true, complex, pairKind, name);
        d.attrs = attrs.copy();
        return d;
    }

    private static void checkArrays(String op, int[] blockLengths, int[] displacements) throws MPIException {
        if (blockLengths == null) throw MPIException.of(MPI.ERR_ARG, op + ": blockLengths is null");
        if (displacements == null) throw MPIException.of(MPI.ERR_ARG, op + ": displacements is null");
    }

    private static long[] longs(int[] a) {
        long[] l = new long[a.length];
        for (int i = 0; i < a.length; i++) l[i] = a[i];
        return l;
    }

    // ------------------------------------------------------------------ queries (base-element units)

    /** MPI_TYPE_SIZE in base elements (bytes for byte-based types such as structs). */
    public int getSize() throws MPIException {
        checkUsable("getSize");
        return sizeBytes / baseBytes;
    }

    /** Extent (MPI_TYPE_GET_EXTENT) in base elements. */
    public int getExtent() throws MPIException {
        checkUsable("getExtent");
        return (int) (ddt.extent() / baseBytes);
    }

    /** Lower bound (MPI_TYPE_GET_EXTENT) in base elements. */
    public int getLb() throws MPIException {
        checkUsable("getLb");
        return (int) (ddt.lb() / baseBytes);
    }

    /** True extent (MPI_TYPE_GET_TRUE_EXTENT) in base elements. */
    public int getTrueExtent() throws MPIException {
        checkUsable("getTrueExtent");
        return (int) (ddt.trueExtent() / baseBytes);
    }

    /** True lower bound (MPI_TYPE_GET_TRUE_EXTENT) in base elements. */
    public int getTrueLb() throws MPIException {
        checkUsable("getTrueLb");
        return (int) (ddt.trueLb() / baseBytes);
    }

    /** *(ext)* The predefined type in whose elements this type's buffers and getters count. */
    public Datatype getBaseType() throws MPIException {
        checkUsable("getBaseType");
        return switch (kind) {
            case K_CHAR -> MPI.CHAR;
            case K_SHORT -> MPI.SHORT;
            case K_BOOLEAN -> MPI.BOOLEAN;
            case K_INT -> MPI.INT;
            case K_LONG -> MPI.LONG;
            case K_FLOAT -> MPI.FLOAT;
            case K_DOUBLE -> MPI.DOUBLE;
            case K_PACKED -> MPI.PACKED;
            default -> MPI.BYTE;
        };
    }

    /** *(ext)* Size in bytes of the base type (the divisor of the getters). */
    public int getBaseSize() throws MPIException {
        checkUsable("getBaseSize");
        return baseBytes;
    }

    /** MPI_TYPE_COMMIT: compacts the type into its pack program; no effect on predefined types. */
    public void commit() throws MPIException {
        checkUsable("commit");
        try {
            ddt.commit();
        } catch (DatatypeException e) {
            throw error(e, "commit");
        }
    }

    /** MPI_TYPE_FREE: the handle becomes null; predefined types cannot be freed. */
    @Override
    public void free() throws MPIException {
        checkUsable("free");
        if (!derived) throw MPIException.of(MPI.ERR_TYPE, "free: cannot free the predefined datatype " + name);
        freed = true;
        attrs.clear();
    }

    // ------------------------------------------------------------------ attribute caching

    /** MPI_TYPE_CREATE_KEYVAL: a new attribute key for datatypes (attributes are copied by {@link #dup}). */
    public static int createKeyval() throws MPIException {
        return Attributes.createKeyval(Attributes.Kind.TYPE);
    }

    /** MPI_TYPE_FREE_KEYVAL. */
    public static void freeKeyval(int keyval) throws MPIException {
        Attributes.freeKeyval(Attributes.Kind.TYPE, keyval, "freeKeyval");
    }

    /** MPI_TYPE_SET_ATTR (also on predefined types). */
    public void setAttr(int keyval, Object value) throws MPIException {
        checkUsable("setAttr");
        attrs.set(keyval, value, "setAttr");
    }

    /** MPI_TYPE_GET_ATTR: the value cached under {@code keyval}, or {@code null} if none. */
    public Object getAttr(int keyval) throws MPIException {
        checkUsable("getAttr");
        return attrs.get(keyval, null, "getAttr");
    }

    /** MPI_TYPE_DELETE_ATTR. */
    public void deleteAttr(int keyval) throws MPIException {
        checkUsable("deleteAttr");
        attrs.delete(keyval, "deleteAttr");
    }

    public void setName(String name) throws MPIException {
        checkUsable("setName");
        this.name = name;
    }

    public String getName() throws MPIException {
        return name == null ? "" : name;
    }

    /** Whether this is {@code MPI.DATATYPE_NULL} or a freed type. */
    public boolean isNull() {
        return kind == K_NULL || freed;
    }

    /** Number of base elements in one instance (2 for complex types). */
    final int baseCount() {
        return baseBytes == 0 ? 0 : sizeBytes / baseBytes;
    }

    /** Whether the type is ready for communication (predefined, or derived and committed). */
    final boolean isCommitted() {
        return ddt != null && ddt.isCommitted();
    }

    /** Whether one instance is one block of {@code sizeBytes} at its lower bound, extent apart (zero-copy). */
    final boolean isDense() {
        return ddt.isContiguous();
    }

    /** Whether every basic element is of the base type (reductions apply element-wise). */
    final boolean isHomogeneous() {
        if (!derived) return true;
        BasicType b = engineType(kind, 1).basicType();
        return ddt.signature().elements(b) == ddt.signature().elements();
    }

    /** Number of basic elements in {@code bytes} of packed data, or {@code MPI.UNDEFINED}. */
    final long elements(long bytes) {
        if (!derived && pairKind == 0) { // predefined: elements of the base type (2 per complex)
            if (baseBytes == 0) return bytes == 0 ? 0 : MPI.UNDEFINED;
            return bytes % baseBytes != 0 ? MPI.UNDEFINED : bytes / baseBytes;
        }
        org.ftmpi.ddt.TypeSignature sig = ddt.signature();
        if (sizeBytes == 0) return bytes == 0 ? 0 : MPI.UNDEFINED;
        long n = bytes / sizeBytes * sig.elements();
        long rem = bytes % sizeBytes;
        for (int r = 0; r < sig.runs() && rem > 0; r++) {
            long s = sig.type(r).size();
            long k = Math.min(sig.count(r), rem / s);
            n += k;
            rem -= k * s;
            if (k < sig.count(r)) break;
        }
        return rem != 0 ? MPI.UNDEFINED : n;
    }

    /** Bytes of packed data that hold {@code count} basic elements (the inverse of {@link #elements}). */
    final long bytesOfElements(long count) {
        if (!derived && pairKind == 0) return count * baseBytes;
        org.ftmpi.ddt.TypeSignature sig = ddt.signature();
        long per = sig.elements();
        if (per == 0) return 0;
        long bytes = count / per * sizeBytes;
        long rem = count % per;
        for (int r = 0; r < sig.runs() && rem > 0; r++) {
            long k = Math.min(sig.count(r), rem);
            bytes += k * sig.type(r).size();
            rem -= k;
        }
        return bytes;
    }

    private String nullName() {
        return kind == K_NULL ? "MPI.DATATYPE_NULL" : "a freed datatype (" + this + ")";
    }

    /** Checks that the type can be used for communication: not null, not freed, committed. */
    final void checkComm(String op) throws MPIException {
        if (isNull()) throw MPIException.of(MPI.ERR_TYPE, op + ": datatype is " + nullName());
        if (!ddt.isCommitted()) {
            throw MPIException.of(MPI.ERR_TYPE, op + ": datatype " + this + " is not committed (call commit() first)");
        }
    }

    private void checkUsable(String op) throws MPIException {
        if (isNull()) throw MPIException.of(MPI.ERR_TYPE, op + ": the datatype is " + nullName());
    }

    /** MPI_TYPE_DUP; prefer {@link #dup()}, which can throw {@link MPIException}. */
    @Override
    public Datatype clone() {
        try {
            return dup();
        } catch (MPIException e) {
            throw new RuntimeException(e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        if (name != null && !name.isEmpty()) return name;
        return ddt == null ? "MPI.DATATYPE_NULL" : ddt.toString();
    }
}
