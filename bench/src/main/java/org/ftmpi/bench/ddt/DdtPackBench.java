package org.ftmpi.bench.ddt;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.ftmpi.ddt.Convertor;
import org.openjdk.jmh.annotations.*;

/**
 * JMH: whole-message pack and unpack of the {@link DdtLayouts} layouts (bytes/s = ops/s x
 * bytes), and a segmented pack in 8 KiB transport segments. Same layouts as pack_bench.c.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class DdtPackBench {
    @Param({"col64", "col256", "col1024", "longrun", "indexed", "struct93x21", "struct93x171"})
    public String layout;

    private DdtLayouts.Layout l;
    private MemorySegment packed;

    @Setup
    public void setup() {
        l = DdtLayouts.create(layout);
        packed = Arena.ofAuto().allocate(l.bytes() + 64, 64);
    }

    @Benchmark
    public long pack() {
        return Convertor.forPack(l.type(), l.count(), l.user(), 0).packNext(packed, 0, l.bytes());
    }

    @Benchmark
    public long unpack() {
        return Convertor.forUnpack(l.type(), l.count(), l.user(), 0).unpackNext(packed, 0, l.bytes());
    }

    /** Pipelined: the message packed one 8 KiB transport segment at a time. */
    @Benchmark
    public long packSegmented8k() {
        Convertor c = Convertor.forPack(l.type(), l.count(), l.user(), 0);
        long n = 0;
        while (!c.done()) {
            n += c.packNext(packed, 0, Math.min(8192, l.bytes()));
        }
        return n;
    }
}
