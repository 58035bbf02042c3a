package org.ftmpi.bench;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.Request;

/**
 * Runs one point-to-point benchmark on ranks 0 and 1 of {@code MPI.COMM_WORLD}, following the OSU
 * Micro-Benchmarks 7.x methodology: for every size a barrier, {@code warmup} untimed iterations, then
 * {@code iterations} timed iterations measured with {@code MPI.wtime()} on rank 0, which alone prints.
 */
final class P2PRunner {
    private static final int TAG_DATA = 1;
    private static final int TAG_WINDOW = 100;
    private static final int TAG_ACK = 101;
    private static final int ACK_BYTES = 4;

    private P2POptions options;
    /** True during the untimed JIT warm-up pass: nothing is reported. */
    private boolean warming;
    private final Intracomm comm;
    private final int rank;
    private final int peer;
    private final PrintStream out;
    /**
     * The send and receive buffers, made once for the measured sizes and used by every pass (the
     * warm-up's sizes are a part of them), as OSU allocates once. Why: made at each pass, 8 MiB
     * of fresh memory per rank faulted in before the first size of the timed pass, and on a VM
     * whose host backs a fresh page at ~10 us per 4 KiB (kernel clear_page under perf) that was
     * 20-25 ms, which the ranks did not spend at the same moment (session 29).
     */
    private final int capacity;
    private ByteBuffer sendBuffer, receiveBuffer;
    private byte[] sendArray, receiveArray;
    private java.nio.FloatBuffer sendFloats, receiveFloats;
    private float[] sendFloatArray, receiveFloatArray;

    P2PRunner(P2POptions options, Intracomm comm, int rank, PrintStream out) {
        this.capacity = Math.max(1, options.maxSize());
        this.options = options;
        this.comm = comm;
        this.rank = rank;
        this.peer = 1 - rank;
        this.out = out;
    }

    void run() throws MPIException {
        if (rank == 0) {
            out.print(OsuTable.header(options, MPI.getProcessorName()));
            out.println("# JIT warm-up: untimed passes of the same loops first (sizes up to 1 MiB, then the exact timed pass"
                    + " until the JIT compilers are idle during one)");
            out.flush();
        }
        // OSU's per-size warm-up assumes compiled code; a JVM first has to compile the loops and
        // the library's hot path, so run the same benchmark once, untimed and unreported.
        P2POptions measured = options;
        boolean latency = !measured.benchmark().usesWindow();
        warming = true;
        // Large sizes (rendezvous path) with few iterations, then small ones (eager path) with
        // many: the last recompilations then happen before the first (small) size is timed.
        warm(measured, (1 << 16) + 1, 1 << 20, latency ? 300 : 20);
        // Collectives: every rank JVM compiles its own code; with more ranks than cores the
        // compilers compete with the ranks, so the pass is longer.
        warm(measured, 0, 1 << 16, measured.benchmark().pairOnly() ? (latency ? 3000 : 300) : 10_000);
        // Collectives: C2 compiles their path only after 10-20 thousand calls, and four JVMs on
        // two cores compile slowly, so after 10 000 calls the compilers were still at work in the
        // timed pass (np 4 barrier: 7.8-26 us per call; 4.5-5.5 us with 30 000 warm-up
        // iterations, session 13). 20 000 more calls of the smallest size finish that first.
        if (!measured.benchmark().pairOnly()) warm(measured, measured.minSize(), measured.minSize(), 20_000);
        // Measured: after a warm-up of other counts, the first sizes of the timed pass still ran
        // slowly (point-to-point over TCP: 0-8 B at 6-15 us where 16 B took 4.8 us, session 4;
        // collectives: the first few hundred calls, 4 JVMs on 2 cores), as the JIT recompiles
        // the loops for the timed pass, so the exact timed pass runs untimed first, until the
        // compilers are idle.
        int extra = untilCompilersIdle(measured);
        if (rank == 0) {
            out.println("# JIT warm-up: " + (extra < 0 ? "the compilers were still at work in the last of " + -extra
                    : "the compilers were idle in the last of " + extra) + " untimed exact passes");
            out.flush();
        }
        warming = false;
        options = measured;
        dispatch();
    }

    /** Untimed exact passes after the warm-up: at most this many, and none started after {@link #IDLE_PASSES_NS}. */
    private static final int IDLE_PASSES_MAX = 8;
    private static final long IDLE_PASSES_NS = 20_000_000_000L;

    /**
     * Runs the exact timed pass, untimed, until one pass ran while no rank's JIT compiler did any
     * work (the JVM's accumulated compilation time did not grow), at most {@link #IDLE_PASSES_MAX}
     * passes and none started after {@link #IDLE_PASSES_NS}; every rank takes the same decision
     * (an allReduce of the ranks' views). Returns the passes run, negated when the compilers were
     * still at work in the last. Why: a fixed warm-up left the JIT compiling the hot path (and
     * the timed loop itself) while the first sizes were timed, and a compiler thread that takes
     * one of the cores two spinning ranks run on stalls the ping-pong for whole scheduler slices
     * (2-6 ms each; the first timed size then measured 0.8-2.5 us for 0.13-0.2 us). With ranks
     * that start from the AOT cache (JDK 25 replays the training run's compilations at start-up,
     * docs/launcher.md) the compilers stay busy longer. A JVM that does not count compilation
     * time ends after the first pass.
     */
    private int untilCompilersIdle(P2POptions measured) throws MPIException {
        long start = System.nanoTime();
        for (int pass = 1; ; pass++) {
            long before = compilationMillis();
            options = measured;
            dispatch();
            boolean busy = compilationMillis() > before;
            int[] view = everyRank(busy, pass >= IDLE_PASSES_MAX || System.nanoTime() - start > IDLE_PASSES_NS);
            if (view[0] == 0) return pass;
            if (view[1] == 1) return -pass;
        }
    }

    private static final java.lang.management.CompilationMXBean JIT = java.lang.management.ManagementFactory.getCompilationMXBean();
    private static final boolean JIT_TIMED = JIT != null && JIT.isCompilationTimeMonitoringSupported();

    /** This JVM's accumulated JIT compilation time (ms; 0 where the JVM does not count it). */
    private static long compilationMillis() {
        return JIT_TIMED ? JIT.getTotalCompilationTime() : 0;
    }

    /**
     * {busy, over}, each 1 if it is true on any rank (an allReduce over the benchmark's
     * communicator). The warm-up passes call it too, with nothing to say: the check's own path
     * (an int allReduce, which the benchmark may not use) is then compiled into the profiles long
     * before the last pass. Measured: called only after the exact passes, its first call threw
     * away the compiled allreduce path of {@code bench allreduce} (float), and when the
     * compilers had been idle during that one pass, the timed pass ran interpreted at 120-250 us
     * per call instead of 6-8.
     */
    private int[] everyRank(boolean busy, boolean over) throws MPIException {
        int[] view = {busy ? 1 : 0, over ? 1 : 0};
        comm.allReduce(view, 2, MPI.INT, MPI.MAX);
        return view;
    }

    /**
     * One untimed pass over the measured sizes that fall in [lo, hi], if any; then the ranks'
     * check of {@link #everyRank}, with nothing to say, so that its path is profiled early.
     */
    private void warm(P2POptions measured, int lo, int hi, int iterations) throws MPIException {
        int min = Math.max(measured.minSize(), lo);
        int max = Math.min(measured.maxSize(), hi);
        if (min <= max) {
            options = new P2POptions(measured.benchmark(), min, max, iterations, 0, measured.window(), measured.buffer(),
                    measured.median());
            dispatch();
        }
        everyRank(false, false);
    }

    private void dispatch() throws MPIException {
        switch (options.benchmark()) {
            case LATENCY -> latency();
            case BANDWIDTH -> bandwidth();
            case BIBW -> bibw();
            case ALLREDUCE -> allreduce();
            case BARRIER -> barrier();
        }
        // Both ranks finish all traffic before MPI.Finalize tears anything down (untimed).
        comm.barrier();
    }

    private ByteBuffer sendBuffer() {
        if (sendBuffer == null) sendBuffer = filled(capacity, (byte) 'a');
        return sendBuffer;
    }

    private ByteBuffer receiveBuffer() {
        if (receiveBuffer == null) receiveBuffer = filled(capacity, (byte) 'b');
        return receiveBuffer;
    }

    private Object sendBuffer(boolean array) {
        if (!array) return sendBuffer();
        if (sendArray == null) sendArray = filledArray(capacity, (byte) 'a');
        return sendArray;
    }

    private Object receiveBuffer(boolean array) {
        if (!array) return receiveBuffer();
        if (receiveArray == null) receiveArray = filledArray(capacity, (byte) 'b');
        return receiveArray;
    }

    private static ByteBuffer filled(int capacity, byte value) {
        ByteBuffer b = MPI.newByteBuffer(capacity);
        for (int i = 0; i < capacity; i++) {
            b.put(i, value);
        }
        return b;
    }

    private void report(int size, double value) {
        if (rank == 0 && !warming) {
            out.println(OsuTable.row(size, value));
            out.flush();
        }
    }

    /**
     * A bandwidth row: the OSU mean ({@code meanMBps}), or with {@code --median} (rank 0's
     * {@code windowNanos}, else null) the median window's bandwidth and a {@code # dist} line of
     * the windows (us per window).
     */
    private void reportWindows(int size, int window, int directions, long[] windowNanos, double meanMBps) {
        if (windowNanos == null) {
            report(size, meanMBps);
            return;
        }
        report(size, OsuTable.medianBandwidthMBps(size, window, directions, windowNanos));
        if (!warming) {
            out.println(OsuTable.windowDistribution(size, windowNanos));
            out.flush();
        }
    }

    /** Ping-pong of blocking send/recv from direct buffers or (--buffer array) byte[]. */
    private void latency() throws MPIException {
        boolean array = options.buffer() == P2POptions.BufferKind.ARRAY;
        Object sbuf = sendBuffer(array);
        Object rbuf = receiveBuffer(array);
        for (int size : options.sizes()) {
            int iters = options.iterationsFor(size);
            int skip = options.warmupFor(size);
            comm.barrier();
            double start = 0;
            if (rank == 0 && options.median()) {
                long[] rtt = new long[iters];
                for (int i = 0; i < iters + skip; i++) {
                    long t0 = System.nanoTime();
                    comm.send(sbuf, size, MPI.BYTE, peer, TAG_DATA);
                    comm.recv(rbuf, size, MPI.BYTE, peer, TAG_DATA);
                    if (i >= skip) rtt[i - skip] = System.nanoTime() - t0;
                }
                report(size, OsuTable.medianOneWayMicros(rtt));
                if (!warming) {
                    out.println(OsuTable.distribution(size, rtt));
                    out.flush();
                }
            } else if (rank == 0) {
                for (int i = 0; i < iters + skip; i++) {
                    if (i == skip) {
                        start = MPI.wtime();
                    }
                    comm.send(sbuf, size, MPI.BYTE, peer, TAG_DATA);
                    comm.recv(rbuf, size, MPI.BYTE, peer, TAG_DATA);
                }
                report(size, OsuTable.latencyMicros(MPI.wtime() - start, iters));
            } else {
                for (int i = 0; i < iters + skip; i++) {
                    comm.recv(rbuf, size, MPI.BYTE, peer, TAG_DATA);
                    comm.send(sbuf, size, MPI.BYTE, peer, TAG_DATA);
                }
            }
        }
    }

    private static byte[] filledArray(int capacity, byte value) {
        byte[] b = new byte[capacity];
        java.util.Arrays.fill(b, value);
        return b;
    }

    private void bandwidth() throws MPIException {
        int window = options.window();
        ByteBuffer sbuf = sendBuffer();
        ByteBuffer rbuf = receiveBuffer();
        ByteBuffer ack = MPI.newByteBuffer(ACK_BYTES);
        Request[] reqs = new Request[window];
        for (int size : options.sizes()) {
            int iters = options.iterationsFor(size);
            int skip = options.warmupFor(size);
            comm.barrier();
            double start = 0;
            long[] windows = rank == 0 && options.median() ? new long[iters] : null;
            if (rank == 0) {
                for (int i = 0; i < iters + skip; i++) {
                    if (i == skip) {
                        start = MPI.wtime();
                    }
                    long t0 = windows != null ? System.nanoTime() : 0;
                    sendWindow(sbuf, size, reqs, ack);
                    if (windows != null && i >= skip) windows[i - skip] = System.nanoTime() - t0;
                }
                reportWindows(size, window, 1, windows, OsuTable.bandwidthMBps(size, iters, window, 1, MPI.wtime() - start));
            } else {
                for (int i = 0; i < iters + skip; i++) {
                    receiveWindow(rbuf, size, reqs, ack);
                }
            }
        }
    }

    /**
     * bw's sender: one window per call (so are {@link #receiveWindow} and bibw's {@link
     * #exchangeWindow}). Why not inline in the loop over iterations: that loop then ran a few
     * hundred times per size, so C2 compiled it (an OSR compile, then the method itself, each
     * inlining the whole send path: 65-100 ms of a core per rank) when its back-edge counters
     * crossed the threshold, which on two cores fell in the timed pass at a random size: bw at
     * 512 KiB 6-24 GB/s for 55-60 in other jobs, 9 of 20 windows taking 10-12 ms instead of 0.57
     * (session 29, scheduler trace and -Xlog:jit+compilation). Called once per window, these
     * methods reach C2's invocation threshold within the warm-up, and the loop around them stays
     * in C1's code, too cold to be recompiled.
     */
    private void sendWindow(ByteBuffer sbuf, int size, Request[] reqs, ByteBuffer ack) throws MPIException {
        for (int w = 0; w < reqs.length; w++) {
            reqs[w] = comm.iSend(sbuf, size, MPI.BYTE, peer, TAG_WINDOW);
        }
        Request.waitAll(reqs);
        comm.recv(ack, ACK_BYTES, MPI.BYTE, peer, TAG_ACK);
    }

    private void receiveWindow(ByteBuffer rbuf, int size, Request[] reqs, ByteBuffer ack) throws MPIException {
        for (int w = 0; w < reqs.length; w++) {
            reqs[w] = comm.iRecv(rbuf, size, MPI.BYTE, peer, TAG_WINDOW);
        }
        Request.waitAll(reqs);
        comm.send(ack, ACK_BYTES, MPI.BYTE, peer, TAG_ACK);
    }

    private void exchangeWindow(ByteBuffer sbuf, ByteBuffer rbuf, int size, Request[] sendReqs, Request[] recvReqs)
            throws MPIException {
        for (int w = 0; w < recvReqs.length; w++) {
            recvReqs[w] = comm.iRecv(rbuf, size, MPI.BYTE, peer, TAG_WINDOW);
        }
        for (int w = 0; w < sendReqs.length; w++) {
            sendReqs[w] = comm.iSend(sbuf, size, MPI.BYTE, peer, TAG_WINDOW);
        }
        Request.waitAll(sendReqs);
        Request.waitAll(recvReqs);
    }

    /** osu_allreduce: each call timed alone, a barrier between calls, the average over ranks reported. */
    private void allreduce() throws MPIException {
        int max = capacity / 4;
        boolean array = options.buffer() == P2POptions.BufferKind.ARRAY;
        if (array && sendFloatArray == null) {
            sendFloatArray = new float[max];
            receiveFloatArray = new float[max];
        } else if (!array && sendFloats == null) {
            sendFloats = MPI.newFloatBuffer(max);
            receiveFloats = MPI.newFloatBuffer(max);
        }
        Object sbuf = array ? sendFloatArray : sendFloats;
        Object rbuf = array ? receiveFloatArray : receiveFloats;
        for (int size : options.sizes()) {
            int count = size / 4;
            int iters = options.iterationsFor(size);
            int skip = options.warmupFor(size);
            comm.barrier();
            double total = 0;
            long[] calls = options.median() ? new long[iters] : null;
            long allocated = 0;
            for (int i = 0; i < iters + skip; i++) {
                long a0 = calls != null && i >= skip ? allocatedBytes() : 0;
                long t0 = System.nanoTime();
                comm.allReduce(sbuf, rbuf, count, MPI.FLOAT, MPI.SUM);
                long t1 = System.nanoTime();
                if (i >= skip) {
                    total += t1 - t0;
                    if (calls != null) {
                        calls[i - skip] = t1 - t0;
                        allocated += allocatedBytes() - a0;
                    }
                }
                comm.barrier();
            }
            reportCollective(size, total, calls, iters, allocated);
        }
    }

    /** osu_barrier: each barrier timed alone, the average over ranks reported as size 0. */
    private void barrier() throws MPIException {
        int iters = options.iterationsFor(0);
        int skip = options.warmupFor(0);
        comm.barrier();
        double total = 0;
        long[] calls = options.median() ? new long[iters] : null;
        long a0 = 0;
        for (int i = 0; i < iters + skip; i++) {
            if (i == skip && calls != null) a0 = allocatedBytes();
            long t0 = System.nanoTime();
            comm.barrier();
            long t1 = System.nanoTime();
            if (i >= skip) {
                total += t1 - t0;
                if (calls != null) calls[i - skip] = t1 - t0;
            }
        }
        reportCollective(0, total, calls, iters, allocatedBytes() - a0);
    }

    /**
     * A collective's row, averaged over the ranks, in us: OSU's (each rank's mean time per call
     * from {@code totalNanos}), or with {@code --median} each rank's median of {@code calls},
     * followed by rank 0's '# dist' line and its '# alloc' line ({@code allocated}: heap bytes rank
     * 0's thread allocated in the timed calls).
     */
    private void reportCollective(int size, double totalNanos, long[] calls, int iters, long allocated)
            throws MPIException {
        double[] mine = {calls == null ? totalNanos / 1e3 / iters : OsuTable.medianMicros(calls)};
        double[] sum = new double[1];
        comm.reduce(mine, sum, 1, MPI.DOUBLE, MPI.SUM, 0);
        report(size, sum[0] / comm.getSize());
        if (calls != null && rank == 0 && !warming) {
            out.println(OsuTable.callDistribution(size, calls));
            if (COUNTS_ALLOCATION) {
                out.printf(java.util.Locale.ROOT, "# alloc %d: %.0f bytes per call (rank 0's thread, the timed calls only)%n",
                        size, allocated / (double) iters);
            }
            out.flush();
        }
    }

    /** Heap bytes this thread has allocated so far (0 where the JVM does not count them). */
    private static long allocatedBytes() {
        return COUNTS_ALLOCATION ? ALLOCATION.getCurrentThreadAllocatedBytes() : 0;
    }

    private static final com.sun.management.ThreadMXBean ALLOCATION =
            (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    private static final boolean COUNTS_ALLOCATION =
            ALLOCATION.isThreadAllocatedMemorySupported() && ALLOCATION.isThreadAllocatedMemoryEnabled();

    private void bibw() throws MPIException {
        int window = options.window();
        ByteBuffer sbuf = sendBuffer();
        ByteBuffer rbuf = receiveBuffer();
        Request[] sendReqs = new Request[window];
        Request[] recvReqs = new Request[window];
        for (int size : options.sizes()) {
            int iters = options.iterationsFor(size);
            int skip = options.warmupFor(size);
            comm.barrier();
            double start = 0;
            long[] windows = rank == 0 && options.median() ? new long[iters] : null;
            for (int i = 0; i < iters + skip; i++) {
                if (i == skip) {
                    start = MPI.wtime();
                }
                long t0 = windows != null ? System.nanoTime() : 0;
                exchangeWindow(sbuf, rbuf, size, sendReqs, recvReqs);
                if (windows != null && i >= skip) windows[i - skip] = System.nanoTime() - t0;
            }
            reportWindows(size, window, 2, windows, OsuTable.bandwidthMBps(size, iters, window, 2, MPI.wtime() - start));
        }
    }
}
