package org.ftmpi.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class OsuTableTest {

    @Test
    void columnHeadersMatchOsu() {
        assertEquals("# Size          Latency (us)", OsuTable.columnLine(P2PBenchmark.LATENCY));
        assertEquals("# Size      Bandwidth (MB/s)", OsuTable.columnLine(P2PBenchmark.BANDWIDTH));
        assertEquals("# Size      Bandwidth (MB/s)", OsuTable.columnLine(P2PBenchmark.BIBW));
        assertEquals("# FT-MPI/J Latency Test " + OsuTable.VERSION, OsuTable.titleLine(P2PBenchmark.LATENCY));
        assertEquals("# FT-MPI/J Bi-Directional Bandwidth Test " + OsuTable.VERSION,
                OsuTable.titleLine(P2PBenchmark.BIBW));
    }

    @Test
    void rowsAreAlignedWithTwoDecimals() {
        assertEquals("0                       0.25", OsuTable.row(0, 0.254));
        assertEquals("8                      12.35", OsuTable.row(8, 12.345678));
        assertEquals("4194304             12345.68", OsuTable.row(4194304, 12345.678));
        assertEquals(28, OsuTable.row(1, 1.0).length());
        assertEquals(OsuTable.columnLine(P2PBenchmark.LATENCY).length(), OsuTable.row(1, 1.0).length());
    }

    @Test
    void headerEndsWithColumnLineAndIsAllComments() {
        String h = OsuTable.header(P2POptions.parse("bw", "-W", "32"), "node1");
        String[] lines = h.split("\n");
        for (String l : lines) {
            assertTrue(l.startsWith("#"), l);
        }
        assertEquals(OsuTable.columnLine(P2PBenchmark.BANDWIDTH), lines[lines.length - 1]);
        assertTrue(h.contains("window 32"));
        assertTrue(h.contains("# Host: node1"));
    }

    @Test
    void osuFormulas() {
        // 10000 round trips in 0.05 s: 2.5 us one way
        assertEquals(2.5, OsuTable.latencyMicros(0.05, 10_000), 1e-12);
        // 1 MiB * 20 iterations * 64 window in 1 s = 1342.18 MB/s; bibw counts both directions
        assertEquals(1342.177280, OsuTable.bandwidthMBps(1 << 20, 20, 64, 1, 1.0), 1e-6);
        assertEquals(2684.354560, OsuTable.bandwidthMBps(1 << 20, 20, 64, 2, 1.0), 1e-6);
    }

    @Test
    void distributionReportsOneWayPercentilesAndTheShareOfLongRoundTrips() {
        // 1000 round trips: 990 of 1 us, 9 of 40 us (20 us one-way), 1 of 4 ms (2 ms one-way)
        long[] rtt = new long[1000];
        java.util.Arrays.fill(rtt, 1_000);
        for (int i = 990; i < 999; i++) rtt[i] = 40_000;
        rtt[999] = 4_000_000;
        double total = 990 * 1_000 + 9 * 40_000 + 4_000_000; // 5.35 ms
        String line = OsuTable.distribution(8, rtt);
        assertEquals(String.format(java.util.Locale.ROOT,
                "# dist 8: mean %.3f p50 0.500 p90 0.500 p99 0.500 p99.9 20.000 max 2000.000 (one-way us);"
                        + " >=10us 10 (%.1f%%) >=100us 1 (%.1f%%) >=1000us 1 (%.1f%%)",
                total / 1000 / 2e3, 100 * (total - 990 * 1_000) / total, 100 * 4_000_000 / total,
                100 * 4_000_000 / total), line);
    }

    @Test
    void callDistributionIsPerCallWithTheSameBoundsInMicroseconds() {
        long[] calls = new long[100];
        java.util.Arrays.fill(calls, 5_000); // 5 us
        calls[98] = 20_000; // 20 us
        calls[99] = 2_000_000; // 2 ms
        double total = 98 * 5_000 + 20_000 + 2_000_000;
        assertEquals(String.format(java.util.Locale.ROOT,
                "# dist 8: mean %.3f p50 5.000 p90 5.000 p99 20.000 p99.9 2000.000 max 2000.000 (per call us);"
                        + " >=10us 2 (%.1f%%) >=100us 1 (%.1f%%) >=1000us 1 (%.1f%%)",
                total / 100 / 1e3, 100 * 2_020_000 / total, 100 * 2_000_000 / total, 100 * 2_000_000 / total),
                OsuTable.callDistribution(8, calls));
    }

    @Test
    void percentileIsTheNearestRank() {
        long[] v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
        assertEquals(5, OsuTable.percentile(v, 50));
        assertEquals(10, OsuTable.percentile(v, 99.9));
        assertEquals(1, OsuTable.percentile(v, 0));
        assertEquals(9, OsuTable.percentile(v, 90));
    }
}
