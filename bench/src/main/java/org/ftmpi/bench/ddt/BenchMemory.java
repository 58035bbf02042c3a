package org.ftmpi.bench.ddt;

import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Native benchmark buffers allocated exactly as {@code bench/peers/ddt/pack_bench.c} allocates
 * its buffers: each its own anonymous {@code mmap}, 2 MiB-aligned, advised {@code MADV_HUGEPAGE}
 * or {@code MADV_NOHUGEPAGE}, so both harnesses get the same page size whatever the host's
 * transparent-huge-page default is (Linux x86-64 constants). Heap arrays get their page size from
 * the JVM ({@code -XX:+/-UseTransparentHugePages}); {@link #hugeKb()} reports what the process got.
 */
final class BenchMemory implements AutoCloseable {
    static final long HUGE_PAGE = 2L << 20;
    private static final int PROT_RW = 0x3, MAP_PRIVATE_ANON = 0x22, MADV_HUGEPAGE = 14, MADV_NOHUGEPAGE = 15;
    private static final Linker C = Linker.nativeLinker();
    private static final MethodHandle MMAP = C.downcallHandle(C.defaultLookup().findOrThrow("mmap"),
            FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
    private static final MethodHandle MADVISE = C.downcallHandle(C.defaultLookup().findOrThrow("madvise"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
    private static final MethodHandle MUNMAP = C.downcallHandle(C.defaultLookup().findOrThrow("munmap"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));

    private final MemorySegment base;
    private final long length;
    /** {@code bytes} at {@code offset} past a 2 MiB boundary of this mapping. */
    final MemorySegment segment;

    BenchMemory(long bytes, long offset, boolean huge) {
        length = (bytes + offset + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE + HUGE_PAGE;
        base = (MemorySegment) call(MMAP, MemorySegment.NULL, length, PROT_RW, MAP_PRIVATE_ANON, -1, 0L);
        if (base.address() == -1L) {
            throw new IllegalStateException("mmap of " + length + " bytes failed");
        }
        if ((int) call(MADVISE, base, length, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0) {
            throw new IllegalStateException("madvise failed");
        }
        long aligned = (base.address() + HUGE_PAGE - 1) & -HUGE_PAGE;
        segment = MemorySegment.ofAddress(aligned + offset).reinterpret(bytes);
    }

    @Override
    public void close() {
        if ((int) call(MUNMAP, base, length) != 0) {
            throw new IllegalStateException("munmap failed");
        }
    }

    private static Object call(MethodHandle h, Object... args) {
        try {
            return h.invokeWithArguments(args);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** AnonHugePages of this process in KiB ({@code /proc/self/smaps_rollup}), -1 if unknown. */
    static long hugeKb() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/smaps_rollup"))) {
                if (line.startsWith("AnonHugePages:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }
}
