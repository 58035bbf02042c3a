package org.ftmpi.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.*;

/**
 * Physical limit for copy-bound paths: bulk copy bandwidth from a Java array into native memory,
 * the copy that every transport and packer ends in.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class MemcpyBench {
    @Param({"65536", "1048576"})
    public int sizeBytes;

    private byte[] src;
    private MemorySegment dst;

    @Setup
    public void setup() {
        src = new byte[sizeBytes];
        dst = Arena.ofAuto().allocate(sizeBytes, 64);
    }

    /** One copy of {@code sizeBytes}; bytes/s = ops/s x sizeBytes. */
    @Benchmark
    public void arrayToNative() {
        MemorySegment.copy(src, 0, dst, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, sizeBytes);
    }
}
