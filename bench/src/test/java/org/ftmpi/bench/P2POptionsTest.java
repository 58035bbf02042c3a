package org.ftmpi.bench;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class P2POptionsTest {

    @Test
    void latencyDefaultsFollowOsu() {
        P2POptions o = P2POptions.parse("latency");
        assertEquals(P2PBenchmark.LATENCY, o.benchmark());
        assertEquals(0, o.minSize());
        assertEquals(1 << 22, o.maxSize());
        assertEquals(P2POptions.BufferKind.DIRECT, o.buffer());
        assertEquals(64, o.window());
        assertEquals(10_000, o.iterationsFor(8192));
        assertEquals(100, o.warmupFor(8192));
        assertEquals(1_000, o.iterationsFor(16384));
        assertEquals(10, o.warmupFor(16384));
        assertEquals(P2POptions.defaults(P2PBenchmark.LATENCY), o);
    }

    @Test
    void medianTakesTheMiddleCallOrWindow() {
        assertFalse(P2POptions.parse("latency").median());
        assertTrue(P2POptions.parse("latency", "--median").median());
        assertTrue(P2POptions.parse("allreduce", "--median").median());
        assertTrue(P2POptions.parse("barrier", "--median").median());
        assertTrue(P2POptions.parse("bw", "--median").median());
        assertTrue(P2POptions.parse("bibw", "--median").median());
        // bw: the median window's bandwidth; 64 messages of 8 B in 2.5 us is 204.8 MB/s
        assertEquals(204.8, OsuTable.medianBandwidthMBps(8, 64, 1, new long[] {2500, 90_000, 2400, 2600, 2500}), 1e-9);
        assertEquals(409.6, OsuTable.medianBandwidthMBps(8, 64, 2, new long[] {2500}), 1e-9);
        assertTrue(OsuTable.header(P2POptions.parse("bw", "--median"), "h").contains("Median-window bandwidth (MB/s)"));
        assertTrue(OsuTable.windowDistribution(8, new long[] {2400, 2500, 2500, 2600, 90_000}).contains("us per window"));
        // a collective's median is per call, in microseconds
        assertEquals(9.0, OsuTable.medianMicros(new long[] {9000, 3000, 1_000_000}), 1e-9);
        assertTrue(OsuTable.header(P2POptions.parse("barrier", "--median"), "h").contains("Median latency (us)"));
        // one-way = half the median round trip, in microseconds; even counts average the middle two
        assertEquals(4.5, OsuTable.medianOneWayMicros(new long[] {9000, 3000, 1_000_000}), 1e-9);
        assertEquals(2.0, OsuTable.medianOneWayMicros(new long[] {5000, 3000, 1_000_000, 1000}), 1e-9);
        assertTrue(OsuTable.header(P2POptions.parse("latency", "--median"), "h").contains("Median latency (us)"));
    }

    @Test
    void bandwidthDefaultsFollowOsu() {
        P2POptions o = P2POptions.parse("bw");
        assertEquals(P2PBenchmark.BANDWIDTH, o.benchmark());
        assertEquals(1, o.minSize());
        assertEquals(100, o.iterationsFor(1));
        assertEquals(10, o.warmupFor(8192));
        assertEquals(20, o.iterationsFor(8193));
        assertEquals(2, o.warmupFor(1 << 22));
        assertEquals(P2PBenchmark.BANDWIDTH, P2POptions.parse("bandwidth").benchmark());
        assertEquals(P2PBenchmark.BIBW, P2POptions.parse("BIBW").benchmark());
    }

    @Test
    void collectiveDefaultsFollowOsu() {
        P2POptions a = P2POptions.parse("allreduce");
        assertEquals(P2PBenchmark.ALLREDUCE, a.benchmark());
        assertFalse(a.benchmark().pairOnly());
        assertFalse(a.benchmark().higherIsBetter());
        assertEquals(List.of(4, 8, 16), a.sizes().subList(0, 3));
        assertEquals(1 << 20, a.maxSize());
        assertEquals(1000, a.iterationsFor(8));
        assertEquals(200, a.warmupFor(8));
        assertEquals(100, a.iterationsFor(16384));
        assertEquals(10, a.warmupFor(16384));
        P2POptions b = P2POptions.parse("barrier");
        assertEquals(List.of(0), b.sizes());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> P2POptions.parse("allreduce", "-m", "1:64"));
        assertTrue(e.getMessage().contains("at least 4"), e.getMessage());
    }

    @Test
    void sizesDoubleFromZeroOrMin() {
        List<Integer> lat = P2POptions.parse("latency").sizes();
        assertEquals(24, lat.size());
        assertEquals(List.of(0, 1, 2, 4), lat.subList(0, 4));
        assertEquals(1 << 22, lat.get(lat.size() - 1));
        assertEquals(23, P2POptions.parse("bw").sizes().size());
        assertEquals(List.of(3, 6, 12), P2POptions.parse("bibw", "-m", "3:20").sizes());
        assertEquals(List.of(0), P2POptions.parse("latency", "-m", "0:0").sizes());
    }

    @Test
    void messageSizeForms() {
        P2POptions o = P2POptions.parse("latency", "-m", "64");
        assertEquals(0, o.minSize());
        assertEquals(64, o.maxSize());
        o = P2POptions.parse("bw", "-m", "1K:1M");
        assertEquals(1024, o.minSize());
        assertEquals(1 << 20, o.maxSize());
        o = P2POptions.parse("bw", "-m", "128:");
        assertEquals(128, o.minSize());
        assertEquals(1 << 22, o.maxSize());
        o = P2POptions.parse("bw", "--message-size=:256");
        assertEquals(1, o.minSize());
        assertEquals(256, o.maxSize());
    }

    @Test
    void overridesApplyToAllSizes() {
        P2POptions o = P2POptions.parse("bibw", "-i", "7", "-x", "0", "-W", "8");
        assertEquals(7, o.iterationsFor(1));
        assertEquals(7, o.iterationsFor(1 << 22));
        assertEquals(0, o.warmupFor(1));
        assertEquals(0, o.warmupFor(1 << 22));
        assertEquals(8, o.window());
        o = P2POptions.parse("latency", "--buffer", "array", "--iterations=5");
        assertEquals(P2POptions.BufferKind.ARRAY, o.buffer());
        assertEquals(5, o.iterationsFor(0));
    }

    @Test
    void errorsAreReported() {
        assertThrows(IllegalArgumentException.class, P2POptions::parse);
        assertThrows(IllegalArgumentException.class, () -> P2POptions.parse("alltoall"));
        assertThrows(IllegalArgumentException.class, () -> P2POptions.parse("latency", "-i"));
        assertThrows(IllegalArgumentException.class, () -> P2POptions.parse("latency", "-i", "0"));
        assertThrows(IllegalArgumentException.class, () -> P2POptions.parse("latency", "-x", "-1"));
        assertThrows(IllegalArgumentException.class, () -> P2POptions.parse("latency", "-i", "ten"));
        assertThrows(IllegalArgumentException.class, () -> P2POptions.parse("bw", "-W", "0"));
        assertThrows(IllegalArgumentException.class, () -> P2POptions.parse("bw", "-m", "64:8"));
        assertThrows(IllegalArgumentException.class, () -> P2POptions.parse("bw", "-m", ":"));
        assertThrows(IllegalArgumentException.class, () -> P2POptions.parse("bw", "-m", "4096M"));
        assertThrows(IllegalArgumentException.class, () -> P2POptions.parse("latency", "--buffer", "heap"));
        assertThrows(IllegalArgumentException.class, () -> P2POptions.parse("latency", "--frobnicate"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> P2POptions.parse("bw", "--buffer", "array"));
        assertTrue(e.getMessage().contains("latency"), e.getMessage());
    }

    @Test
    void usageListsBenchmarksAndOptions() {
        String u = P2POptions.usage();
        for (String s : List.of("latency", "bandwidth", "bw", "bibw", "-m", "-i", "-x", "-W", "--buffer")) {
            assertTrue(u.contains(s), s);
        }
    }
}
