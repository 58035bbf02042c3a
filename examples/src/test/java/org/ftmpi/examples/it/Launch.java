package org.ftmpi.examples.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/** Runs commands of a fresh checkout (bin/ftmpirun, bin/mpijavac) and captures what they print. */
final class Launch {
    static final Path ROOT = findRoot();

    record Result(int exit, String out, String err, long millis) {
        @Override
        public String toString() {
            return "exit " + exit + " after " + millis + " ms\n--- stdout\n" + out + "\n--- stderr\n" + err;
        }
    }

    private Launch() {}

    private static Path findRoot() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("bin/ftmpirun"))) p = p.getParent();
        if (p == null) throw new IllegalStateException("bin/ftmpirun not found above " + Path.of("").toAbsolutePath());
        return p;
    }

    static String testClasspath() {
        return ROOT.resolve("examples/target/test-classes") + File.pathSeparator + ROOT.resolve("examples/target/classes")
                + File.pathSeparator + ROOT.resolve("ft-core/target/test-classes"); // org.ftmpi.testutil
    }

    /** Runs a command with a hard time limit; the process tree is killed if it overruns. */
    static Result run(Path dir, long timeoutSec, String... cmd) throws IOException, InterruptedException {
        List<String> c = new ArrayList<>(List.of(cmd));
        if (!c.get(0).contains("/")) c.set(0, ROOT.resolve("bin").resolve(c.get(0)).toString());
        Path out = Files.createTempFile("ftmpi-out", ".txt");
        Path err = Files.createTempFile("ftmpi-err", ".txt");
        ProcessBuilder pb = new ProcessBuilder(c).directory(dir.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        long t0 = System.nanoTime();
        Process p = pb.start();
        boolean done = p.waitFor(timeoutSec, TimeUnit.SECONDS);
        if (!done) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly().waitFor();
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        Result r = new Result(done ? p.exitValue() : -1, Files.readString(out), Files.readString(err), ms);
        Files.deleteIfExists(out);
        Files.deleteIfExists(err);
        if (!done) throw new AssertionError("timed out after " + timeoutSec + " s: " + String.join(" ", c) + "\n" + r);
        return r;
    }

    /**
     * Rank {@code victim} died of SIGKILL: its own "injecting fault" line and the launcher's death
     * line for it. (Until session 20 either was accepted: the controller's kill of a dying rank
     * closed its pipes, and its last lines were sometimes lost; docs/fault-tolerance.md, "A dead
     * rank's last output".)
     */
    static void assertKilled(Launch.Result r, int victim) {
        boolean own = r.err().contains("ftmpi: injecting fault: SIGKILL to rank " + victim + " ");
        boolean launcher = Pattern.compile("ftmpirun: rank " + victim + " \\(pid \\d+\\) was killed by signal 9 \\(SIGKILL\\)")
                .matcher(r.err()).find();
        assertTrue(own && launcher, "rank " + victim + " was not SIGKILLed, or a line of it is missing:\n" + r);
    }
}
