package org.ftmpi.bench.ft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code bench ft-agree-sim}: the table, the growth it shows, and its argument errors. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AgreementSimTest {
    @Test
    void theFastPathIsLogarithmicPerMemberAndTheCoordinatorLinear() {
        AgreementSim.Result fast = AgreementSim.simulate(256, 256, new int[0], new double[0]);
        AgreementSim.Result coord = AgreementSim.simulate(256, 0, new int[0], new double[0]);
        assertEquals(4 * 8, fast.maxPerMember(), "4 log2 n messages at every member");
        assertEquals(16, fast.delays(), "2 log2 n delays");
        assertEquals(4 * 255, coord.atCoordinator(), "4 (n - 1) messages at the coordinator");
        assertTrue(fast.decideUs() < coord.decideUs(), fast + " vs " + coord);
        // the first coordinator dies half-way: every live member still decides the same (checked inside)
        AgreementSim.Result one = AgreementSim.simulate(64, 64, new int[] {0}, new double[] {fast.decideUs() / 2});
        assertTrue(one.msgs() > 0);
    }

    @Test
    void printsOneRowPerSizeModeAndScenario() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertEquals(0, AgreementSim.run(new String[] {"ft-agree-sim", "4", "8"}, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)));
        long rows = out.toString(StandardCharsets.UTF_8).lines().filter(l -> !l.startsWith("#")).count();
        assertEquals(2 * 2 + 2 * 3, rows, out.toString(StandardCharsets.UTF_8)); // n 4: 0 and 1 failure; n 8: 0, 1, 4
    }

    @Test
    void aBadSizeIsNamed() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(2, AgreementSim.run(new String[] {"ft-agree-sim", "1"}, new PrintStream(new ByteArrayOutputStream(), true,
                StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8)));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("N must be an integer from 2 to 65536, got '1'"), err.toString());
    }
}
