package org.ftmpi.runtime.testprog;

import org.ftmpi.testutil.Await;
import java.time.Duration;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Map;

import org.ftmpi.runtime.ControlListener;
import org.ftmpi.runtime.JobInfo;
import org.ftmpi.runtime.RankRuntime;
import org.ftmpi.runtime.RankRuntimes;

/**
 * Rank program for the ftmpirun system tests; uses only the RankRuntime API. Modes:
 * {@code hello}, {@code stdin}, {@code exit RANK CODE} (after finalize), {@code kill RANK},
 * {@code abort RANK CODE}, {@code sleep}, {@code secret}, {@code throw RANK}, {@code cpus} (the
 * CPU affinity of the process and of all its threads), {@code last-words RANK LINES} (RANK writes
 * 80 KB of filler and then LINES numbered lines to stdout, then SIGKILLs itself at once),
 * {@code chatty RANK LINES} (every rank says its pid on stderr; RANK then writes LINES numbered
 * lines to stdout; all finalize).
 */
public final class RtProbe {
    private RtProbe() {}

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "hello";
        RankRuntime rt = RankRuntimes.fromEnvironment();
        int me = rt.preliminaryInfo().rank();
        rt.setListener(new ControlListener() {
            @Override
            public void processFailed(int rank, long procId, String how) {
                say("rank " + me + " notified: rank " + rank + " " + how + " on "
                        + Thread.currentThread().getName());
            }

            @Override
            public void abort(int exitCode, String reason) {
                say("rank " + me + " abort notice " + exitCode);
            }
        });
        JobInfo info = rt.exchange(Map.of("tcp", ("ep-" + me).getBytes(StandardCharsets.UTF_8)));
        StringBuilder eps = new StringBuilder();
        for (int r = 0; r < info.size(); r++) {
            eps.append(new String(info.endpoints().get(r).get("tcp"), StandardCharsets.UTF_8)).append(' ');
        }
        say("rank " + me + " of " + info.size() + " pid " + ProcessHandle.current().pid() + " procIds "
                + Arrays.toString(info.procIds()) + " eps " + eps.toString().trim()
                + " opt.color=" + info.option("color", "-") + " env.FOO=" + System.getenv("FOO"));
        switch (mode) {
            case "stdin" -> {
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                String line;
                while ((line = in.readLine()) != null) {
                    say("rank " + me + " read: " + line);
                }
                say("rank " + me + " stdin EOF");
            }
            case "exit" -> {
                if (me == Integer.parseInt(args[1])) {
                    rt.finalizeBarrier();
                    System.exit(Integer.parseInt(args[2]));
                }
            }
            case "kill" -> {
                // the victim dies a moment after start-up, once every rank has printed its line
                if (me == Integer.parseInt(args[1])) Await.after(Duration.ofMillis(700), Await::killSelf);
                Await.endedFromOutside();
            }
            case "last-words" -> {
                if (me == Integer.parseInt(args[1])) {
                    int n = Integer.parseInt(args[2]);
                    org.ftmpi.runtime.Signals.prepare(); // the kill is then one system call
                    String filler = "x".repeat(79) + "\n";
                    StringBuilder b = new StringBuilder();
                    for (int i = 0; i < 1000; i++) b.append(filler); // 80 KB: fills the reader's pipe
                    for (int i = 1; i <= n; i++) b.append("rank ").append(me).append(" last words ").append(i)
                            .append(" of ").append(n).append('\n');
                    System.out.print(b);
                    System.out.flush();
                    Await.killSelf(); // all of it is in the pipes to ftmpirun by now
                }
                Await.endedFromOutside();
            }
            case "chatty" -> {
                System.err.println("rank " + me + " stderr pid " + ProcessHandle.current().pid());
                System.err.flush();
                if (me == Integer.parseInt(args[1])) {
                    int n = Integer.parseInt(args[2]);
                    StringBuilder b = new StringBuilder();
                    for (int i = 1; i <= n; i++) b.append("rank ").append(me).append(" chat ").append(i).append(" of ").append(n).append('\n');
                    System.out.print(b);
                    System.out.flush();
                }
            }
            case "abort" -> {
                if (me == Integer.parseInt(args[1])) {
                    int code = Integer.parseInt(args[2]);
                    Await.after(Duration.ofMillis(300), () -> rt.abort(code, "probe abort"));
                }
                Await.endedFromOutside();
            }
            case "throw" -> {
                if (me == Integer.parseInt(args[1])) {
                    throw new IllegalStateException("probe failure");
                }
                Await.endedFromOutside();
            }
            case "sleep" -> Await.endedFromOutside();
            case "vmopt" -> say("rank " + me + " " + args[1] + "=" + java.lang.management.ManagementFactory
                    .getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class).getVMOption(args[1]).getValue());
            case "secret" -> checkSecret(me, info.secret());
            case "cpus" -> say("rank " + me + " cpus " + cpusAllowed(Path.of("/proc/self/status"))
                    + " threads " + threadCpus() + " option.bind-to=" + info.option("bind-to", "-"));
            default -> { }
        }
        rt.finalizeBarrier();
        say("rank " + me + " finalized");
        rt.close();
    }

    private static void checkSecret(int me, byte[] secret) throws Exception {
        String hex = HexFormat.of().formatHex(secret);
        String[] forms = {hex, hex.toUpperCase(), Base64.getEncoder().encodeToString(secret)};
        StringBuilder where = new StringBuilder();
        long ppid = ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(-1L);
        Map<String, String> places = new java.util.LinkedHashMap<>();
        places.put("own environment", String.join("\n", System.getenv().values()));
        places.put("own command line", read(Path.of("/proc/self/cmdline")));
        places.put("own /proc environ", read(Path.of("/proc/self/environ")));
        places.put("launcher command line", read(Path.of("/proc/" + ppid + "/cmdline")));
        places.put("launcher environ", read(Path.of("/proc/" + ppid + "/environ")));
        Process ps = new ProcessBuilder("ps", "-eww", "-o", "pid=,args=").redirectErrorStream(true).start();
        places.put("ps output", new String(ps.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        ps.waitFor();
        for (Map.Entry<String, String> e : places.entrySet()) {
            for (String f : forms) {
                if (e.getValue().contains(f)) {
                    where.append(' ').append(e.getKey());
                }
            }
        }
        say("rank " + me + " secret bytes " + secret.length + " checked " + places.size()
                + (where.isEmpty() ? " clean" : " LEAK in" + where));
    }

    /** The Cpus_allowed_list of a /proc status file. */
    private static String cpusAllowed(Path status) throws java.io.IOException {
        for (String l : Files.readAllLines(status)) {
            if (l.startsWith("Cpus_allowed_list:")) return l.substring(l.indexOf(':') + 1).trim();
        }
        return "?";
    }

    /** The distinct Cpus_allowed_list values of this JVM's threads, joined by '/'. */
    private static String threadCpus() throws java.io.IOException {
        java.util.Set<String> lists = new java.util.TreeSet<>();
        try (var tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : tasks.toList()) {
                try {
                    lists.add(cpusAllowed(t.resolve("status")));
                } catch (java.io.IOException e) {
                    // the thread ended meanwhile
                }
            }
        }
        return String.join("/", lists);
    }

    private static String read(Path p) {
        try {
            return new String(Files.readAllBytes(p), StandardCharsets.ISO_8859_1);
        } catch (Exception e) {
            return "";
        }
    }

    private static void say(String s) {
        System.out.println(s);
        System.out.flush();
    }
}
