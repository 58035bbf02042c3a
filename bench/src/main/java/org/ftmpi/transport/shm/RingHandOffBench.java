package org.ftmpi.transport.shm;

import static org.ftmpi.transport.shm.RingDescriptor.*;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.*;
import org.openjdk.jmh.infra.Control;

/**
 * JMH: one hand-off through the shared-memory rings alone, no MPI layers — the transport's
 * floor. Two threads ping-pong a record of {@code payload} bytes through the two rings of a
 * mapped pair file (in {@code /dev/shm}): the score of {@code ping} is one round trip, so the
 * one-way hand-off is half of it. Compare with the cross-core cache-line latency that
 * {@code bench memcpy} prints (the physical limit) and with {@code MessageCostBench} (the
 * layers above).
 *
 * <pre>
 * java @conf/rank-jvm.options -jar bench/target/benchmarks.jar RingHandOffBench
 * </pre>
 */
@State(Scope.Group)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1) // the fork inherits this JVM's flags: run with java @conf/rank-jvm.options
public class RingHandOffBench {
    private static final int SALT = 0x2545_f491;

    /** Payload bytes carried by each record. */
    @Param({"8", "1024"})
    public int payload;

    /**
     * Data bytes of each ring (the transport's default is 1 MiB): a small ring reuses the same
     * cache lines, a large one writes each record into lines last touched a ring's length ago.
     */
    @Param({"1048576"})
    public int capacity;

    /** Control words through Chronicle Bytes ({@code true}) or the JDK's VarHandles. */
    @Param({"true"})
    public boolean unsafe;

    private Path file;
    private MappedRegion region;
    private SpscRing pingOut, pingIn, pongOut, pongIn;
    private MemorySegment seg;
    private MemorySegment source;

    @Setup
    public void setup() throws IOException {
        Path dir = Path.of("/dev/shm");
        if (!Files.isDirectory(dir)) dir = Path.of(System.getProperty("java.io.tmpdir"));
        file = dir.resolve("ftmpi-bench-" + ProcessHandle.current().pid() + "-ring");
        region = MappedRegion.create(file, PairDescriptor.fileBytes(capacity), unsafe);
        seg = region.segment();
        pingOut = new SpscRing(region, PairDescriptor.ring(0, capacity), capacity, SALT);
        pongIn = new SpscRing(region, PairDescriptor.ring(0, capacity), capacity, SALT);
        pongOut = new SpscRing(region, PairDescriptor.ring(1, capacity), capacity, SALT);
        pingIn = new SpscRing(region, PairDescriptor.ring(1, capacity), capacity, SALT);
        source = MemorySegment.ofArray(new byte[payload]);
    }

    /** A record left in flight when the last iteration stopped must not pipeline the next one. */
    @TearDown(Level.Iteration)
    public void drain() throws IOException {
        for (SpscRing in : new SpscRing[] {pongIn, pingIn}) {
            long at;
            while ((at = in.peek()) >= 0) in.consume(in.recordLength(at));
        }
    }

    @TearDown
    public void tearDown() throws IOException {
        region.close();
        Files.deleteIfExists(file);
    }

    private boolean send(SpscRing out) {
        int record = frameRecordBytes(payload);
        long at = out.claim(record);
        if (at < 0) return false;
        MemorySegment.copy(source, 0, seg, at + RECORD_PAYLOAD_OFFSET, payload);
        out.publish(record, KIND_FRAME);
        return true;
    }

    /** Waits for the next record (or the end of the measurement) and consumes it. */
    private static boolean receive(SpscRing in, Control control) throws IOException {
        long at;
        while ((at = in.peek()) < 0) {
            if (control.stopMeasurement) return false;
            Thread.onSpinWait();
        }
        in.consume(in.recordLength(at));
        return true;
    }

    /** One round trip: send a record, wait for the reply. */
    @Benchmark
    @Group("pingPong")
    public boolean ping(Control control) throws IOException {
        while (!send(pingOut)) {
            if (control.stopMeasurement) return false;
        }
        return receive(pingIn, control);
    }

    /** The echo side: wait for a record, send one back. */
    @Benchmark
    @Group("pingPong")
    public boolean pong(Control control) throws IOException {
        if (!receive(pongIn, control)) return false;
        while (!send(pongOut)) {
            if (control.stopMeasurement) return false;
        }
        return true;
    }
}
