package mpi;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;
import org.ftmpi.FacadeAccess;
import org.ftmpi.p2p.Engine;
import org.ftmpi.p2p.ErrorClass;
import org.ftmpi.runtime.RankRuntime;
import org.ftmpi.runtime.RankRuntimes;

/**
 * The MPI environment: initialisation, predefined objects and constants, buffers. Source
 * compatible with Open MPI's Java bindings; one engine is bound per process.
 */
public final class MPI {
    private MPI() {}

    // ------------------------------------------------------------------ constants

    public static final int THREAD_SINGLE = 0, THREAD_FUNNELED = 1, THREAD_SERIALIZED = 2, THREAD_MULTIPLE = 3;

    public static final int ANY_SOURCE = Engine.ANY_SOURCE;
    public static final int ANY_TAG = Engine.ANY_TAG;
    public static final int PROC_NULL = Engine.PROC_NULL;
    public static final int UNDEFINED = -32766;
    public static final int ROOT = -4;
    /** Results of {@link Group#compare} and {@link Comm#compare} (Open MPI's values). */
    public static final int IDENT = 0, CONGRUENT = 1, SIMILAR = 2, UNEQUAL = 3;
    /** Bytes of bookkeeping per message in the attached buffer of buffered sends. */
    public static final int BSEND_OVERHEAD = 128;
    public static final int MAX_OBJECT_NAME = 64;
    public static final int MAX_PROCESSOR_NAME = 256;
    /** Largest tag (value of the TAG_UB attribute). */
    static final int TAG_UB_VALUE = Integer.MAX_VALUE;

    public static final int SUCCESS = ErrorClass.SUCCESS;
    public static final int ERR_BUFFER = ErrorClass.ERR_BUFFER;
    public static final int ERR_COUNT = ErrorClass.ERR_COUNT;
    public static final int ERR_TYPE = ErrorClass.ERR_TYPE;
    public static final int ERR_TAG = ErrorClass.ERR_TAG;
    public static final int ERR_COMM = ErrorClass.ERR_COMM;
    public static final int ERR_RANK = ErrorClass.ERR_RANK;
    public static final int ERR_REQUEST = ErrorClass.ERR_REQUEST;
    public static final int ERR_ROOT = ErrorClass.ERR_ROOT;
    public static final int ERR_GROUP = ErrorClass.ERR_GROUP;
    public static final int ERR_OP = ErrorClass.ERR_OP;
    public static final int ERR_TOPOLOGY = ErrorClass.ERR_TOPOLOGY;
    public static final int ERR_DIMS = ErrorClass.ERR_DIMS;
    public static final int ERR_ARG = ErrorClass.ERR_ARG;
    public static final int ERR_UNKNOWN = ErrorClass.ERR_UNKNOWN;
    public static final int ERR_TRUNCATE = ErrorClass.ERR_TRUNCATE;
    public static final int ERR_OTHER = ErrorClass.ERR_OTHER;
    public static final int ERR_INTERN = ErrorClass.ERR_INTERN;
    public static final int ERR_IN_STATUS = ErrorClass.ERR_IN_STATUS;
    public static final int ERR_PENDING = ErrorClass.ERR_PENDING;
    public static final int ERR_INFO_KEY = ErrorClass.ERR_INFO_KEY;
    public static final int ERR_INFO_NOKEY = ErrorClass.ERR_INFO_NOKEY;
    public static final int ERR_INFO_VALUE = ErrorClass.ERR_INFO_VALUE;
    public static final int ERR_INFO = ErrorClass.ERR_INFO;
    public static final int ERR_KEYVAL = ErrorClass.ERR_KEYVAL;

    /** Topology kinds ({@link Comm#getTopology()}), MPI_GRAPH, MPI_CART, MPI_DIST_GRAPH. */
    public static final int GRAPH = 1, CART = 2, DIST_GRAPH = 3;

    /** {@code Intracomm.splitType}: processes that share memory (the same host). */
    public static final int COMM_TYPE_SHARED = 0;

    /** Longest info key and value (Open MPI's MPI_MAX_INFO_KEY / MPI_MAX_INFO_VAL). */
    public static final int MAX_INFO_KEY = 36, MAX_INFO_VAL = 256;

    /** ULFM: a process the operation depends on has failed (with --ulfm-error-classes). */
    public static final int ERR_PROC_FAILED = ErrorClass.ERR_PROC_FAILED;
    /** ULFM: a wildcard receive could not complete because of a failure (with --ulfm-error-classes). */
    public static final int ERR_PROC_FAILED_PENDING = ErrorClass.ERR_PROC_FAILED_PENDING;
    /** ULFM: the communicator was revoked. */
    public static final int ERR_REVOKED = ErrorClass.ERR_REVOKED;
    public static final int ERR_LASTCODE = 92;

    /**
     * Predefined attribute keys, read with {@code MPI.COMM_WORLD.getAttr(key)} (and on its
     * duplicates): {@code Integer} values, except {@code WTIME_IS_GLOBAL} ({@code Boolean}).
     * Open MPI's numbers; keyvals below 64 are reserved for predefined attributes.
     */
    public static final int TAG_UB = 0, HOST = 1, IO = 2, WTIME_IS_GLOBAL = 3, APPNUM = 4, LASTUSEDCODE = 5,
            UNIVERSE_SIZE = 6;
    /** An invalid keyval (MPI_KEYVAL_INVALID): a variable to hold a keyval before it is created. */
    public static final int KEYVAL_INVALID = -1;

    /** The version of the MPI standard whose semantics this library implements ({@link #getVersion()}). */
    public static final int VERSION = 3, SUBVERSION = 1;

    // ------------------------------------------------------------------ predefined objects

    public static final Datatype DATATYPE_NULL = new Datatype(Datatype.K_NULL, 0, 0, "MPI.DATATYPE_NULL");
    public static final Datatype BYTE = new Datatype(Datatype.K_BYTE, 1, 1, "MPI.BYTE");
    public static final Datatype CHAR = new Datatype(Datatype.K_CHAR, 2, 2, "MPI.CHAR");
    public static final Datatype SHORT = new Datatype(Datatype.K_SHORT, 2, 2, "MPI.SHORT");
    public static final Datatype BOOLEAN = new Datatype(Datatype.K_BOOLEAN, 1, 1, "MPI.BOOLEAN");
    public static final Datatype INT = new Datatype(Datatype.K_INT, 4, 4, "MPI.INT");
    public static final Datatype LONG = new Datatype(Datatype.K_LONG, 8, 8, "MPI.LONG");
    public static final Datatype FLOAT = new Datatype(Datatype.K_FLOAT, 4, 4, "MPI.FLOAT");
    public static final Datatype DOUBLE = new Datatype(Datatype.K_DOUBLE, 8, 8, "MPI.DOUBLE");
    public static final Datatype PACKED = new Datatype(Datatype.K_PACKED, 1, 1, "MPI.PACKED");
    public static final Datatype FLOAT_COMPLEX = new Datatype(Datatype.K_FLOAT, 8, 4, "MPI.FLOAT_COMPLEX");
    public static final Datatype DOUBLE_COMPLEX = new Datatype(Datatype.K_DOUBLE, 16, 8, "MPI.DOUBLE_COMPLEX");

    /** MINLOC/MAXLOC pair types (value, int index); base type {@code BYTE}, used with {@link #int2} ... */
    public static final Datatype INT2 = new Datatype(org.ftmpi.ddt.Datatype.INT2, Datatype.K_INT, "MPI.INT2");
    public static final Datatype SHORT_INT = new Datatype(org.ftmpi.ddt.Datatype.SHORT_INT, Datatype.K_SHORT, "MPI.SHORT_INT");
    public static final Datatype LONG_INT = new Datatype(org.ftmpi.ddt.Datatype.LONG_INT, Datatype.K_LONG, "MPI.LONG_INT");
    public static final Datatype FLOAT_INT = new Datatype(org.ftmpi.ddt.Datatype.FLOAT_INT, Datatype.K_FLOAT, "MPI.FLOAT_INT");
    public static final Datatype DOUBLE_INT = new Datatype(org.ftmpi.ddt.Datatype.DOUBLE_INT, Datatype.K_DOUBLE, "MPI.DOUBLE_INT");

    /** Struct objects to read and write the pair types in byte buffers. */
    public static final Int2 int2 = new Int2();
    public static final ShortInt shortInt = new ShortInt();
    public static final LongInt longInt = new LongInt();
    public static final FloatInt floatInt = new FloatInt();
    public static final DoubleInt doubleInt = new DoubleInt();

    /** Array orders of {@link Datatype#createSubarray} and {@link Datatype#createDarray}. */
    public static final int ORDER_C = 0, ORDER_FORTRAN = 1;

    /** Distributions of {@link Datatype#createDarray} (extension; MPI_DISTRIBUTE_*). */
    public static final int DISTRIBUTE_BLOCK = 0, DISTRIBUTE_CYCLIC = 1, DISTRIBUTE_NONE = 2;
    /** {@link Datatype#createDarray}'s default distribution argument (MPI_DISTRIBUTE_DFLT_DARG). */
    public static final int DISTRIBUTE_DFLT_DARG = -1;

    public static final Errhandler ERRORS_ARE_FATAL = new Errhandler(true, "MPI.ERRORS_ARE_FATAL");
    public static final Errhandler ERRORS_RETURN = new Errhandler(false, "MPI.ERRORS_RETURN");

    public static final Op MAX = new Op(Op.MAX, "MPI.MAX"), MIN = new Op(Op.MIN, "MPI.MIN"),
            SUM = new Op(Op.SUM, "MPI.SUM"), PROD = new Op(Op.PROD, "MPI.PROD"),
            LAND = new Op(Op.LAND, "MPI.LAND"), BAND = new Op(Op.BAND, "MPI.BAND"),
            LOR = new Op(Op.LOR, "MPI.LOR"), BOR = new Op(Op.BOR, "MPI.BOR"),
            LXOR = new Op(Op.LXOR, "MPI.LXOR"), BXOR = new Op(Op.BXOR, "MPI.BXOR"),
            REPLACE = new Op(Op.REPLACE, "MPI.REPLACE"), NO_OP = new Op(Op.NO_OP, "MPI.NO_OP");

    /** Minimum / maximum value with the (lowest) index where it occurs; for INT2 ... DOUBLE_INT. */
    public static final Op MINLOC = new Op(Op.MINLOC, "MPI.MINLOC"), MAXLOC = new Op(Op.MAXLOC, "MPI.MAXLOC");

    public static final Group GROUP_EMPTY = Group.empty();

    public static final Request REQUEST_NULL = new Request(null, null, null);

    /** MPI_INFO_NULL. */
    public static final Info INFO_NULL = Info.nullInfo();

    /** MPI_INFO_ENV: how this process was started ({@code command}, {@code host}, {@code maxprocs}); read-only. */
    public static final Info INFO_ENV = Info.env(System.getProperty("sun.java.command"), localHost());

    public static final Intracomm COMM_WORLD = predefined("MPI_COMM_WORLD");
    public static final Intracomm COMM_SELF = predefined("MPI_COMM_SELF");

    static {
        FacadeAccess.install(MPI::newWorld);
    }

    private static Intracomm predefined(String name) {
        Intracomm c = new Intracomm();
        c.name = name;
        c.predefined = true;
        return c;
    }

    // ------------------------------------------------------------------ state

    private static final Object LOCK = new Object();
    private static Engine engine;
    private static volatile boolean initialized;
    private static volatile boolean finalized;
    private static int threadLevel;
    private static Thread mainThread;
    private static byte[] bsendBuffer;
    private static long bsendUsed;

    // ------------------------------------------------------------------ life cycle

    /** MPI_INIT. Returns the arguments (the launcher leaves none of its own in them). */
    public static String[] Init(String[] args) throws MPIException {
        start(THREAD_SINGLE);
        return args;
    }

    /** MPI_INIT_THREAD: every level up to {@link #THREAD_MULTIPLE} is provided. */
    public static int InitThread(String[] args, int required) throws MPIException {
        if (required < THREAD_SINGLE || required > THREAD_MULTIPLE) {
            throw MPIException.of(ERR_ARG, "InitThread: required level " + required + " is not one of MPI.THREAD_*");
        }
        start(required);
        return required;
    }

    private static void start(int level) throws MPIException {
        synchronized (LOCK) {
            if (initialized) throw new MPIException("MPI is already initialized.");
            if (finalized) throw new MPIException("MPI cannot be initialized again after MPI.Finalize.");
            RankRuntime rt = RankRuntimes.fromEnvironment();
            try {
                engine = new Engine(rt);
            } catch (IOException e) {
                rt.abort(1, "MPI.Init failed: " + e.getMessage());
                throw MPIException.of(ERR_OTHER, "MPI.Init failed: " + e.getMessage());
            }
            bindWorld(COMM_WORLD, COMM_SELF, engine);
            threadLevel = level;
            mainThread = Thread.currentThread();
            initialized = true;
        }
    }

    private static void bindWorld(Intracomm world, Intracomm self, Engine e) {
        int n = e.size();
        int[] ranks = new int[n];
        for (int i = 0; i < n; i++) ranks[i] = i;
        world.bind(e, 0, e.rank(), ranks, "MPI_COMM_WORLD", true);
        world.attrs.predefinedVisible = true;
        self.attrs.predefinedVisible = true; // the FTMPI_* attributes are defined on MPI_COMM_SELF too
        self.bind(e, 2, 0, new int[] {e.rank()}, "MPI_COMM_SELF", true);
        world.recovery = self.recovery = new Recovery(e, world, self);
        e.reserveContext(0);
        e.reserveContext(2);
    }

    /** A world communicator bound to {@code e} (ranks that are threads of one JVM). */
    private static Intracomm newWorld(Engine e) {
        Intracomm world = predefined("MPI_COMM_WORLD");
        Intracomm self = predefined("MPI_COMM_SELF");
        bindWorld(world, self, e);
        return world;
    }

    /** MPI_FINALIZE: waits for every rank, then shuts the library down. */
    public static void Finalize() throws MPIException {
        synchronized (LOCK) {
            check();
            try {
                COMM_WORLD.recovery.beforeFinalize();
                engine.finish();
            } catch (IOException e) {
                throw MPIException.of(ERR_OTHER, "Finalize: " + e.getMessage());
            } finally {
                finalized = true;
                COMM_WORLD.engine = null;
                COMM_SELF.engine = null;
                Buffers.forgetRegions();
            }
        }
    }

    public static boolean isInitialized() throws MPIException {
        return initialized;
    }

    public static boolean isFinalized() throws MPIException {
        return finalized;
    }

    static boolean isFinalizedNow() {
        return finalized;
    }

    /** MPI_QUERY_THREAD. */
    public static int queryThread() throws MPIException {
        check();
        return threadLevel;
    }

    /** MPI_IS_THREAD_MAIN. */
    public static boolean isThreadMain() throws MPIException {
        check();
        return Thread.currentThread() == mainThread;
    }

    /** MPI_WTIME: seconds since an arbitrary time in the past (monotonic). */
    public static double wtime() throws MPIException {
        return System.nanoTime() * 1e-9;
    }

    /** MPI_WTICK: resolution of {@link #wtime()}. */
    public static double wtick() throws MPIException {
        return 1e-9;
    }

    /** MPI_GET_PROCESSOR_NAME. */
    public static String getProcessorName() throws MPIException {
        return localHost();
    }

    static String localHost() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            String h = System.getenv("HOSTNAME");
            return h != null ? h : "localhost";
        }
    }

    /** MPI_PCONTROL: profiling is not instrumented; the call has no effect, as the standard allows. */
    public static void pControl(int level, Object obj) {
        // MPI allows implementations to ignore MPI_Pcontrol.
    }

    // ------------------------------------------------------------------ versions, error classes

    /** MPI_GET_VERSION: the MPI standard version this library implements (3.1). Callable before Init. */
    public static Version getVersion() throws MPIException {
        return new Version(VERSION, SUBVERSION);
    }

    /** MPI_GET_LIBRARY_VERSION: this library's name and version. Callable before Init. */
    public static String getLibVersion() throws MPIException {
        return org.ftmpi.Version.LIBRARY + " (MPI " + VERSION + "." + SUBVERSION
                + ", Open MPI v5.0.x Java API, FT-MPI and ULFM extensions)";
    }

    /** MPI_ADD_ERROR_CLASS: a new error class, above every class and code in use; local. */
    public static int addErrorClass() throws MPIException {
        return ErrorCodes.addClass();
    }

    /** MPI_ADD_ERROR_CODE: a new error code of {@code errorClass} (predefined or added); local. */
    public static int addErrorCode(int errorClass) throws MPIException {
        return ErrorCodes.addCode(errorClass);
    }

    /** MPI_ADD_ERROR_STRING: the message of an added error class or code (at most 255 characters). */
    public static void addErrorString(int errorCode, String errorString) throws MPIException {
        ErrorCodes.addString(errorCode, errorString);
    }

    /** MPI_ERROR_STRING: the message of an error code or class ("" for an added one without a string). */
    public static String getErrorString(int errorCode) throws MPIException {
        return ErrorCodes.string(errorCode);
    }

    /** MPI_ERROR_CLASS: the class of an error code (a predefined code is its own class). */
    public static int getErrorClass(int errorCode) throws MPIException {
        return ErrorCodes.classOf(errorCode);
    }

    static void check() throws MPIException {
        if (!initialized) throw new MPIException("MPI is not initialized.");
        if (finalized) throw new MPIException("MPI is finalized.");
    }

    // ------------------------------------------------------------------ buffered sends

    /** MPI_BUFFER_ATTACH: the space buffered sends may use. */
    public static void attachBuffer(byte[] buffer) throws MPIException {
        if (buffer == null) throw MPIException.of(ERR_BUFFER, "attachBuffer: buffer is null");
        synchronized (LOCK) {
            if (bsendBuffer != null) {
                throw MPIException.of(ERR_BUFFER, "attachBuffer: a buffer is already attached (detach it first)");
            }
            bsendBuffer = buffer;
            bsendUsed = 0;
        }
    }

    // ------------------------------------------------------------------ external32 packing (ext)

    /**
     * MPI_PACK_EXTERNAL *(ext: not in Open MPI's Java bindings)*: packs {@code incount} elements
     * of {@code inbuf} into {@code outbuf} at {@code position} in representation {@code datarep}
     * ("external32": big-endian, no padding); returns the new position. Errors are thrown (no
     * communicator is involved): ERR_ARG for another datarep, ERR_TYPE, ERR_COUNT, ERR_BUFFER,
     * ERR_TRUNCATE when {@code outbuf} has no room.
     */
    public static int packExternal(String datarep, Object inbuf, int incount, Datatype type, byte[] outbuf,
                                   int position) throws MPIException {
        return Packing.pack(inbuf, incount, type, Packing.datarep(datarep, "packExternal"), outbuf, position,
                "packExternal");
    }

    /** MPI_UNPACK_EXTERNAL *(ext)*: the inverse of {@link #packExternal}; returns the new position. */
    public static int unpackExternal(String datarep, byte[] inbuf, int position, Object outbuf, int outcount,
                                     Datatype type) throws MPIException {
        return Packing.unpack(inbuf, position, outbuf, outcount, type, Packing.datarep(datarep, "unpackExternal"),
                "unpackExternal");
    }

    /** MPI_PACK_EXTERNAL_SIZE *(ext)*: bytes {@code incount} elements of {@code type} take in {@code datarep}. */
    public static int packExternalSize(String datarep, int incount, Datatype type) throws MPIException {
        Packing.datarep(datarep, "packExternalSize");
        return Packing.size(incount, type, "packExternalSize");
    }

    /** MPI_BUFFER_DETACH: waits until every buffered message has left, then returns the buffer. */
    public static byte[] detachBuffer() throws MPIException {
        int idle = 0;
        while (true) {
            synchronized (LOCK) {
                if (bsendUsed == 0) {
                    byte[] b = bsendBuffer;
                    bsendBuffer = null;
                    return b;
                }
            }
            Engine e = engine;
            idle = e == null ? Engine.idle(idle) : e.progressOrPause(idle);
        }
    }

    static void reserveBsend(long bytes, String op) throws MPIException {
        synchronized (LOCK) {
            if (bsendBuffer == null) {
                throw MPIException.of(ERR_BUFFER, op + ": no buffer is attached (call MPI.attachBuffer first)");
            }
            if (bsendUsed + bytes > bsendBuffer.length) {
                throw MPIException.of(ERR_BUFFER, op + ": the attached buffer (" + bsendBuffer.length + " bytes, "
                        + bsendUsed + " in use) has no room for " + bytes + " bytes (message + MPI.BSEND_OVERHEAD)");
            }
            bsendUsed += bytes;
        }
    }

    static void releaseBsend(long bytes) {
        synchronized (LOCK) {
            bsendUsed -= bytes;
        }
    }

    // ------------------------------------------------------------------ direct buffers

    /**
     * A direct buffer for communication, in native byte order. From 1 MiB on it is a mapping of
     * its own backed by transparent huge pages where the kernel offers them, which makes large
     * shared-memory transfers about twice as fast (see docs/architecture.md, "Buffers").
     */
    public static ByteBuffer newByteBuffer(int capacity) {
        return DirectBuffers.allocate(capacity);
    }

    public static CharBuffer newCharBuffer(int capacity) {
        return newByteBuffer(Math.multiplyExact(capacity, 2)).asCharBuffer();
    }

    public static ShortBuffer newShortBuffer(int capacity) {
        return newByteBuffer(Math.multiplyExact(capacity, 2)).asShortBuffer();
    }

    public static IntBuffer newIntBuffer(int capacity) {
        return newByteBuffer(Math.multiplyExact(capacity, 4)).asIntBuffer();
    }

    public static LongBuffer newLongBuffer(int capacity) {
        return newByteBuffer(Math.multiplyExact(capacity, 8)).asLongBuffer();
    }

    public static FloatBuffer newFloatBuffer(int capacity) {
        return newByteBuffer(Math.multiplyExact(capacity, 4)).asFloatBuffer();
    }

    public static DoubleBuffer newDoubleBuffer(int capacity) {
        return newByteBuffer(Math.multiplyExact(capacity, 8)).asDoubleBuffer();
    }

    // ------------------------------------------------------------------ slices

    public static ByteBuffer slice(ByteBuffer buf, int offset) {
        ByteOrder order = buf.order();
        return buf.duplicate().position(offset).slice().order(order);
    }

    public static CharBuffer slice(CharBuffer buf, int offset) {
        return buf.duplicate().position(offset).slice();
    }

    public static ShortBuffer slice(ShortBuffer buf, int offset) {
        return buf.duplicate().position(offset).slice();
    }

    public static IntBuffer slice(IntBuffer buf, int offset) {
        return buf.duplicate().position(offset).slice();
    }

    public static LongBuffer slice(LongBuffer buf, int offset) {
        return buf.duplicate().position(offset).slice();
    }

    public static FloatBuffer slice(FloatBuffer buf, int offset) {
        return buf.duplicate().position(offset).slice();
    }

    public static DoubleBuffer slice(DoubleBuffer buf, int offset) {
        return buf.duplicate().position(offset).slice();
    }

    public static ByteBuffer slice(byte[] buf, int offset) {
        return ByteBuffer.wrap(buf, offset, buf.length - offset).slice().order(ByteOrder.nativeOrder());
    }

    public static CharBuffer slice(char[] buf, int offset) {
        return CharBuffer.wrap(buf, offset, buf.length - offset).slice();
    }

    public static ShortBuffer slice(short[] buf, int offset) {
        return ShortBuffer.wrap(buf, offset, buf.length - offset).slice();
    }

    public static IntBuffer slice(int[] buf, int offset) {
        return IntBuffer.wrap(buf, offset, buf.length - offset).slice();
    }

    public static LongBuffer slice(long[] buf, int offset) {
        return LongBuffer.wrap(buf, offset, buf.length - offset).slice();
    }

    public static FloatBuffer slice(float[] buf, int offset) {
        return FloatBuffer.wrap(buf, offset, buf.length - offset).slice();
    }

    public static DoubleBuffer slice(double[] buf, int offset) {
        return DoubleBuffer.wrap(buf, offset, buf.length - offset).slice();
    }

    // ------------------------------------------------------------------ FT-MPI recovery (extension)
    // Seed 001, Appendix A; docs/fault-tolerance.md, "Recovery". The modes are chosen per job with
    // ftmpirun --comm-mode/--recovery-mode/--msg-mode/--coll-mode; readable as the FTMPI_* attributes
    // of MPI.COMM_WORLD and MPI.COMM_SELF (and their duplicates) and through the getters below.

    /** FT-MPI communicator modes (FTMPI_COMM_MODE): what a recovery makes of MPI.COMM_WORLD. */
    public static final int FTMPI_COMM_MODE_ABORT = 0, FTMPI_COMM_MODE_REBUILD = 1, FTMPI_COMM_MODE_BLANK = 2,
            FTMPI_COMM_MODE_SHRINK = 3;
    /** FT-MPI message modes (FTMPI_MSG_MODE). */
    public static final int FTMPI_MSG_MODE_RESET = 0, FTMPI_MSG_MODE_CONT = 1;
    /** FT-MPI recovery modes (FTMPI_RECOVERY_MODE). */
    public static final int FTMPI_RECOVERY_MODE_AUTO = 0, FTMPI_RECOVERY_MODE_MANUAL = 1,
            FTMPI_RECOVERY_MODE_IGNORE = 2;
    /** FT-MPI collective modes (FTMPI_COLL_MODE). */
    public static final int FTMPI_COLL_MODE_ATOMIC = 0, FTMPI_COLL_MODE_NONATOMIC = 1;
    /**
     * FT-MPI attribute keys (spec 6.1), read with {@code MPI.COMM_WORLD.getAttr(key)} (an {@code
     * Integer}; read-only): the four modes; the number of processes the last recovery covered;
     * an error code whose {@link #getErrorString} names their ranks (MPI.SUCCESS before any
     * recovery). The last two are replaced at every recovery.
     */
    public static final int FTMPI_RECOVERY_MODE = 16, FTMPI_COMM_MODE = 17, FTMPI_MSG_MODE = 18, FTMPI_COLL_MODE = 19,
            FTMPI_NUM_FAILED_PROCS = 20, FTMPI_ERROR_FAILURE = 21;

    private static Recovery recovery() throws MPIException {
        check();
        return COMM_WORLD.recovery;
    }

    /** This job's communicator mode, one of {@code FTMPI_COMM_MODE_*} (attribute FTMPI_COMM_MODE). */
    public static int getCommMode() throws MPIException {
        return recovery().commMode;
    }

    /** This job's message mode, one of {@code FTMPI_MSG_MODE_*} (attribute FTMPI_MSG_MODE). */
    public static int getMsgMode() throws MPIException {
        return recovery().msgMode;
    }

    /** This job's recovery mode, one of {@code FTMPI_RECOVERY_MODE_*} (attribute FTMPI_RECOVERY_MODE). */
    public static int getRecoveryMode() throws MPIException {
        return recovery().recoveryMode;
    }

    /** This job's collective mode, one of {@code FTMPI_COLL_MODE_*} (attribute FTMPI_COLL_MODE). */
    public static int getCollMode() throws MPIException {
        return recovery().collMode;
    }

    /**
     * Starts the FT-MPI recovery (recovery mode MANUAL; the specification's form is {@code
     * MPI.COMM_WORLD.dup()}, which does the same): the survivors agree on the failed processes,
     * MPI.COMM_WORLD and MPI.COMM_SELF are rebuilt in a new epoch, every other communicator is
     * invalidated, the recovery listeners run. Collective over the survivors; returns at once
     * when no failure awaits recovery.
     */
    public static void recover() throws MPIException {
        Recovery r = recovery();
        try {
            r.run();
        } catch (MPIException e) {
            throw COMM_WORLD.handle(e);
        }
    }

    /** Registers a callback that runs at the end of every recovery, after those registered before it. */
    public static void addRecoveryListener(org.ftmpi.ft.RecoveryListener listener) throws MPIException {
        if (listener == null) throw MPIException.of(ERR_ARG, "addRecoveryListener: listener is null");
        recovery().addListener(listener);
    }

    /** Removes a recovery listener; returns whether it was registered. */
    public static boolean removeRecoveryListener(org.ftmpi.ft.RecoveryListener listener) throws MPIException {
        return recovery().removeListener(listener);
    }

    /**
     * Ranks, in MPI.COMM_WORLD as it was before the last recovery, of the processes whose failure
     * that recovery covered (what attribute FTMPI_ERROR_FAILURE names); empty before any.
     */
    public static int[] getFailedRanks() throws MPIException {
        return recovery().lastFailed();
    }

    /** How many processes failed since the last recovery (attribute FTMPI_NUM_FAILED_PROCS). */
    public static int getNumFailedProcs() throws MPIException {
        return recovery().lastFailed().length;
    }

    /**
     * Message mode CONT: the receives from {@code MPI.ANY_SOURCE} that were still pending when
     * the last recovery ran (spec 5.1: the library cannot tell whether a failed process would have
     * matched them). They stay active: wait for them, or {@link Request#cancel()} them. Empty
     * before any recovery and under RESET (which discards every pending receive).
     */
    public static Request[] getUnresolvedRequests() throws MPIException {
        return recovery().unresolved();
    }

    /**
     * Whether this process replaces a failed one (comm-mode REBUILD): the Java form of MPI_Init
     * returning MPI_INIT_RESTARTED_NODE.
     */
    public static boolean isRestarted() throws MPIException {
        return recovery().engine.isRestarted();
    }

    /** FT-MPI state of a communicator (seed 004, section 3). */
    public static org.ftmpi.ft.CommState getCommState(Comm comm) throws MPIException {
        if (comm == null) throw MPIException.of(ERR_COMM, "getCommState: comm is null");
        return recovery().stateOf(comm);
    }

    /** FT-MPI state of the process of rank {@code rank} in the job's initial MPI.COMM_WORLD. */
    public static org.ftmpi.ft.ProcState getProcState(int rank) throws MPIException {
        Recovery r = recovery();
        if (rank < 0 || rank >= r.engine.size()) {
            throw MPIException.of(ERR_RANK, "getProcState: rank " + rank + " is not a rank of the job (size "
                    + r.engine.size() + ")");
        }
        return r.procState(rank);
    }
}
