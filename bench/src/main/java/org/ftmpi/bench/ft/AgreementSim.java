package org.ftmpi.bench.ft;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.PriorityQueue;
import java.util.Random;

import org.ftmpi.p2p.AgreementNode;

/**
 * {@code bench ft-agree-sim [N...]}: growth of the agreement with the number of processes, by
 * running the library's own agreement state machine ({@link AgreementNode}: the
 * {@code FtProtocol}/{@code Agreement} code every engine runs) for thousands of virtual members in
 * virtual time, in one thread. Delay model (LogGP-like, microseconds): a message costs its sender
 * {@value #O_US} us of processing plus {@value #G_US_PER_KB} us per KiB, then travels
 * {@value #L_US} us, then costs its receiver {@value #O_US} us; a member handles one message at a
 * time (its sends and receives queue behind each other), so a coordinator that handles n messages
 * pays n times. A failed member sends nothing more and drops what reaches it; every survivor learns
 * of a failure {@value #DETECT_US} us after it (the controller's notice). Scenarios: no failure;
 * the first coordinator (member 0) killed half-way through the failure-free agreement
 * (in virtual time); member 0 and three seeded random members killed at 10, 30, 50 and 70% of it. Checks on every run: every live
 * member decides, every member that decided (victims included) decided the same value and failed
 * set, and the value keeps every live member's zero bits. No MPI.
 */
public final class AgreementSim {
    static final double L_US = 5, O_US = 1, G_US_PER_KB = 1, DETECT_US = 50;

    private AgreementSim() {}

    /** One scenario's outcome. */
    record Result(double decideUs, int delays, long msgs, long maxPerMember, long atCoordinator, long maxBytes) {}

    public static int run(String[] args, PrintStream out, PrintStream err) {
        List<Integer> sizes = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            try {
                int n = Integer.parseInt(args[i]);
                if (n < 2 || n > 65536) throw new NumberFormatException();
                sizes.add(n);
            } catch (NumberFormatException e) {
                err.println("bench ft-agree-sim: N must be an integer from 2 to 65536, got '" + args[i] + "'");
                return 2;
            }
        }
        if (sizes.isEmpty()) sizes = List.of(4, 8, 16, 64, 256, 1024, 4096);
        out.printf(Locale.ROOT, "# ft-agree-sim: the library's agreement state machine (AgreementNode) with N virtual members;"
                + " message: sender %.0f us + %.0f us/KiB, wire %.0f us, receiver %.0f us; failure notice %.0f us after a death%n",
                O_US, G_US_PER_KB, L_US, O_US, DETECT_US);
        out.println("# mode fast = recursive-doubling fast path first (agree-fast >= N), coord = coordinator protocol only (agree-fast=0)");
        out.println("# delays = message delays on the longest causal chain to the last decision; per_member = max messages"
                + " sent+received by one member; at_coord = by member 0 (or the first live coordinator)");
        out.println("#      N  mode   failures  decide_us  delays  msgs_total  per_member  at_coord  max_KiB_per_member");
        for (int n : sizes) {
            for (String mode : List.of("coord", "fast")) {
                int fastMax = mode.equals("fast") ? n : 0;
                Result ok = simulate(n, fastMax, new int[0], new double[0]);
                print(out, n, mode, "0", ok);
                // the first coordinator dies half-way through the failure-free agreement
                print(out, n, mode, "1", simulate(n, fastMax, new int[] {0}, new double[] {0.5 * ok.decideUs()}));
                if (n >= 8) {
                    // member 0 and three others (seeded) at 10, 30, 50 and 70% of it
                    Random rnd = new Random(31L * n);
                    int[] victims = {0, 0, 0, 0};
                    for (int j = 1; j < 4; j++) {
                        int v;
                        do v = 1 + rnd.nextInt(n - 1); while (v == victims[1] || v == victims[2]);
                        victims[j] = v;
                    }
                    double[] at = {0.1 * ok.decideUs(), 0.3 * ok.decideUs(), 0.5 * ok.decideUs(), 0.7 * ok.decideUs()};
                    print(out, n, mode, "4", simulate(n, fastMax, victims, at));
                }
            }
        }
        return 0;
    }

    private static void print(PrintStream out, int n, String mode, String failures, Result r) {
        out.printf(Locale.ROOT, "%8d  %-5s  %8s  %9.1f  %6d  %10d  %10d  %8d  %18.1f%n", n, mode, failures, r.decideUs(),
                r.delays(), r.msgs(), r.maxPerMember(), r.atCoordinator(), r.maxBytes() / 1024.0);
    }

    private static final int START = 0, MSG = 1, DEATH = 2, NOTICE = 3;

    /** An event at {@code atUs}: a member starts, a message arrives, a member dies, or a survivor hears of a death. */
    private record Event(double atUs, long seq, int type, int node, int from, int kind, byte[] payload, int depth)
            implements Comparable<Event> {
        @Override
        public int compareTo(Event o) {
            int c = Double.compare(atUs, o.atUs);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    /**
     * One agreement (instance 0) of {@code n} members, member {@code i} contributing
     * {@code ~(1 << i % 31)}; {@code victims[j]} dies at {@code dieAtUs[j]}.
     */
    static Result simulate(int n, int fastMax, int[] victims, double[] dieAtUs) {
        PriorityQueue<Event> q = new PriorityQueue<>();
        long[] seq = {0};
        double[] busy = new double[n], now = {0};
        int[] depth = new int[n], curDepth = {0};
        long[] count = new long[n], bytes = new long[n];
        boolean[] dead = new boolean[n];
        int[] value = new int[n];
        AgreementNode[] nodes = new AgreementNode[n];
        AgreementNode.Io io = (from, to, kind, payload) -> {
            now[0] += O_US + G_US_PER_KB * payload.length / 1024.0;
            count[from]++;
            bytes[from] += payload.length;
            q.add(new Event(now[0] + L_US, seq[0]++, MSG, to, from, kind, payload, curDepth[0] + 1));
        };
        for (int i = 0; i < n; i++) {
            nodes[i] = new AgreementNode(i, n, 2, fastMax, io);
            value[i] = ~(1 << (i % 31));
            q.add(new Event(0, seq[0]++, START, i, -1, 0, null, 0));
        }
        for (int j = 0; j < victims.length; j++) q.add(new Event(dieAtUs[j], seq[0]++, DEATH, victims[j], -1, 0, null, 0));
        double[] decidedAt = new double[n];
        int[] decidedDepth = new int[n];
        Arrays.fill(decidedAt, -1);
        while (!q.isEmpty()) {
            Event e = q.poll();
            int i = e.node();
            if (e.type() == DEATH) {
                if (dead[i]) continue;
                dead[i] = true;
                for (int j = 0; j < n; j++) {
                    if (j != i) q.add(new Event(e.atUs() + DETECT_US, seq[0]++, NOTICE, j, i, 0, null, 0));
                }
                continue;
            }
            if (dead[i]) continue; // a dead member handles nothing; what reaches it is lost
            now[0] = Math.max(e.atUs(), busy[i]) + (e.type() == MSG ? O_US : 0);
            if (e.type() == MSG) {
                count[i]++;
                bytes[i] += e.payload().length;
                depth[i] = Math.max(depth[i], e.depth());
            }
            curDepth[0] = depth[i];
            switch (e.type()) {
                case START -> nodes[i].start(0, value[i]);
                case MSG -> nodes[i].receive(e.from(), e.kind(), e.payload());
                case NOTICE -> nodes[i].failed(e.from());
                default -> throw new IllegalStateException("event " + e.type());
            }
            busy[i] = now[0];
            if (decidedAt[i] < 0 && nodes[i].decided(0)) {
                decidedAt[i] = now[0];
                decidedDepth[i] = depth[i];
            }
        }
        return check(n, nodes, dead, value, decidedAt, decidedDepth, count, bytes);
    }

    private static Result check(int n, AgreementNode[] nodes, boolean[] dead, int[] value, double[] decidedAt,
                                int[] decidedDepth, long[] count, long[] bytes) {
        Integer v = null;
        int[] fs = null;
        double last = 0;
        int delays = 0, coord = -1;
        long total = 0, maxPer = 0, maxBytes = 0;
        for (int i = 0; i < n; i++) {
            total += count[i];
            maxPer = Math.max(maxPer, count[i]);
            maxBytes = Math.max(maxBytes, bytes[i]);
            if (!dead[i] && coord < 0) coord = i;
            if (!nodes[i].decided(0)) {
                if (!dead[i]) throw new IllegalStateException("n " + n + ": live member " + i + " never decided");
                continue;
            }
            int[] f = nodes[i].failedSet(0);
            if (v == null) {
                v = nodes[i].value(0);
                fs = f;
            } else if (v != nodes[i].value(0) || !Arrays.equals(fs, f)) {
                throw new IllegalStateException("n " + n + ": member " + i + " decided " + nodes[i].value(0)
                        + " " + Arrays.toString(f) + ", another " + v + " " + Arrays.toString(fs));
            }
            if (!dead[i]) {
                last = Math.max(last, decidedAt[i]);
                delays = Math.max(delays, decidedDepth[i]);
                if ((v & ~value[i]) != 0) throw new IllegalStateException("n " + n + ": value " + v + " lost a zero of member " + i);
            }
        }
        return new Result(last, delays, total / 2, maxPer, Math.max(count[0], count[coord]), maxBytes);
    }
}
