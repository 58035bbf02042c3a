package org.ftmpi.p2p;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.ftmpi.testutil.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link FtTrace#printLater}: the lines of a recovery are built and printed off its path. */
@Timeout(60)
class FtTraceTest {
    /** A header that says which thread built it. */
    private static final class Header {
        volatile String builtBy;

        @Override
        public String toString() {
            builtBy = Thread.currentThread().getName();
            return "HEADER";
        }
    }

    private static PrintStream to(ByteArrayOutputStream b) {
        return new PrintStream(b, true, StandardCharsets.UTF_8);
    }

    private static String text(ByteArrayOutputStream b) {
        return b.toString(StandardCharsets.UTF_8);
    }

    @Test
    void flushPrintsTheHeaderThenTheEventsOnceOnTheCallersThread() {
        FtTrace t = new FtTrace("true");
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        PrintStream out = to(b);
        t.record(100, FtTrace.NOTICE, 1, 0);
        t.record(200, FtTrace.DONE, 1, 0);
        Header h = new Header();
        t.printLater(out, 3, h);
        t.flush();
        assertEquals("HEADER\nftmpi: trace: rank 3: t=100 notice of rank 1\n"
                + "ftmpi: trace: rank 3: t=200 recovery done, generation 1\n", text(b));
        assertEquals(Thread.currentThread().getName(), h.builtBy);
        t.flush();
        assertEquals(3, text(b).lines().count(), "printed once: " + text(b));
    }

    @Test
    void withoutFlushTheTracesThreadPrintsAfterTheDelay() {
        FtTrace t = new FtTrace("true");
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        PrintStream out = to(b);
        t.record(5, FtTrace.RECOVERY, 1, 0);
        Header h = new Header();
        t.printLater(out, 0, h);
        Await.until("the trace's thread printed", Duration.ofSeconds(30), () -> text(b).contains("recovery entered"));
        assertEquals("ftmpi-trace", h.builtBy, "the header is built by the trace's thread");
        assertTrue(text(b).startsWith("HEADER\n"), text(b));
        t.flush(); // nothing left
        assertEquals(2, text(b).lines().count(), text(b));
    }

    @Test
    void twoPrintingsKeepTheirOrderAndEachTakesTheEventsRecordedBeforeIt() {
        FtTrace t = new FtTrace("true");
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        PrintStream out = to(b);
        t.record(1, FtTrace.RECOVERY, 1, 0);
        t.printLater(out, 0, "FIRST");
        t.printLater(out, 0, "SECOND");
        t.flush();
        // the first printing takes every event recorded by the time it prints; the second finds none left
        assertEquals("FIRST\nftmpi: trace: rank 0: t=1 recovery entered, generation 1\nSECOND\n", text(b));
    }

    @Test
    void anUntracedProcessPrintsNothing() {
        FtTrace t = new FtTrace("false");
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        PrintStream out = to(b);
        t.record(1, FtTrace.RECOVERY, 1, 0);
        t.printLater(out, 0, "HEADER");
        t.flush();
        assertEquals("", text(b));
    }
}
