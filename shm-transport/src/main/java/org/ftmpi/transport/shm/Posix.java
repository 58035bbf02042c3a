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

    /**
     * Scratch memory for one {@link #processVmRead} caller: {@link #IOVECS} pairs of iovecs
     * (local, remote; entry i of both has the same length) and the errno state.
     */
    static final class CmaScratch {
        /** Largest number of pieces one {@link #processVmReadv} call takes. */
        static final int IOVECS = 64;
        private static final int IOVEC_BYTES = 16;
        final MemorySegment local;
        final MemorySegment remote;
        final MemorySegment state;

        CmaScratch(Arena arena) {
            local = arena.allocate((long) IOVECS * IOVEC_BYTES, 8);
            remote = arena.allocate((long) IOVECS * IOVEC_BYTES, 8);
            state = arena.allocate(CALL_STATE);
        }

        /** Sets piece {@code i}: {@code length} bytes from {@code remoteAddress} to {@code localAddress}. */
        void piece(int i, long localAddress, long remoteAddress, long length) {
            long at = (long) i * IOVEC_BYTES;
            local.set(ValueLayout.JAVA_LONG, at, localAddress);
            local.set(ValueLayout.JAVA_LONG, at + 8, length);
            remote.set(ValueLayout.JAVA_LONG, at, remoteAddress);
            remote.set(ValueLayout.JAVA_LONG, at + 8, length);
        }
    }

    /**
     * Copies {@code length} bytes at {@code remoteAddress} in process {@code pid} into
     * {@code dst} (native memory) with {@code process_vm_readv}, looping over partial reads.
     *
     * @return 0 on success, else the errno of the failing call (or -1 if no byte moved)
     */
    static int processVmRead(CmaScratch s, long pid, MemorySegment dst, long remoteAddress, long length) {
        s.piece(0, dst.address(), remoteAddress, length);
        return processVmReadv(s, pid, 1);
    }

    /**
     * Reads the first {@code count} pieces set in {@code s} ({@link CmaScratch#piece}) from
     * process {@code pid} with one {@code process_vm_readv} call, and more only when the kernel
     * stops early (a partial read resumes at the first byte not read; the call that then fails
     * gives the errno). Rewrites the pieces it resumes.
     *
     * @return 0 on success, else the errno of the failing call (or -1 if no byte moved)
     */
    static int processVmReadv(CmaScratch s, long pid, int count) {
        if (count < 1 || count > CmaScratch.IOVECS) {
            throw new IllegalArgumentException("count " + count + " is not between 1 and " + CmaScratch.IOVECS);
        }
        int first = 0;
        try {
            while (first < count) {
                long at = (long) first * CmaScratch.IOVEC_BYTES;
                MemorySegment local = first == 0 ? s.local : s.local.asSlice(at);
                MemorySegment remote = first == 0 ? s.remote : s.remote.asSlice(at);
                long n = (long) PROCESS_VM_READV.invokeExact(s.state, (int) pid, local, (long) (count - first),
                        remote, (long) (count - first), 0L);
                if (n < 0) return (int) ERRNO.get(s.state, 0L);
                if (n == 0) return -1;
                while (first < count && n > 0) { // skip the pieces read whole, shorten the one read in part
                    long pieceAt = (long) first * CmaScratch.IOVEC_BYTES;
                    long len = s.local.get(ValueLayout.JAVA_LONG, pieceAt + 8);
                    if (n >= len) {
                        n -= len;
                        first++;
                    } else {
                        s.piece(first, s.local.get(ValueLayout.JAVA_LONG, pieceAt) + n,
                                s.remote.get(ValueLayout.JAVA_LONG, pieceAt) + n, len - n);
                        n = 0;
                    }
                }
            }
            return 0;
        } catch (Throwable t) {
            throw new IllegalStateException("process_vm_readv through FFM failed", t);
        }
    }
}
