package org.ftmpi.bench.rs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.ftmpi.ckpt.rs.ReedSolomon;
import org.openjdk.jmh.annotations.*;

/**
 * JMH: Reed-Solomon encode, decode with m data shards lost, and single-shard update, on 64-byte
 * aligned native segments, single thread. Data GB/s = ops/s x k x shardBytes / 1e9 (for update:
 * ops/s x shardBytes). {@code backend} selects the kernel (AUTO = vector when available).
 *
 * <pre>java --add-modules jdk.incubator.vector -jar bench/target/benchmarks.jar RsBench -p shape=16x4</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 8, time = 1) // the vector kernels need C2; a few s on a loaded machine
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules=jdk.incubator.vector"})
public class RsBench {
    @Param({"4x2", "8x2", "16x4"})
    public String shape;

    @Param({"1048576"})
    public int shardBytes;

    @Param({"AUTO", "SCALAR"})
    public String backend;

    private ReedSolomon rs;
    private MemorySegment[] data, parity, all;
    private boolean[] present;
    private MemorySegment newData;
    private int k, m;

    @Setup
    public void setup() {
        String[] km = shape.split("x");
        k = Integer.parseInt(km[0]);
        m = Integer.parseInt(km[1]);
        rs = ReedSolomon.create(k, m, ReedSolomon.Backend.valueOf(backend));
        all = RsHarness.segments(k + m, shardBytes, new Random(1));
        data = Arrays.copyOf(all, k);
        parity = Arrays.copyOfRange(all, k, k + m);
        rs.encode(data, parity);
        present = new boolean[k + m];
        Arrays.fill(present, true);
        for (int i = 0; i < m; i++) present[i] = false;
        newData = RsHarness.segments(1, shardBytes, new Random(2))[0];
    }

    @Benchmark
    public void encode() {
        rs.encode(data, parity);
    }

    /** Reconstructs the first m data shards from the other k (worst case: all lost shards are data). */
    @Benchmark
    public void decode() {
        rs.decode(all, present);
    }

    /** Parity update for one changed data shard (reads old and new data and the m parities). */
    @Benchmark
    public void update() {
        rs.update(k - 1, all[k - 1], newData, parity);
    }
}
