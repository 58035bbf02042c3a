package org.ftmpi.bench.ddt;

import java.lang.foreign.Arena;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import org.ftmpi.ddt.Buffers;
import org.ftmpi.ddt.Convertor;

/**
 * Plain timing harness with the exact method of {@code bench/peers/ddt/pack_bench.c} (median of
 * 5 rounds of >= 100 ms of this thread's CPU time, 64 operations per clock read; CPU time because
 * the machine is shared and wall time would count waiting for a core), so {@code compare.sh} can
 * put the two side by side. Each operation creates a convertor (as MPI_Pack sets one up) and packs the whole
 * message from the Java array into a native transport segment, or unpacks it back.
 * Output: {@code layout <name> bytes <B> pack_MBps <x> unpack_MBps <y> memcpy_MBps <z>}.
 * Usage: {@code java -cp benchmarks.jar org.ftmpi.bench.ddt.DdtPackHarness [layout...]}
 */
public final class DdtPackHarness {
    private static final int ROUNDS = 5;
    private static final long MIN_NS = 100_000_000L;
    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

    private DdtPackHarness() {
    }

    public static void main(String[] args) {
        String[] names = args.length > 0 ? args : DdtLayouts.NAMES;
        try (Arena arena = Arena.ofConfined()) {
            for (String name : names) {
                DdtLayouts.Layout l = DdtLayouts.create(name);
                MemorySegment packed = arena.allocate(l.bytes() + 64, 64);
                // warm-up: JIT the paths before timing
                for (int w = 0; w < 2; w++) {
                    measure(0, l, packed, 300_000_000L);
                    measure(1, l, packed, 300_000_000L);
                    measure(2, l, packed, 300_000_000L);
                }
                double p = median(0, l, packed), u = median(1, l, packed), m = median(2, l, packed);
                System.out.printf("layout %s bytes %d pack_MBps %.1f unpack_MBps %.1f memcpy_MBps %.1f%n",
                        name, l.bytes(), p, u, m);
            }
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

    private static double timePack(DdtLayouts.Layout l, MemorySegment packed, long minNs) {
        long bytes = l.bytes(), iters = 0;
        long t0 = CPU.getCurrentThreadCpuTime(), t1;
        do {
            for (int j = 0; j < 64; j++) {
                Convertor.forPack(l.type(), l.count(), l.user(), 0).packNext(packed, 0, bytes);
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
            }
            iters += 64;
            t1 = CPU.getCurrentThreadCpuTime();
        } while (t1 - t0 < minNs);
        return (double) bytes * iters / ((t1 - t0) / 1e9) / 1e6;
    }
}
