package org.ftmpi.bench.ft;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.PriorityQueue;
import org.ftmpi.ft.detect.DetectMessage;
import org.ftmpi.ft.detect.DetectorCore;
import org.ftmpi.ft.detect.RingPlan;

/**
 * {@code bench ft-sim [N...]}: growth of failure detection and propagation with the number of
 * processes, by simulating the production detector ({@link DetectorCore}: heartbeat ring, chord
 * broadcast of FAILED, failed sets on beats) with thousands of virtual processes in virtual time.
 * Network: every datagram takes exactly {@value #DELAY_MS} ms, no loss, so the spread of the
 * notice (last survivor told minus the observer's declaration) counts broadcast hops. Period 50
 * ms, timeout 500 ms (the timeout of the measured jobs in docs/benchmarks.md; the default is 2 s); one process crashes (a crash and a hang look alike to the
 * ring: no beats) at a random time after the ring is established. Prints a table. No MPI.
 */
public final class DetectorSim {
    static final long MS = 1_000_000L;
    static final long PERIOD = 50 * MS, TIMEOUT = 500 * MS;
    static final int DELAY_MS = 1;

    private DetectorSim() {}

    public static int run(String[] args, PrintStream out, PrintStream err) {
        List<Integer> sizes = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            try {
                int n = Integer.parseInt(args[i]);
                if (n < 3) throw new NumberFormatException();
                sizes.add(n);
            } catch (NumberFormatException e) {
                err.println("bench ft-sim: N must be an integer >= 3, got '" + args[i] + "'");
                return 2;
            }
        }
        if (sizes.isEmpty()) sizes = List.of(4, 8, 16, 64, 256, 1024, 4096);
        out.println("# ft-sim: simulated detector (DetectorCore), period 50 ms, timeout 500 ms, datagram delay "
                + DELAY_MS + " ms, one crash");
        out.println("#      N  log2N  declared_ms  every_survivor_ms  spread_ms(hops)  FAILED_msgs  per_survivor"
                + "  bound_ms(timeout+ceil(log2N)*period)");
        for (int n : sizes) {
            Result r = simulate(n, 7 + n);
            int lg = 32 - Integer.numberOfLeadingZeros(n - 1);
            out.printf(Locale.ROOT, "%8d  %5d  %11.1f  %17.1f  %15.1f  %11d  %12.2f  %d%n", n, lg, r.declaredMs,
                    r.everyMs, r.everyMs - r.declaredMs, r.failedMsgs, r.failedMsgs / (double) (n - 1),
                    (TIMEOUT + lg * PERIOD) / MS);
        }
        return 0;
    }

    record Result(double declaredMs, double everyMs, long failedMsgs) {}

    /** One crash in a job of n virtual processes. */
    static Result simulate(int n, long seed) {
        String[] hosts = new String[n];
        for (int r = 0; r < n; r++) hosts[r] = "h" + r % 16;
        RingPlan plan = RingPlan.of(seed, hosts);
        long[] procIds = new long[n];
        for (int r = 0; r < n; r++) procIds[r] = r + 1;
        long[] now = {0};
        long[] failedMsgs = {0};
        long[] toldAt = new long[n];
        java.util.Arrays.fill(toldAt, -1);
        boolean[] crashed = new boolean[n];
        // (arrival, to, index into payloads)
        PriorityQueue<long[]> net = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
        List<DetectMessage> payloads = new ArrayList<>();
        DetectorCore[] cores = new DetectorCore[n];
        int victim = (int) (seed % n);
        for (int r = 0; r < n; r++) {
            int me = r;
            cores[r] = new DetectorCore(r, procIds, plan, PERIOD, TIMEOUT, 25 * MS, new DetectorCore.Actions() {
                @Override
                public void send(int to, DetectMessage m) {
                    if (m.type() == DetectMessage.FAILED) failedMsgs[0]++;
                    payloads.add(m);
                    net.add(new long[] {now[0] + DELAY_MS * MS, to, payloads.size() - 1});
                }

                @Override
                public void declared(int rank, long procId, String how, boolean here) {
                    if (rank == victim && toldAt[me] < 0) toldAt[me] = now[0];
                }

                @Override
                public void fenced(String why) {
                    // no false positives expected without loss
                }
            });
            cores[r].start(0, 0);
        }
        long crashAt = 1_000 * MS + (seed * 7919 % 50) * MS;
        long end = crashAt + TIMEOUT + 2_000 * MS;
        while (now[0] < end) {
            now[0] += MS;
            if (now[0] == crashAt) crashed[victim] = true;
            while (!net.isEmpty() && net.peek()[0] <= now[0]) {
                long[] e = net.poll();
                int to = (int) e[1];
                if (!crashed[to]) cores[to].receive(payloads.get((int) e[2]), now[0]);
            }
            for (int r = 0; r < n; r++) {
                if (!crashed[r]) cores[r].tick(now[0]);
            }
            boolean all = true;
            for (int r = 0; r < n && all; r++) all = r == victim || toldAt[r] >= 0;
            if (all) break;
        }
        long first = Long.MAX_VALUE, last = 0;
        for (int r = 0; r < n; r++) {
            if (r == victim) continue;
            if (toldAt[r] < 0) throw new IllegalStateException("survivor " + r + " never told (n " + n + ")");
            first = Math.min(first, toldAt[r]);
            last = Math.max(last, toldAt[r]);
        }
        return new Result((first - crashAt) / (double) MS, (last - crashAt) / (double) MS, failedMsgs[0]);
    }
}
