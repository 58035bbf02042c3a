package org.ftmpi.runtime;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The shared-memory file of the robust-futex death watch ({@link DeathWatch}): one robust,
 * process-shared pthread mutex per process of the job, held for its whole life by a thread of
 * that process. When the process dies the kernel marks the mutex FUTEX_OWNER_DIED and wakes the
 * controller's waiter <em>before</em> it tears the process's memory down (see
 * docs/fault-tolerance.md, "How fast a SIGKILL is seen"). Layout (little-endian, 64-byte lines):
 *
 * <pre>
 *   0                   8          12         16                       64
 *   +-------------------+----------+----------+------------------------+
 *   | magic "FTMPIDW1"  | slots    | slotBytes| (zero)                 |   header
 *   +-------------------+----------+----------+------------------------+
 *   slot i at 64 + 64 * i (slot = process id - 1):
 *   0                                      48       52       56               64
 *   +--------------------------------------+--------+--------+----------------+
 *   | pthread_mutex_t (40 B on glibc x86_64,| state  | pid    | process id     |
 *   |  at most 48), robust + pshared        |        |        |                |
 *   +--------------------------------------+--------+--------+----------------+
 * </pre>
 * {@code state}: {@link #FREE} as created; {@link #HELD} once the process holds the mutex (a
 * release store after the lock, before the process registers with the controller);
 * {@link #EXITING} from its shutdown hook: an exit (System.exit, end of main, SIGTERM) is then
 * not taken for a death, and its status comes from waitpid as before.
 *
 * <p>Libc ({@code pthread_mutex_*}) through the JDK FFM API. {@link #UNAVAILABLE} says why the
 * calls cannot be made here (not Linux, no such symbols), else null.
 *
 * <p><b>Note:</b> a file object is thread-safe; each slot has one holder thread (in its process)
 * and at most one watcher thread (in the controller).
 */
final class DeathWatchFile {
    static final long MAGIC = 0x3157_4449_504d_5446L; // "FTMPIDW1" little-endian
    static final int HEADER_BYTES = 64;
    static final int SLOT_BYTES = 64;
    static final int MUTEX_MAX_BYTES = 48;
    static final int STATE_OFFSET = 48;
    static final int PID_OFFSET = 52;
    static final int PROC_ID_OFFSET = 56;
    static final int FREE = 0, HELD = 1, EXITING = 2;
    /** glibc/Linux: pthread_mutexattr_setpshared / setrobust values and pthread_mutex_lock results. */
    static final int PTHREAD_PROCESS_SHARED = 1, PTHREAD_MUTEX_ROBUST = 1;
    static final int EBUSY = 16, EOWNERDEAD = 130, ENOTRECOVERABLE = 131;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static final MethodHandle ATTR_INIT, ATTR_PSHARED, ATTR_ROBUST, MUTEX_INIT, LOCK, TRYLOCK, UNLOCK, CONSISTENT;
    static final String UNAVAILABLE;

    static {
        MethodHandle[] h = new MethodHandle[8];
        String cause = null;
        if (!System.getProperty("os.name", "").startsWith("Linux")) {
            cause = "not Linux";
        } else {
            try {
                Linker linker = Linker.nativeLinker();
                SymbolLookup libc = linker.defaultLookup();
                FunctionDescriptor p = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS);
                FunctionDescriptor pi = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT);
                FunctionDescriptor pp = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS);
                String[] names = {"pthread_mutexattr_init", "pthread_mutexattr_setpshared", "pthread_mutexattr_setrobust",
                    "pthread_mutex_init", "pthread_mutex_lock", "pthread_mutex_trylock", "pthread_mutex_unlock",
                    "pthread_mutex_consistent"};
                FunctionDescriptor[] fds = {p, pi, pi, pp, p, p, p, p};
                for (int i = 0; i < names.length; i++) {
                    String name = names[i];
                    h[i] = linker.downcallHandle(libc.find(name).orElseThrow(
                            () -> new UnsatisfiedLinkError("no " + name + " in libc")), fds[i]);
                }
            } catch (RuntimeException | LinkageError e) {
                cause = "libc pthread calls unavailable through FFM: " + e.getMessage();
            }
        }
        ATTR_INIT = h[0];
        ATTR_PSHARED = h[1];
        ATTR_ROBUST = h[2];
        MUTEX_INIT = h[3];
        LOCK = h[4];
        TRYLOCK = h[5];
        UNLOCK = h[6];
        CONSISTENT = h[7];
        UNAVAILABLE = cause;
    }

    private final Path path;
    private final MemorySegment map;
    private final int slots;

    private DeathWatchFile(Path path, MemorySegment map, int slots) {
        this.path = path;
        this.map = map;
        this.slots = slots;
    }

    /** Creates the file (mode 0600, must not exist) with {@code slots} initialised robust mutexes. */
    static DeathWatchFile create(Path path, int slots) throws IOException {
        if (UNAVAILABLE != null) throw new IOException(UNAVAILABLE);
        if (slots < 1) throw new IllegalArgumentException("slots: " + slots);
        Files.createFile(path, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        long size = HEADER_BYTES + (long) SLOT_BYTES * slots;
        MemorySegment m;
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            m = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, Arena.ofAuto());
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(64, 8);
            check("pthread_mutexattr_init", (int) ATTR_INIT.invokeExact(attr));
            check("pthread_mutexattr_setpshared", (int) ATTR_PSHARED.invokeExact(attr, PTHREAD_PROCESS_SHARED));
            check("pthread_mutexattr_setrobust", (int) ATTR_ROBUST.invokeExact(attr, PTHREAD_MUTEX_ROBUST));
            for (int i = 0; i < slots; i++) {
                check("pthread_mutex_init", (int) MUTEX_INIT.invokeExact(m.asSlice(slotOffset(i), MUTEX_MAX_BYTES), attr));
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException("pthread call through FFM failed", t);
        }
        m.set(INT, 8, slots);
        m.set(INT, 12, SLOT_BYTES);
        m.set(LONG, 0, MAGIC);
        m.force();
        return new DeathWatchFile(path, m, slots);
    }

    /** Maps an existing file created by {@link #create}. */
    static DeathWatchFile open(Path path) throws IOException {
        if (UNAVAILABLE != null) throw new IOException(UNAVAILABLE);
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long size = ch.size();
            if (size < HEADER_BYTES) throw new IOException(path + ": too short for a death-watch file");
            MemorySegment m = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, Arena.ofAuto());
            int slots = m.get(INT, 8);
            if (m.get(LONG, 0) != MAGIC || m.get(INT, 12) != SLOT_BYTES || slots < 1
                    || HEADER_BYTES + (long) SLOT_BYTES * slots > size) {
                throw new IOException(path + ": not a death-watch file");
            }
            return new DeathWatchFile(path, m, slots);
        }
    }

    Path path() {
        return path;
    }

    int slots() {
        return slots;
    }

    private static long slotOffset(int slot) {
        return HEADER_BYTES + (long) SLOT_BYTES * slot;
    }

    private MemorySegment mutex(int slot) {
        return map.asSlice(slotOffset(checkSlot(slot)), MUTEX_MAX_BYTES);
    }

    private int checkSlot(int slot) {
        if (slot < 0 || slot >= slots) throw new IllegalArgumentException("slot " + slot + " of " + slots);
        return slot;
    }

    int state(int slot) {
        return (int) ValueLayout.JAVA_INT.varHandle().getAcquire(map, slotOffset(checkSlot(slot)) + STATE_OFFSET);
    }

    void setStateRelease(int slot, int state) {
        ValueLayout.JAVA_INT.varHandle().setRelease(map, slotOffset(checkSlot(slot)) + STATE_OFFSET, state);
    }

    int pid(int slot) {
        return map.get(INT, slotOffset(checkSlot(slot)) + PID_OFFSET);
    }

    long procId(int slot) {
        return map.get(LONG, slotOffset(checkSlot(slot)) + PROC_ID_OFFSET);
    }

    /**
     * Holder side: takes the slot's mutex without waiting and records who holds it; returns 0,
     * or pthread_mutex_trylock's error (EBUSY when somebody holds it already). The calling
     * thread must live as long as the process: the kernel releases the mutex as "owner died"
     * when that thread ends.
     */
    int tryHold(int slot, long pid, long procId) {
        int rc = call(TRYLOCK, mutex(slot));
        if (rc == 0) {
            long base = slotOffset(slot);
            map.set(INT, base + PID_OFFSET, (int) pid);
            map.set(LONG, base + PROC_ID_OFFSET, procId);
            setStateRelease(slot, HELD);
        }
        return rc;
    }

    /**
     * Watcher side: blocks until the holder is gone; returns pthread_mutex_lock's result
     * ({@link #EOWNERDEAD} when the holding thread ended without unlocking). The mutex is made
     * consistent and released again before returning, so it never stays locked by the watcher.
     */
    int awaitRelease(int slot) {
        MemorySegment mx = mutex(slot);
        int rc = call(LOCK, mx);
        if (rc == EOWNERDEAD) call(CONSISTENT, mx);
        if (rc == 0 || rc == EOWNERDEAD) call(UNLOCK, mx);
        return rc;
    }

    private static int call(MethodHandle h, MemorySegment mx) {
        try {
            return (int) h.invokeExact(mx);
        } catch (Throwable t) {
            throw new IllegalStateException("pthread call through FFM failed", t);
        }
    }

    private static void check(String what, int rc) throws IOException {
        if (rc != 0) throw new IOException(what + " failed with error " + rc);
    }
}
