package org.ftmpi.runtime;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Detection latency benchmark (a test-scope main, not a unit test):
 * <pre>
 *   java -cp ft-core/target/test-classes:ft-core/target/classes org.ftmpi.runtime.DetectionBench [TRIALS] [NP] [PERIOD_MS] [TIMEOUT_MS]
 * </pre>
 * Each trial starts {@code bin/ftmpirun -np NP --opt recovery-mode=ignore} with
 * {@link org.ftmpi.runtime.testprog.DetectProbe}, signals rank 1, and reads the epoch-microsecond
 * time at which every survivor's listener got the notice. Reports, per signal, the median over
 * trials of the first and the last survivor's notice after the signal.
 */
public final class DetectionBench {
    private static final Pattern READY = Pattern.compile("ready rank (\\d+) pid (\\d+)");
    private static final Pattern NOTICE = Pattern.compile("notice rank (\\d+) failed (\\d+) at (\\d+)");

    private DetectionBench() {}

    public static void main(String[] args) throws Exception {
        int trials = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int np = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        String period = args.length > 2 ? args[2] : "50";
        String timeout = args.length > 3 ? args[3] : "500";
        for (String sig : List.of("KILL", "STOP")) {
            List<Double> first = new ArrayList<>();
            List<Double> last = new ArrayList<>();
            for (int t = 0; t < trials; t++) {
                double[] fl = trial(sig, np, period, timeout);
                first.add(fl[0]);
                last.add(fl[1]);
            }
            System.out.printf("np %d, hb %s/%s ms, SIG%s of rank 1, %d trials: first survivor told after %.1f ms"
                    + " (median; min %.1f, max %.1f), every survivor after %.1f ms (median; min %.1f, max %.1f)%n",
                    np, period, timeout, sig, trials, median(first), Collections.min(first), Collections.max(first),
                    median(last), Collections.min(last), Collections.max(last));
        }
    }

    /** Returns {ms to the first survivor's notice, ms to the last}. */
    private static double[] trial(String sig, int np, String period, String timeout) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(FtmpirunSystemTest.root().resolve("bin/ftmpirun").toString(),
                "-np", Integer.toString(np), "--hb-period", period, "--hb-timeout", timeout,
                "--opt", "recovery-mode=ignore", "java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-cp", Path.of("ft-core/target/test-classes").toAbsolutePath().toString(),
                "org.ftmpi.runtime.testprog.DetectProbe", "1", "20000"));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD);
        pb.environment().put("FTMPI_DEV_CLASSES", "1");
        Process p = pb.start();
        LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        CompletableFuture.runAsync(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) lines.add(l);
            } catch (java.io.IOException ignored) {
                // ended
            }
        });
        long victim = -1;
        int ready = 0;
        while (ready < np) {
            String l = lines.poll(20, TimeUnit.SECONDS);
            if (l == null) throw new IllegalStateException("ranks did not start");
            Matcher m = READY.matcher(l);
            if (m.find()) {
                ready++;
                if (m.group(1).equals("1")) victim = Long.parseLong(m.group(2));
            }
        }
        // Let the ring settle (its first heartbeats go round); nothing may be reported meanwhile.
        String early = lines.poll(300, TimeUnit.MILLISECONDS);
        if (early != null) throw new IllegalStateException("output before the fault: " + early);
        long t0 = ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
        Signals.send(victim, sig.equals("KILL") ? Signals.SIGKILL : Signals.SIGSTOP);
        long firstUs = Long.MAX_VALUE;
        long lastUs = 0;
        int told = 0;
        while (told < np - 1) {
            String l = lines.poll(20, TimeUnit.SECONDS);
            if (l == null) throw new IllegalStateException("not every survivor was told");
            Matcher m = NOTICE.matcher(l);
            if (m.find() && m.group(2).equals("1")) {
                long us = Long.parseLong(m.group(3));
                firstUs = Math.min(firstUs, us);
                lastUs = Math.max(lastUs, us);
                told++;
            }
        }
        p.waitFor(20, TimeUnit.SECONDS);
        return new double[] {(firstUs - t0) / 1000.0, (lastUs - t0) / 1000.0};
    }

    private static double median(List<Double> xs) {
        List<Double> s = new ArrayList<>(xs);
        Collections.sort(s);
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }
}
