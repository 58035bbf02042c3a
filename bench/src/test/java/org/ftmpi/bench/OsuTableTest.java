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
}
