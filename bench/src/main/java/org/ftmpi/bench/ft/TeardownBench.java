package org.ftmpi.bench.ft;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code bench ft-teardown [trials] [live-MB ...]}: how long the kernel takes to end a SIGKILLed
 * JVM, which every detection signal waits for. The kernel frees a dying process's memory (exit_mm)
 * before it closes its files (the TCP connections: the peers' EOF) and before it becomes a zombie
 * (the parent's waitpid: the job controller's notice), so the whole teardown is on the path from a
 * SIGKILL to the survivors' notice.
 *
 * <p>Run it with {@code bin/ftmpirun -np 1 bench ft-teardown}: each child is a JVM started with this
 * rank JVM's own options (conf/rank-jvm.options, the launcher's and the user's) plus one variant's
 * flags; it keeps {@code live} MB of {@code byte[]} reachable, allocates garbage for
 * {@value #CHURN_MS} ms (as a running rank touches its young generation), reports ready, and is then
 * SIGKILLed; the time is from just before the signal to the return of {@link Process#waitFor()}.
 * Variants and heap sizes are interleaved; one RESULT line per (variant, live) with medians.
 */
public final class TeardownBench {
    static final int CHURN_MS = 1000;
    /** Variant name -> extra JVM flags (appended after the rank's own options, so they win). */
    static final Map<String, List<String>> VARIANTS = new LinkedHashMap<>();

    static {
        VARIANTS.put("g1", List.of("-XX:+UseG1GC", "-XX:-UseTransparentHugePages"));
        VARIANTS.put("g1-thp", List.of("-XX:+UseG1GC", "-XX:+UseTransparentHugePages"));
        VARIANTS.put("serial", List.of("-XX:+UseSerialGC", "-XX:-UseTransparentHugePages"));
        VARIANTS.put("serial-thp", List.of("-XX:+UseSerialGC", "-XX:+UseTransparentHugePages"));
    }

    private TeardownBench() {}

    public static int run(String[] args, PrintStream out, PrintStream err) throws IOException, InterruptedException {
        int trials = 7;
        List<Integer> lives = new ArrayList<>();
        try {
            if (args.length > 1) trials = Integer.parseInt(args[1]);
            for (int i = 2; i < args.length; i++) lives.add(Integer.parseInt(args[i]));
            if (trials < 1 || lives.stream().anyMatch(x -> x < 0)) throw new NumberFormatException();
        } catch (NumberFormatException e) {
            err.println("bench ft-teardown: usage: ft-teardown [trials >= 1] [live-MB >= 0 ...]");
            return 2;
        }
        if (lives.isEmpty()) lives = List.of(0, 64, 256);
        List<String> own = ManagementFactory.getRuntimeMXBean().getInputArguments();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("java.class.path");
        out.println("# ft-teardown: SIGKILL to waitpid of a child JVM; own JVM options " + own);
        Map<String, List<double[]>> samples = new LinkedHashMap<>();
        String[] names = VARIANTS.keySet().toArray(String[]::new);
        for (int t = 0; t < trials; t++) {
            for (int live : lives) {
                for (int k = 0; k < names.length; k++) {
                    String v = names[(k + t) % names.length]; // rotate the order per trial
                    List<String> cmd = new ArrayList<>();
                    cmd.add(java);
                    cmd.addAll(own.stream().filter(o -> !o.startsWith("-agentlib") && !o.startsWith("-javaagent")).toList());
                    cmd.addAll(VARIANTS.get(v));
                    cmd.addAll(List.of("-cp", cp, Child.class.getName(), Integer.toString(live)));
                    samples.computeIfAbsent(v + " " + live, x -> new ArrayList<>()).add(killOne(cmd));
                }
            }
        }
        String load = Files.readString(Path.of("/proc/loadavg")).strip();
        for (Map.Entry<String, List<double[]>> e : samples.entrySet()) {
            List<double[]> l = e.getValue();
            double[] ms = l.stream().mapToDouble(x -> x[0]).sorted().toArray();
            String[] key = e.getKey().split(" ");
            out.printf(Locale.ROOT, "RESULT ft-teardown variant %s live_mb %s trials %d kill_to_waitpid_ms median %.2f"
                            + " min %.2f max %.2f rss_mb %.0f anon_huge_mb %.0f loadavg %s%n", key[0], key[1], ms.length,
                    FtBench.median(ms), ms[0], ms[ms.length - 1],
                    FtBench.median(l.stream().mapToDouble(x -> x[1]).toArray()),
                    FtBench.median(l.stream().mapToDouble(x -> x[2]).toArray()), load.replace(' ', '/'));
        }
        return 0;
    }

    /** Starts the child, waits for it to be ready, SIGKILLs it: {ms to waitpid, RSS MB, AnonHugePages MB}. */
    private static double[] killOne(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII));
        String line = r.readLine();
        if (!"ready".equals(line)) {
            p.destroyForcibly().waitFor();
            throw new IOException("child did not start: " + line);
        }
        double rss = statusMb(p.pid(), "/status", "VmRSS:");
        double huge = statusMb(p.pid(), "/smaps_rollup", "AnonHugePages:");
        long t0 = System.nanoTime();
        p.toHandle().destroyForcibly();
        p.waitFor();
        long t1 = System.nanoTime();
        p.getOutputStream().close();
        return new double[] {(t1 - t0) / 1e6, rss, huge};
    }

    /** The {@code key} line of /proc/PID/FILE in MB; NaN (printed "NaN") when the kernel has no such line. */
    private static double statusMb(long pid, String file, String key) throws IOException {
        Path f = Path.of("/proc/" + pid + file);
        if (!Files.exists(f)) return Double.NaN;
        for (String l : Files.readAllLines(f)) {
            if (l.startsWith(key)) return Long.parseLong(l.substring(key.length()).strip().split("\\s+")[0]) / 1024.0;
        }
        return Double.NaN;
    }

    /** The child: {@code live} MB reachable, garbage for a while, "ready", then waits to be killed. */
    public static final class Child {
        static volatile Object sink;

        private Child() {}

        public static void main(String[] args) throws IOException {
            int live = Integer.parseInt(args[0]);
            byte[][] keep = new byte[live][];
            for (int i = 0; i < live; i++) {
                keep[i] = new byte[1 << 20];
                Arrays.fill(keep[i], (byte) i);
            }
            long end = System.nanoTime() + CHURN_MS * 1_000_000L;
            while (System.nanoTime() < end) sink = new byte[4096];
            sink = keep;
            System.out.println("ready");
            System.out.flush();
            System.in.read(); // killed here
        }
    }
}
