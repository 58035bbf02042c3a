package mpi;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Memory behind {@link MPI#newByteBuffer}: a buffer of at least {@link #HUGE_MIN_BYTES} is an
 * anonymous mapping of its own, 2 MiB-aligned, rounded up to whole 2 MiB pages and marked
 * {@code MADV_HUGEPAGE}, so that the kernel backs it with transparent huge pages when it offers
 * them ({@code [madvise]} or {@code [always]} in {@code /sys/kernel/mm/transparent_hugepage/enabled}).
 * At most {@link #MAPPED_LIMIT_BYTES} are mapped at a time (then {@code allocateDirect} again).
 * A large message then moves about twice as fast over shared memory: {@code process_vm_readv}
 * pins and walks the sender's pages one 4 KiB page at a time, which costs more than the copy
 * itself, and a huge page is one folio (C, 4 MiB read into this process on this 2-vCPU VM,
 * CPU time: 8.5 GB/s with 4 KiB pages, 22.8 GB/s with huge pages; docs/benchmarks.md, "Issue 3,
 * session 7"). Smaller buffers, other kernels, or {@code -Dftmpi.hugePageBuffers=false}: a plain
 * {@link ByteBuffer#allocateDirect}. The mapping is unmapped when the buffer is unreachable (an
 * automatic arena, as {@code allocateDirect}'s cleaner does).
 *
 * <p><b>Note:</b> stateless; thread-safe.
 */
final class DirectBuffers {
    /** Smallest capacity given its own huge-page mapping (at most half of it is then unused). */
    static final int HUGE_MIN_BYTES = 1 << 20;
    static final long HUGE_PAGE_BYTES = 2L << 20;

    private static final int PROT_READ = 1, PROT_WRITE = 2, MAP_PRIVATE = 2, MAP_ANONYMOUS = 0x20;
    private static final int MADV_HUGEPAGE = 14;
    private static final MethodHandle MMAP, MUNMAP, MADVISE;
    /** Whether large buffers get huge-page mappings in this process. */
    static final boolean HUGE;

    static {
        MethodHandle mmap = null, munmap = null, madvise = null;
        boolean huge = false;
        try {
            if (!"false".equals(System.getProperty("ftmpi.hugePageBuffers")) && thpOffered()) {
                Linker linker = Linker.nativeLinker();
                SymbolLookup libc = linker.defaultLookup();
                mmap = linker.downcallHandle(libc.find("mmap").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                                ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
                munmap = linker.downcallHandle(libc.find("munmap").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
                madvise = linker.downcallHandle(libc.find("madvise").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                                ValueLayout.JAVA_INT));
                huge = true;
            }
        } catch (RuntimeException | LinkageError e) {
            huge = false; // no FFM, no libc symbols, native access denied: plain direct buffers
        }
        MMAP = mmap;
        MUNMAP = munmap;
        MADVISE = madvise;
        HUGE = huge;
    }

    private DirectBuffers() {}

    private static boolean thpOffered() {
        try {
            String s = Files.readString(Path.of("/sys/kernel/mm/transparent_hugepage/enabled"));
            return s.contains("[madvise]") || s.contains("[always]");
        } catch (java.io.IOException | SecurityException e) {
            return false;
        }
    }

    /** A direct buffer of {@code capacity} bytes in native byte order, position 0, limit = capacity. */
    static ByteBuffer allocate(int capacity) {
        if (HUGE && capacity >= HUGE_MIN_BYTES) {
            ByteBuffer b = hugeOrNull(capacity);
            if (b != null) return b;
        }
        return ByteBuffer.allocateDirect(capacity).order(ByteOrder.nativeOrder());
    }

    /**
     * Bytes mapped for buffers that are not yet collected. Above {@link #MAPPED_LIMIT_BYTES}
     * new buffers come from {@code allocateDirect}, whose own limit makes the JVM collect
     * unreachable buffers (a program that drops large buffers in a loop allocates little heap
     * and might otherwise never trigger the collection that unmaps them).
     */
    private static final AtomicLong MAPPED = new AtomicLong();
    /** The default of {@code -XX:MaxDirectMemorySize}: the maximum heap size. */
    static final long MAPPED_LIMIT_BYTES = Runtime.getRuntime().maxMemory();

    /** A huge-page mapping of {@code capacity} bytes, or null when the kernel refused the mapping. */
    private static ByteBuffer hugeOrNull(int capacity) {
        long mapped = (capacity + HUGE_PAGE_BYTES - 1) & -HUGE_PAGE_BYTES;
        long reserve = mapped + HUGE_PAGE_BYTES; // room to align the start to 2 MiB
        if (MAPPED.addAndGet(mapped) > MAPPED_LIMIT_BYTES) {
            MAPPED.addAndGet(-mapped);
            return null;
        }
        try {
            long raw = (long) MMAP.invokeExact(0L, reserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0L);
            if (raw == -1L) {
                MAPPED.addAndGet(-mapped);
                return null;
            }
            long start = (raw + HUGE_PAGE_BYTES - 1) & -HUGE_PAGE_BYTES;
            unmap(raw, start - raw); // the alignment slack on both sides
            unmap(start + mapped, raw + reserve - start - mapped);
            int rc = (int) MADVISE.invokeExact(start, mapped, MADV_HUGEPAGE); // a hint: failure leaves 4 KiB pages
            MemorySegment seg = MemorySegment.ofAddress(start).reinterpret(mapped, Arena.ofAuto(), s -> {
                unmap(start, mapped);
                MAPPED.addAndGet(-mapped);
            });
            return seg.asSlice(0, capacity).asByteBuffer().order(ByteOrder.nativeOrder());
        } catch (Throwable t) {
            MAPPED.addAndGet(-mapped);
            return null;
        }
    }

    private static void unmap(long address, long bytes) {
        if (bytes == 0) return;
        try {
            int rc = (int) MUNMAP.invokeExact(address, bytes);
        } catch (Throwable t) {
            // nothing to do: the mapping stays until the process ends
        }
    }
}
