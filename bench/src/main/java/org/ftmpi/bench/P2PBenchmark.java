package org.ftmpi.bench;

import java.util.Locale;

/**
 * The point-to-point benchmarks of the OSU-style suite, with the OSU Micro-Benchmarks 7.x defaults
 * (osu_util.h: {@code LARGE_MESSAGE_SIZE}, {@code LAT_LOOP_*}, {@code LAT_SKIP_*}, {@code BW_LOOP_*},
 * {@code BW_SKIP_*}, {@code WINDOW_SIZE_LARGE}). Pure data: no MPI here.
 */
public enum P2PBenchmark {
    /** Ping-pong with blocking send/recv; one-way latency = elapsed / (2 * iterations). */
    LATENCY("latency", "Latency Test", "Latency (us)", 0, 10_000, 100, 1_000, 10),
    /** Uni-directional: window of non-blocking sends, receiver acknowledges each window. */
    BANDWIDTH("bandwidth", "Bandwidth Test", "Bandwidth (MB/s)", 1, 100, 10, 20, 2),
    /** Bi-directional: both ranks post a window of receives and a window of sends. */
    BIBW("bibw", "Bi-Directional Bandwidth Test", "Bandwidth (MB/s)", 1, 100, 10, 20, 2),
    /**
     * osu_allreduce: every rank times each MPI_Allreduce (float sum of size / 4 elements) alone,
     * with a barrier between iterations; the row is the average over the ranks. Any number of ranks.
     */
    ALLREDUCE("allreduce", "Allreduce Latency Test", "Avg Latency (us)", 4, 1_000, 200, 100, 10),
    /** osu_barrier: every rank times each MPI_Barrier; the single row (size 0) is the average over the ranks. */
    BARRIER("barrier", "Barrier Latency Test", "Avg Latency (us)", 0, 1_000, 200, 1_000, 200);

    /** OSU's default maximum message size for collectives: 1 MiB. */
    public static final int DEFAULT_MAX_COLLECTIVE_SIZE = 1 << 20;

    /** OSU's threshold: sizes strictly above this use the "large" iteration counts. */
    public static final int LARGE_MESSAGE_SIZE = 8192;
    /** OSU's default maximum message size for point-to-point tests: 4 MiB. */
    public static final int DEFAULT_MAX_SIZE = 1 << 22;
    /** OSU's default window for osu_bw / osu_bibw. */
    public static final int DEFAULT_WINDOW = 64;

    private final String cliName;
    private final String title;
    private final String valueHeader;
    private final int defaultMinSize;
    private final int loopSmall;
    private final int skipSmall;
    private final int loopLarge;
    private final int skipLarge;

    P2PBenchmark(String cliName, String title, String valueHeader, int defaultMinSize,
                 int loopSmall, int skipSmall, int loopLarge, int skipLarge) {
        this.cliName = cliName;
        this.title = title;
        this.valueHeader = valueHeader;
        this.defaultMinSize = defaultMinSize;
        this.loopSmall = loopSmall;
        this.skipSmall = skipSmall;
        this.loopLarge = loopLarge;
        this.skipLarge = skipLarge;
    }

    /** Name on the command line ({@code latency}, {@code bandwidth}, {@code bibw}). */
    public String cliName() { return cliName; }

    /** Title used in the first header line, e.g. "Latency Test". */
    public String title() { return title; }

    /** Column header of the value column, e.g. "Latency (us)". */
    public String valueHeader() { return valueHeader; }

    /** Smallest size when {@code -m} does not give one: 0 for latency, 1 for the bandwidth tests. */
    public int defaultMinSize() { return defaultMinSize; }

    /** True if a larger value is better (bandwidth), false if smaller is better (latency). */
    public boolean higherIsBetter() { return this == BANDWIDTH || this == BIBW; }

    /** Whether the benchmark runs on exactly two ranks (the point-to-point ones); collectives take any number. */
    public boolean pairOnly() { return this == LATENCY || this == BANDWIDTH || this == BIBW; }

    /** Default largest size: 4 MiB for point-to-point, 1 MiB for allreduce, 0 for barrier. */
    public int defaultMaxSize() {
        return this == BARRIER ? 0 : pairOnly() ? DEFAULT_MAX_SIZE : DEFAULT_MAX_COLLECTIVE_SIZE;
    }

    /** Whether the benchmark uses a window of non-blocking operations. */
    public boolean usesWindow() { return this == BANDWIDTH || this == BIBW; }

    /** Default number of timed iterations for a message of {@code size} bytes. */
    public int defaultIterations(int size) { return size > LARGE_MESSAGE_SIZE ? loopLarge : loopSmall; }

    /** Default number of untimed warm-up iterations for a message of {@code size} bytes. */
    public int defaultWarmup(int size) { return size > LARGE_MESSAGE_SIZE ? skipLarge : skipSmall; }

    /**
     * Parses a benchmark name: {@code latency}, {@code bandwidth} or its alias {@code bw},
     * {@code bibw}, {@code allreduce}, {@code barrier}; case-insensitive.
     *
     * @throws IllegalArgumentException for any other name
     */
    public static P2PBenchmark fromName(String name) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "latency" -> LATENCY;
            case "bandwidth", "bw" -> BANDWIDTH;
            case "bibw" -> BIBW;
            case "allreduce" -> ALLREDUCE;
            case "barrier" -> BARRIER;
            default -> throw new IllegalArgumentException("unknown benchmark '" + name
                    + "' (expected one of: latency, bandwidth (bw), bibw, allreduce, barrier)");
        };
    }
}
