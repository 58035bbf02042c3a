package org.ftmpi.bench;

import java.util.Locale;

/**
 * OSU-compatible text output: {@code #}-prefixed header lines, then one row per message size with
 * the size left-aligned in 10 columns and the value right-aligned in 18 columns with 2 decimals
 * (OSU's {@code "%-10d%18.2f"}). The C peers in {@code bench/peers} print the identical format, so
 * {@code compare-p2p.sh} parses both the same way: it ignores lines starting with {@code #}.
 */
public final class OsuTable {
    /** Suite version printed in the header line. */
    public static final String VERSION = "v0.1";
    /** Width of the size column (left-aligned). */
    public static final int SIZE_WIDTH = 10;
    /** Width of the value column (right-aligned). */
    public static final int FIELD_WIDTH = 18;

    private OsuTable() {}

    /** First header line, e.g. {@code # FT-MPI/J Latency Test v0.1}. */
    public static String titleLine(P2PBenchmark benchmark) {
        return "# FT-MPI/J " + benchmark.title() + " " + VERSION;
    }

    /** Column header line, e.g. {@code # Size          Latency (us)}. */
    public static String columnLine(P2PBenchmark benchmark) {
        return columnLine(benchmark.valueHeader());
    }

    private static String columnLine(String valueHeader) {
        return String.format(Locale.ROOT, "%-" + SIZE_WIDTH + "s%" + FIELD_WIDTH + "s", "# Size", valueHeader);
    }

    /** The complete header: title, description comments, column header; lines end with '\n'. */
    public static String header(P2POptions options, String processorName) {
        P2PBenchmark b = options.benchmark();
        StringBuilder sb = new StringBuilder();
        sb.append(titleLine(b)).append('\n');
        sb.append("# Implementation: FT-MPI/J (Java ").append(Runtime.version()).append(")\n");
        boolean direct = options.buffer() == P2POptions.BufferKind.DIRECT;
        if (b == P2PBenchmark.BARRIER) {
            sb.append("# Buffer: none");
        } else if (b == P2PBenchmark.ALLREDUCE) {
            sb.append("# Buffer: ").append(direct ? "direct FloatBuffer (MPI.newFloatBuffer)" : "float[]");
        } else {
            sb.append("# Buffer: ").append(direct ? "direct ByteBuffer (MPI.newByteBuffer)" : "byte[]");
        }
        sb.append(b.usesWindow() ? ", window " + options.window()
                : b.pairOnly() ? ", blocking send/recv" : ", each call timed alone, average over ranks");
        sb.append('\n');
        if (processorName != null && !processorName.isEmpty()) {
            sb.append("# Host: ").append(processorName).append('\n');
        }
        sb.append(!options.median() ? columnLine(b)
                : columnLine(b.usesWindow() ? "Median-window bandwidth (MB/s)" : "Median latency (us)")).append('\n');
        return sb.toString();
    }

    /** One data row: {@code "%-10d%18.2f"}. */
    public static String row(int size, double value) {
        return String.format(Locale.ROOT, "%-" + SIZE_WIDTH + "d%" + FIELD_WIDTH + ".2f", size, value);
    }

    /** One-way latency in microseconds of a ping-pong: elapsed / (2 * iterations). */
    public static double latencyMicros(double elapsedSeconds, int iterations) {
        return elapsedSeconds * 1e6 / (2.0 * iterations);
    }

    /**
     * The median one-way latency in microseconds of round trips timed one by one (nanoseconds;
     * sorted in place): half the median round trip, the mean of the two middle ones for an even
     * count, as the C peers' {@code --median}.
     */
    public static double medianOneWayMicros(long[] roundTripNanos) {
        return medianMicros(roundTripNanos) / 2;
    }

    /**
     * The median in microseconds of calls timed one by one (nanoseconds; sorted in place), the
     * mean of the two middle ones for an even count: a collective's {@code --median}.
     */
    public static double medianMicros(long[] callNanos) {
        java.util.Arrays.sort(callNanos);
        int n = callNanos.length;
        double mid = n % 2 == 1 ? callNanos[n / 2] : (callNanos[n / 2 - 1] + callNanos[n / 2]) / 2.0;
        return mid / 1e3;
    }

    /**
     * The distribution of round trips timed one by one (nanoseconds, sorted ascending, as
     * {@link #medianOneWayMicros} leaves them) as a comment line, every figure one-way (half a
     * round trip) in microseconds: {@code # dist SIZE: mean M p50 A p90 B p99 C p99.9 D max E}.
     * The C peers' {@code --median} prints the same line, so a stall that moves the OSU mean shows
     * up as a tail here.
     */
    public static String distribution(int size, long[] sortedRoundTripNanos) {
        return distribution(size, sortedRoundTripNanos, 2, "one-way us");
    }

    /**
     * The same line for a collective's calls timed one by one (nanoseconds, sorted ascending, as
     * {@link #medianMicros} leaves them), every figure per call in microseconds.
     */
    public static String callDistribution(int size, long[] sortedCallNanos) {
        return distribution(size, sortedCallNanos, 1, "per call us");
    }

    /**
     * The same line for the windows of a bandwidth test timed one by one (nanoseconds, sorted
     * ascending, as {@link #medianBandwidthMBps} leaves them), every figure per window in
     * microseconds.
     */
    public static String windowDistribution(int size, long[] sortedWindowNanos) {
        return distribution(size, sortedWindowNanos, 1, "us per window");
    }

    /** The {@code # dist} line, every figure divided by {@code per} (2: one-way of a round trip). */
    private static String distribution(int size, long[] v, int per, String unit) {
        double sum = 0;
        for (long x : v) sum += x;
        double us = per * 1e3;
        // Figures of 10 us, 100 us and 1 ms or more: how many, and what share of the total time they took.
        long[] bounds = {10_000L * per, 100_000L * per, 1_000_000L * per};
        StringBuilder tail = new StringBuilder();
        for (long bound : bounds) {
            int n = 0;
            double t = 0;
            for (int i = v.length - 1; i >= 0 && v[i] >= bound; i--) {
                n++;
                t += v[i];
            }
            tail.append(String.format(Locale.ROOT, " >=%dus %d (%.1f%%)", bound / (1_000 * per), n, 100 * t / sum));
        }
        return String.format(Locale.ROOT,
                "# dist %d: mean %.3f p50 %.3f p90 %.3f p99 %.3f p99.9 %.3f max %.3f (%s);%s",
                size, sum / v.length / us, percentile(v, 50) / us, percentile(v, 90) / us,
                percentile(v, 99) / us, percentile(v, 99.9) / us, v[v.length - 1] / us, unit, tail);
    }

    /** Nearest-rank percentile of sorted values: the smallest value with at least p % at or below it. */
    static long percentile(long[] sorted, double p) {
        int rank = (int) Math.ceil(p / 100.0 * sorted.length - 1e-9); // 0.999 * 1000 is 999.0000000000001
        return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
    }

    /**
     * The bandwidth of the median window (nanoseconds each; sorted in place) of {@code window}
     * messages of {@code size} bytes in each of {@code directions} directions: {@code --median}
     * of the bandwidth tests.
     */
    public static double medianBandwidthMBps(int size, int window, int directions, long[] windowNanos) {
        return size / 1e6 * window * directions / (medianMicros(windowNanos) / 1e6);
    }

    /**
     * Bandwidth in MB/s (10^6 bytes per second) as OSU computes it:
     * {@code size / 1e6 * iterations * window * directions / elapsed}.
     */
    public static double bandwidthMBps(int size, int iterations, int window, int directions,
                                       double elapsedSeconds) {
        return size / 1e6 * iterations * window * directions / elapsedSeconds;
    }
}
