package org.ftmpi.bench.shm;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.Request;
import org.ftmpi.LocalJob;
import org.openjdk.jmh.annotations.*;

/**
 * JMH: the software cost of one MPI message through every layer (mpi API, engine, matching,
 * transport), without the cross-core hand-off: two ranks of one job run as threads of this JVM
 * over a real transport (shared memory by default), and one benchmark thread drives both
 * communicators: rank 0 sends, rank 1 receives. The score is the whole send + receive path of
 * one message on one core; add one cache-line hand-off (MemcpyBench's cross-core latency, 40-200
 * ns on this machine kind) and it approximates a one-way ping-pong latency.
 *
 * <pre>
 * java @conf/rank-jvm.options -jar bench/target/benchmarks.jar MessageCostBench
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1) // the fork inherits this JVM's flags: run with java @conf/rank-jvm.options
public class MessageCostBench {
    /** Message size in bytes. */
    @Param({"8", "1024"})
    public int size;

    /** The transport between the two ranks ({@code shm} or {@code tcp}). */
    @Param({"shm"})
    public String transport;

    private final AtomicReferenceArray<Intracomm> worlds = new AtomicReferenceArray<>(2);
    private final CountDownLatch ready = new CountDownLatch(2);
    private final CountDownLatch done = new CountDownLatch(1);
    private Thread job;
    private Intracomm w0, w1;
    private ByteBuffer sbuf, rbuf;
    private final Request[] sends = new Request[WINDOW], recvs = new Request[WINDOW];

    /** Messages per window in {@link #windowOf64}, as osu_bw's default. */
    public static final int WINDOW = 64;

    @Setup
    public void setup() throws InterruptedException {
        job = Thread.ofPlatform().name("local-job").start(() -> {
            try {
                LocalJob.run(2, Map.of("transports", transport), world -> {
                    worlds.set(world.getRank(), world);
                    ready.countDown();
                    done.await();
                });
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        if (!ready.await(60, TimeUnit.SECONDS)) throw new IllegalStateException("the local job did not start");
        w0 = worlds.get(0);
        w1 = worlds.get(1);
        sbuf = MPI.newByteBuffer(size);
        rbuf = MPI.newByteBuffer(size);
    }

    @TearDown
    public void tearDown() throws InterruptedException {
        done.countDown();
        job.join(TimeUnit.SECONDS.toMillis(60));
    }

    /** Blocking send by rank 0, then the blocking receive by rank 1 (the message is waiting). */
    @Benchmark
    public int sendThenRecv() throws MPIException {
        w0.send(sbuf, size, MPI.BYTE, 1, 0);
        return w1.recv(rbuf, size, MPI.BYTE, 0, 0).getCount(MPI.BYTE);
    }

    /**
     * osu_bw's pattern without the cross-core hand-off: rank 1 posts a window of receives, rank 0
     * a window of non-blocking sends, then both wait for all; the score divided by {@link #WINDOW}
     * is the streaming cost of one message.
     */
    @Benchmark
    @OperationsPerInvocation(WINDOW)
    public int windowOf64() throws MPIException {
        for (int w = 0; w < WINDOW; w++) recvs[w] = w1.iRecv(rbuf, size, MPI.BYTE, 0, 1);
        for (int w = 0; w < WINDOW; w++) sends[w] = w0.iSend(sbuf, size, MPI.BYTE, 1, 1);
        Request.waitAll(sends);
        Request.waitAll(recvs);
        return recvs.length;
    }

    /** The receive is posted first (as in a ping-pong), then the send, then the wait. */
    @Benchmark
    public int postedRecvThenSend() throws MPIException {
        Request r = w1.iRecv(rbuf, size, MPI.BYTE, 0, 0);
        w0.send(sbuf, size, MPI.BYTE, 1, 0);
        return r.waitStatus().getCount(MPI.BYTE);
    }
}
