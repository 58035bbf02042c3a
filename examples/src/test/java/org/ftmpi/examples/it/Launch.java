package org.ftmpi.examples.it;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

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
}
