package org.ftmpi.bench.ddt;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.ftmpi.ddt.Buffers;
import org.ftmpi.ddt.Convertor;

/**
 * Plain timing harness with the exact method of {@code bench/peers/ddt/pack_bench.c}, so
 * {@code compare.sh} can put the two side by side: native buffers from {@link BenchMemory}
 * (the same mmap, alignment and page-size advice as the C side; the user array is a heap
 * {@code double[]}, whose page size the JVM's {@code -XX:+/-UseTransparentHugePages} decides,
 * moved to the old generation before timing so that it stays put as C's buffer does),
 * warm-up of two rounds each of pack, unpack, copy of >= 300 ms, then the median of 5 rounds of
 * >= 100 ms of this thread's CPU time each, 64 operations per clock read (CPU time because the
 * machine is shared and wall time would count waiting for a core). Each operation creates a
 * convertor (as MPI_Pack sets one up) and packs the whole message from the user buffer into a
 * native transport segment, or unpacks it back. {@code compare.sh} runs it with a fixed, pre-touched
 * heap ({@code -Xms512m -Xmx512m -XX:+AlwaysPreTouch}): a heap growing during the timing takes its
 * page faults in this thread's CPU time, and on 2 MiB pages (zeroing, compaction) that cost the
 * col64 layout up to 5x in single rounds (docs/datatypes.md, session 9).
 * Output: {@code layout <name> bytes <B> pack_MBps <x> unpack_MBps <y> memcpy_MBps <z> huge_kB <h>}.
 * Usage: {@code java -cp benchmarks.jar org.ftmpi.bench.ddt.DdtPackHarness [-H] [layout...]}
 * ({@code -H}: native buffers on 2 MiB pages).
 */
public final class DdtPackHarness {
    private static final int ROUNDS = 5;
    private static final long MIN_NS = 100_000_000L;
    private static final long WARM_NS = 300_000_000L;
    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();
    private static int sink;

    private DdtPackHarness() {
    }

    public static void main(String[] args) {
        boolean huge = Arrays.asList(args).contains("-H");
        String[] names = Arrays.stream(args).filter(a -> !a.startsWith("-")).toArray(String[]::new);
        for (String name : names.length > 0 ? names : DdtLayouts.NAMES) {
            List<BenchMemory> maps = new ArrayList<>();
            DdtLayouts.Layout l = DdtLayouts.create(name, n -> {
                BenchMemory m = new BenchMemory(n, 16, huge);
                maps.add(m);
                return m.segment.asByteBuffer();
            });
            // The user array to the old generation now, so that it stays put during the timing as C's
            // buffer does (young collections, one every ~0.5 s from the per-operation convertors,
            // would copy it between survivor regions).
            System.gc();
            try (BenchMemory packedMap = new BenchMemory(l.bytes() + 64, 0, huge)) {
                MemorySegment packed = packedMap.segment;
                for (int w = 0; w < 2; w++) {
                    for (int mode = 0; mode < 3; mode++) {
                        measure(mode, l, packed, WARM_NS);
                    }
                }
                double p = median(0, l, packed), u = median(1, l, packed), m = median(2, l, packed);
                System.out.printf("layout %s bytes %d pack_MBps %.1f unpack_MBps %.1f memcpy_MBps %.1f huge_kB %d%n",
                        name, l.bytes(), p, u, m, BenchMemory.hugeKb());
            } finally {
                maps.forEach(BenchMemory::close);
            }
        }
        if (sink == 42) {
            System.out.print("");
        }
    }

    private static double median(int mode, DdtLayouts.Layout l, MemorySegment packed) {
        double[] r = new double[ROUNDS];
        for (int k = 0; k < ROUNDS; k++) {
            r[k] = measure(mode, l, packed, MIN_NS);
        }
        Arrays.sort(r);
        return r[ROUNDS / 2];
    }

    /** One timed round; each mode has its own loop so the JIT profiles them separately. */
    private static double measure(int mode, DdtLayouts.Layout l, MemorySegment packed, long minNs) {
        return switch (mode) {
            case 0 -> timePack(l, packed, minNs);
            case 1 -> timeUnpack(l, packed, minNs);
            default -> timeCopy(l, packed, minNs);
        };
    }

    /** The byte pack_bench.c reads after each operation (its sink), so both do the same work. */
    private static void touch(MemorySegment packed, int j, long bytes) {
        sink += packed.get(ValueLayout.JAVA_BYTE, j % bytes);
    }

    private static double timePack(DdtLayouts.Layout l, MemorySegment packed, long minNs) {
        long bytes = l.bytes(), iters = 0;
        long t0 = CPU.getCurrentThreadCpuTime(), t1;
        do {
            for (int j = 0; j < 64; j++) {
                Convertor.forPack(l.type(), l.count(), l.user(), 0).packNext(packed, 0, bytes);
                touch(packed, j, bytes);
            }
            iters += 64;
            t1 = CPU.getCurrentThreadCpuTime();
        } while (t1 - t0 < minNs);
        return (double) bytes * iters / ((t1 - t0) / 1e9) / 1e6;
    }

    private static double timeUnpack(DdtLayouts.Layout l, MemorySegment packed, long minNs) {
        long bytes = l.bytes(), iters = 0;
        long t0 = CPU.getCurrentThreadCpuTime(), t1;
        do {
            for (int j = 0; j < 64; j++) {
                Convertor.forUnpack(l.type(), l.count(), l.user(), 0).unpackNext(packed, 0, bytes);
                touch(packed, j, bytes);
            }
            iters += 64;
            t1 = CPU.getCurrentThreadCpuTime();
        } while (t1 - t0 < minNs);
        return (double) bytes * iters / ((t1 - t0) / 1e9) / 1e6;
    }

    /** memcpy baseline: one bulk copy of the packed byte count from the user buffer. */
    private static double timeCopy(DdtLayouts.Layout l, MemorySegment packed, long minNs) {
        long bytes = l.bytes(), iters = 0;
        MemorySegment userSeg = Buffers.segment(l.user());
        long t0 = CPU.getCurrentThreadCpuTime(), t1;
        do {
            for (int j = 0; j < 64; j++) {
                MemorySegment.copy(userSeg, 0, packed, 0, bytes);
                touch(packed, j, bytes);
            }
            iters += 64;
            t1 = CPU.getCurrentThreadCpuTime();
        } while (t1 - t0 < minNs);
        return (double) bytes * iters / ((t1 - t0) / 1e9) / 1e6;
    }
}
