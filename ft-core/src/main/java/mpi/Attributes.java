package mpi;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Attribute caching (MPI-3.1 section 6.7) for communicators and datatypes: the keyval registry
 * and one object's attribute values.
 *
 * <p>Semantics, as in Open MPI's Java bindings: a keyval has no user copy or delete callback
 * (the bindings have none); {@code dup} copies every attribute of the original to the
 * duplicate, {@code free} drops them, {@code split}/{@code create} and the other constructors
 * start empty. Unlike Open MPI, which serializes the value on {@code setAttr} and deserializes a
 * fresh copy on every {@code getAttr}, the value is kept by reference (any object, also one that
 * is not {@code Serializable}); a duplicate shares the original's value objects.
 *
 * <p>Predefined attributes are computed when read: {@link #PREDEFINED} maps a keyval to a
 * {@link Predefined} function of the communicator. They are visible on {@code MPI.COMM_WORLD}
 * and on its duplicates (Open MPI copies them on dup; the standard caches them on
 * {@code MPI_COMM_WORLD}), cannot be set, deleted or freed ({@code ERR_KEYVAL}). Adding one is
 * one {@link #predefine} line in the static block below plus its keyval constant in {@link MPI}
 * (keyvals below {@link #FIRST_USER_KEYVAL} are reserved for them).
 *
 * <p><b>Note:</b> thread-safe. Keyvals are process-wide (one registry per JVM; with ranks as
 * threads of one JVM, each rank gets distinct keyvals, which MPI allows: keyvals are local).
 */
final class Attributes {
    /** Which kind of object a keyval belongs to. */
    enum Kind { COMM, TYPE }

    /** A predefined communicator attribute, computed from the communicator it is read on. */
    @FunctionalInterface
    interface Predefined {
        Object value(Comm comm);
    }

    /** Keyvals below this one are predefined (MPI.TAG_UB ... and room for FT-MPI's keys). */
    static final int FIRST_USER_KEYVAL = 64;

    private static final AtomicInteger NEXT = new AtomicInteger(FIRST_USER_KEYVAL);
    /** Live user keyvals and their kind; a freed keyval is removed and never reused. */
    private static final Map<Integer, Kind> KEYVALS = new ConcurrentHashMap<>();
    private static final Map<Integer, Predefined> PREDEFINED = new ConcurrentHashMap<>();

    static {
        predefine(MPI.TAG_UB, c -> MPI.TAG_UB_VALUE);
        predefine(MPI.HOST, c -> MPI.PROC_NULL);                 // no host process
        predefine(MPI.IO, c -> MPI.ANY_SOURCE);                  // every process can do Java I/O
        predefine(MPI.WTIME_IS_GLOBAL, c -> Boolean.FALSE);      // System.nanoTime is per process
        predefine(MPI.APPNUM, c -> 0);                           // one application per job
        predefine(MPI.UNIVERSE_SIZE, c -> c.engine.size());
        predefine(MPI.LASTUSEDCODE, c -> ErrorCodes.lastUsed());
        predefine(MPI.FTMPI_RECOVERY_MODE, c -> c.recovery.recoveryMode);
        predefine(MPI.FTMPI_COMM_MODE, c -> c.recovery.commMode);
        predefine(MPI.FTMPI_MSG_MODE, c -> c.recovery.msgMode);
        predefine(MPI.FTMPI_COLL_MODE, c -> c.recovery.collMode);
        predefine(MPI.FTMPI_NUM_FAILED_PROCS, c -> c.recovery.lastFailed().length);
        predefine(MPI.FTMPI_ERROR_FAILURE, c -> c.recovery.failureCode());
    }

    /** Registers predefined attribute {@code keyval} (below {@link #FIRST_USER_KEYVAL}). */
    static void predefine(int keyval, Predefined value) {
        if (keyval < 0 || keyval >= FIRST_USER_KEYVAL) {
            throw new IllegalArgumentException("predefined keyval " + keyval + " outside 0.." + (FIRST_USER_KEYVAL - 1));
        }
        PREDEFINED.put(keyval, value);
    }

    static boolean isPredefined(int keyval) {
        return PREDEFINED.containsKey(keyval);
    }

    /** MPI_*_CREATE_KEYVAL. */
    static int createKeyval(Kind kind) {
        int k = NEXT.getAndIncrement();
        KEYVALS.put(k, kind);
        return k;
    }

    /** MPI_*_FREE_KEYVAL: the keyval becomes invalid everywhere (values cached with it are dropped lazily). */
    static void freeKeyval(Kind kind, int keyval, String op) throws MPIException {
        if (isPredefined(keyval) && kind == Kind.COMM) {
            throw MPIException.of(MPI.ERR_KEYVAL, op + ": keyval " + keyval + " is predefined and cannot be freed");
        }
        check(kind, keyval, op);
        KEYVALS.remove(keyval);
    }

    private static void check(Kind kind, int keyval, String op) throws MPIException {
        Kind k = KEYVALS.get(keyval);
        if (k == null) {
            throw MPIException.of(MPI.ERR_KEYVAL, op + ": keyval " + keyval + " is not a valid keyval (never created,"
                    + " freed, or MPI.KEYVAL_INVALID)");
        }
        if (k != kind) {
            throw MPIException.of(MPI.ERR_KEYVAL, op + ": keyval " + keyval + " was created for "
                    + (k == Kind.COMM ? "communicators (Comm.createKeyval)" : "datatypes (Datatype.createKeyval)"));
        }
    }

    // ------------------------------------------------------------------ one object's values

    private final Kind kind;
    /** Whether predefined attributes are visible here (COMM_WORLD and its duplicates). */
    volatile boolean predefinedVisible;
    /** Values by keyval (a null value is allowed); guarded by {@code this}. */
    private Map<Integer, Object> values;

    Attributes(Kind kind) {
        this.kind = kind;
    }

    /** MPI_*_SET_ATTR. */
    void set(int keyval, Object value, String op) throws MPIException {
        if (kind == Kind.COMM && isPredefined(keyval)) {
            throw MPIException.of(MPI.ERR_KEYVAL, op + ": keyval " + keyval + " is a predefined attribute (read-only)");
        }
        check(kind, keyval, op);
        synchronized (this) {
            if (values == null) values = new HashMap<>();
            values.put(keyval, value);
        }
    }

    /** MPI_*_GET_ATTR: the value, or {@code null} when none is set. */
    Object get(int keyval, Comm comm, String op) throws MPIException {
        Predefined p = kind == Kind.COMM ? PREDEFINED.get(keyval) : null;
        if (p != null) return predefinedVisible ? p.value(comm) : null;
        check(kind, keyval, op);
        synchronized (this) {
            return values == null ? null : values.get(keyval);
        }
    }

    /** MPI_*_DELETE_ATTR: removes the value; deleting an unset attribute is allowed. */
    void delete(int keyval, String op) throws MPIException {
        if (kind == Kind.COMM && isPredefined(keyval)) {
            throw MPIException.of(MPI.ERR_KEYVAL, op + ": keyval " + keyval + " is a predefined attribute (read-only)");
        }
        check(kind, keyval, op);
        synchronized (this) {
            if (values != null) values.remove(keyval);
        }
    }

    /** The attributes of a duplicate of the object holding these (live keyvals only). */
    Attributes copy() {
        Attributes a = new Attributes(kind);
        a.predefinedVisible = predefinedVisible;
        synchronized (this) {
            if (values != null) {
                a.values = new HashMap<>();
                for (Map.Entry<Integer, Object> e : values.entrySet()) {
                    if (KEYVALS.containsKey(e.getKey())) a.values.put(e.getKey(), e.getValue());
                }
            }
        }
        return a;
    }

    /** Drops every value (the object is freed). */
    synchronized void clear() {
        values = null;
    }
}
