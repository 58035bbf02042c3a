package org.ftmpi.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * Command line of the point-to-point benchmarks, parsed without touching MPI.
 *
 * <pre>
 * bench (latency|bandwidth|bw|bibw|allreduce|barrier) [-m [MIN:]MAX] [-i ITER] [-x WARMUP] [-W WINDOW]
 *       [--buffer direct|array] [--median]
 * </pre>
 *
 * <p>{@code -i} and {@code -x} override the OSU defaults for every message size (small and large);
 * without them the OSU 7.x per-size defaults apply (see {@link P2PBenchmark}).
 *
 * @param benchmark  which benchmark
 * @param minSize    smallest message size in bytes (inclusive)
 * @param maxSize    largest message size in bytes (inclusive)
 * @param iterations timed iterations for every size, or -1 for OSU's per-size default
 * @param warmup     untimed warm-up iterations for every size, or -1 for OSU's per-size default
 * @param window     number of outstanding non-blocking operations per iteration (bandwidth tests)
 * @param buffer     buffer kind
 * @param median     latency: time each round trip alone and report the median one-way time;
 *                   bw, bibw: time each window alone (rank 0) and report the median window's
 *                   bandwidth; allreduce, barrier: each rank's median call, averaged over the ranks;
 *                   instead of the mean (robust on a shared or noisy host; the C peers take the
 *                   same option)
 */
public record P2POptions(P2PBenchmark benchmark, int minSize, int maxSize, int iterations, int warmup,
                         int window, BufferKind buffer, boolean median) {

    /** Upper bound on {@code -W}: the number of requests in flight per direction. */
    public static final int MAX_WINDOW = 1 << 16;

    /** Message buffer kind. */
    public enum BufferKind {
        /** Direct {@link java.nio.ByteBuffer} from {@code MPI.newByteBuffer}: zero-copy capable. */
        DIRECT,
        /** Java {@code byte[]}: blocking send/recv only (latency). */
        ARRAY
    }

    public P2POptions {
        if (minSize < 0 || maxSize < minSize) {
            throw new IllegalArgumentException("invalid size range " + minSize + ":" + maxSize);
        }
        if (iterations == 0 || iterations < -1) {
            throw new IllegalArgumentException("iterations must be >= 1, got " + iterations);
        }
        if (warmup < -1) {
            throw new IllegalArgumentException("warm-up iterations must be >= 0, got " + warmup);
        }
        if (window < 1 || window > MAX_WINDOW) {
            throw new IllegalArgumentException("window must be in 1.." + MAX_WINDOW + ", got " + window);
        }
        if (buffer == BufferKind.ARRAY && benchmark.usesWindow()) {
            throw new IllegalArgumentException("--buffer array is only supported by 'latency': "
                    + benchmark.cliName() + " uses iSend/iRecv, which require direct buffers");
        }
    }

    /** Default options for {@code benchmark}: OSU's sizes, iterations, warm-up and window. */
    public static P2POptions defaults(P2PBenchmark benchmark) {
        return new P2POptions(benchmark, benchmark.defaultMinSize(), benchmark.defaultMaxSize(), -1, -1,
                P2PBenchmark.DEFAULT_WINDOW, BufferKind.DIRECT, false);
    }

    /**
     * Parses the full argument list; {@code args[0]} is the benchmark name.
     *
     * @throws IllegalArgumentException with a user-facing message on any error
     */
    public static P2POptions parse(String... args) {
        if (args.length == 0) {
            throw new IllegalArgumentException("no benchmark given");
        }
        P2PBenchmark benchmark = P2PBenchmark.fromName(args[0]);
        int min = benchmark.defaultMinSize();
        int max = benchmark.defaultMaxSize();
        int iterations = -1;
        int warmup = -1;
        int window = P2PBenchmark.DEFAULT_WINDOW;
        BufferKind buffer = BufferKind.DIRECT;
        boolean median = false;
        for (int i = 1; i < args.length; i++) {
            String opt = args[i];
            String inlineValue = null;
            int eq = opt.indexOf('=');
            if (opt.startsWith("--") && eq > 0) {
                inlineValue = opt.substring(eq + 1);
                opt = opt.substring(0, eq);
            }
            switch (opt) {
                case "-m", "--message-size" -> {
                    String v = inlineValue != null ? inlineValue : value(args, ++i, opt);
                    int colon = v.indexOf(':');
                    if (colon < 0) {
                        max = parseSize(v, opt);
                    } else {
                        String lo = v.substring(0, colon);
                        String hi = v.substring(colon + 1);
                        if (lo.isEmpty() && hi.isEmpty()) {
                            throw new IllegalArgumentException(opt + ": expected [MIN:]MAX, got '" + v + "'");
                        }
                        if (!lo.isEmpty()) {
                            min = parseSize(lo, opt);
                        }
                        if (!hi.isEmpty()) {
                            max = parseSize(hi, opt);
                        }
                    }
                }
                case "-i", "--iterations" ->
                        iterations = parsePositive(inlineValue != null ? inlineValue : value(args, ++i, opt), opt, 1);
                case "-x", "--warmup" ->
                        warmup = parsePositive(inlineValue != null ? inlineValue : value(args, ++i, opt), opt, 0);
                case "-W", "--window-size" ->
                        window = parsePositive(inlineValue != null ? inlineValue : value(args, ++i, opt), opt, 1);
                case "--buffer" -> {
                    String v = inlineValue != null ? inlineValue : value(args, ++i, opt);
                    buffer = switch (v.toLowerCase(Locale.ROOT)) {
                        case "direct" -> BufferKind.DIRECT;
                        case "array" -> BufferKind.ARRAY;
                        default -> throw new IllegalArgumentException(
                                "--buffer: expected 'direct' or 'array', got '" + v + "'");
                    };
                }
                case "--median" -> median = true;
                default -> throw new IllegalArgumentException("unknown option '" + args[i] + "'");
            }
        }
        if (max < min) {
            throw new IllegalArgumentException("-m: MIN (" + min + ") is larger than MAX (" + max + ")");
        }
        if (benchmark == P2PBenchmark.ALLREDUCE && min < 4) {
            throw new IllegalArgumentException("-m: allreduce reduces floats: MIN must be at least 4, got " + min);
        }
        return new P2POptions(benchmark, min, max, iterations, warmup, window, buffer, median);
    }

    /**
     * Message sizes in OSU order: start at MIN, then double ({@code 0} is followed by {@code 1}),
     * while the size does not exceed MAX.
     */
    public List<Integer> sizes() {
        List<Integer> sizes = new ArrayList<>();
        long size = minSize;
        while (size <= maxSize) {
            sizes.add((int) size);
            size = size == 0 ? 1 : size * 2;
        }
        return Collections.unmodifiableList(sizes);
    }

    /** Timed iterations for {@code size}: {@code -i} if given, else OSU's default. */
    public int iterationsFor(int size) {
        return iterations > 0 ? iterations : benchmark.defaultIterations(size);
    }

    /** Warm-up iterations for {@code size}: {@code -x} if given, else OSU's default. */
    public int warmupFor(int size) {
        return warmup >= 0 ? warmup : benchmark.defaultWarmup(size);
    }

    /** Usage text for {@code --help}. */
    public static String usage() {
        return """
                Usage: bench BENCHMARK [OPTIONS]
                  (launched as: bin/ftmpirun -np 2 bench BENCHMARK [OPTIONS]; exactly 2 ranks
                   for latency, bandwidth and bibw; any number for allreduce and barrier)

                Benchmarks (OSU Micro-Benchmarks 7.x methodology):
                  latency          ping-pong with blocking send/recv; one-way latency in us
                  bandwidth, bw    window of iSend, receiver posts a window of iRecv and acks
                                   each window; MB/s (1 MB = 10^6 bytes)
                  bibw             both ranks post a window of iRecv and a window of iSend; MB/s
                  allreduce        MPI_Allreduce, float sum of SIZE/4 elements, each call timed
                                   alone (barrier between calls); average over ranks, in us
                  barrier          MPI_Barrier timed alone; average over ranks, in us (size 0)

                Options:
                  -m, --message-size [MIN:]MAX
                                   message sizes from MIN to MAX bytes, doubling (suffixes K, M
                                   = KiB, MiB accepted); default 0:4194304 for latency,
                                   1:4194304 for bandwidth tests, 4:1048576 for allreduce
                  -i, --iterations ITER
                                   timed iterations for every size; default as OSU: latency
                                   10000 (1000 above 8192 B), bandwidth 100 (20 above 8192 B),
                                   collectives 1000 (100 above 8192 B)
                  -x, --warmup WARMUP
                                   untimed warm-up iterations for every size; default as OSU:
                                   latency 100 (10 above 8192 B), bandwidth 10 (2 above 8192 B),
                                   collectives 200 (10 above 8192 B)
                  -W, --window-size WINDOW
                                   outstanding sends/receives per iteration (bw, bibw);
                                   default 64
                  --buffer direct|array
                                   direct: MPI.newByteBuffer (default); array: byte[] with
                                   blocking send/recv (latency), float[] (allreduce)
                  --median         latency: time each round trip alone and report the median
                                   one-way time instead of the mean; bw, bibw: time each window
                                   alone (rank 0) and report the median window's bandwidth;
                                   allreduce, barrier: each rank's median call, averaged over
                                   the ranks (robust when the host is shared or noisy; the C
                                   peers in bench/peers take it too); a '# dist' line after each
                                   row gives rank 0's mean, p50-p99.9, maximum and the share of
                                   the long ones (bw, bibw: us per window), and
                                   for allreduce and barrier a '# alloc' line the heap bytes
                                   rank 0's thread allocated per timed call
                  -h, --help       print this help
                """;
    }

    private static String value(String[] args, int i, String opt) {
        if (i >= args.length) {
            throw new IllegalArgumentException(opt + " requires a value");
        }
        return args[i];
    }

    private static int parsePositive(String v, String opt, int min) {
        int n;
        try {
            n = Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(opt + ": expected an integer, got '" + v + "'");
        }
        if (n < min) {
            throw new IllegalArgumentException(opt + ": must be >= " + min + ", got " + n);
        }
        return n;
    }

    /** Parses a byte count with an optional binary suffix K or M (case-insensitive). */
    static int parseSize(String v, String opt) {
        String s = v.trim();
        long mult = 1;
        if (!s.isEmpty()) {
            char last = Character.toUpperCase(s.charAt(s.length() - 1));
            if (last == 'K') {
                mult = 1L << 10;
            } else if (last == 'M') {
                mult = 1L << 20;
            }
            if (mult != 1) {
                s = s.substring(0, s.length() - 1);
            }
        }
        long n;
        try {
            n = Long.parseLong(s) * mult;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(opt + ": expected a size in bytes, got '" + v + "'");
        }
        if (n < 0 || n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(opt + ": size out of range 0.." + Integer.MAX_VALUE + ": '" + v + "'");
        }
        return (int) n;
    }
}
