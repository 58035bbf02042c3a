package org.ftmpi.transport.shm;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;

/**
 * The few libc calls the transport needs, through the JDK FFM API ({@code java.lang.foreign}):
 * {@code open}/{@code posix_fallocate}/{@code close} to reserve a file's space up front, and
 * Linux {@code process_vm_readv} (cross-memory attach) for single-copy transfers.
 * {@link #UNAVAILABLE} says why, when this platform has none of them.
 *
 * <p><b>Note:</b> stateless; thread-safe.
 */
final class Posix {
    static final int O_RDWR = 2;
    static final int EPERM = 1;
    static final int ESRCH = 3;
    static final int ENOSPC = 28;
    static final int EFBIG = 27;

    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    private static final MethodHandle OPEN, CLOSE, FALLOCATE, PROCESS_VM_READV;
    /** Why these calls cannot be made here, or null. */
    static final String UNAVAILABLE;

    static {
        MethodHandle open = null, close = null, fallocate = null, readv = null;
        String cause = null;
        try {
            Linker linker = Linker.nativeLinker();
            SymbolLookup libc = linker.defaultLookup();
            open = linker.downcallHandle(libc.find("open").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT,
                            ValueLayout.JAVA_INT), Linker.Option.firstVariadicArg(2));
            close = linker.downcallHandle(libc.find("close").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
            fallocate = linker.downcallHandle(libc.find("posix_fallocate").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
                            ValueLayout.JAVA_LONG));
            readv = linker.downcallHandle(libc.find("process_vm_readv").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                            ValueLayout.JAVA_LONG, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG),
                    Linker.Option.captureCallState("errno"));
        } catch (RuntimeException | LinkageError e) {
            cause = "libc calls unavailable through FFM: " + e;
        }
        OPEN = open;
        CLOSE = close;
        FALLOCATE = fallocate;
        PROCESS_VM_READV = readv;
        UNAVAILABLE = cause;
    }

    private Posix() {}

    /**
     * Reserves {@code bytes} of backing store for the file (posix_fallocate), so that a full
     * file system fails here rather than with SIGBUS at the first touch of a mapped page.
     *
     * @return 0, or the error number
     */
    static int fallocate(Path file, long bytes) {
        try (Arena a = Arena.ofConfined()) {
            int fd = (int) OPEN.invokeExact(a.allocateFrom(file.toString()), O_RDWR, 0);
            if (fd < 0) return EPERM;
            int rc = (int) FALLOCATE.invokeExact(fd, 0L, bytes);
            int ignored = (int) CLOSE.invokeExact(fd);
            return rc;
        } catch (Throwable t) {
            throw new IllegalStateException("posix_fallocate through FFM failed", t);
        }
    }

    /** Scratch memory for one {@link #processVmRead} caller: two iovecs and the errno state. */
    static final class CmaScratch {
        final MemorySegment local;
        final MemorySegment remote;
        final MemorySegment state;

        CmaScratch(Arena arena) {
            local = arena.allocate(16, 8);
            remote = arena.allocate(16, 8);
            state = arena.allocate(CALL_STATE);
        }
    }

    /**
     * Copies {@code length} bytes at {@code remoteAddress} in process {@code pid} into
     * {@code dst} (native memory) with {@code process_vm_readv}, looping over partial reads.
     *
     * @return 0 on success, else the errno of the failing call (or -1 if no byte moved)
     */
    static int processVmRead(CmaScratch s, long pid, MemorySegment dst, long remoteAddress, long length) {
        long done = 0;
        try {
            while (done < length) {
                s.local.set(ValueLayout.JAVA_LONG, 0, dst.address() + done);
                s.local.set(ValueLayout.JAVA_LONG, 8, length - done);
                s.remote.set(ValueLayout.JAVA_LONG, 0, remoteAddress + done);
                s.remote.set(ValueLayout.JAVA_LONG, 8, length - done);
                long n = (long) PROCESS_VM_READV.invokeExact(s.state, (int) pid, s.local, 1L, s.remote, 1L, 0L);
                if (n < 0) return (int) ERRNO.get(s.state, 0L);
                if (n == 0) return -1;
                done += n;
            }
            return 0;
        } catch (Throwable t) {
            throw new IllegalStateException("process_vm_readv through FFM failed", t);
        }
    }
}
