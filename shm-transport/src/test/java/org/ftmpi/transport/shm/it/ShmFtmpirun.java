package org.ftmpi.transport.shm.it;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a job of this module's test programs through the real launcher ({@code bin/ftmpirun}). */
final class ShmFtmpirun {
    private ShmFtmpirun() {}

    static final Path ROOT = findRoot();

    private static Path findRoot() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("bin/ftmpirun"))) p = p.getParent();
        if (p == null) throw new IllegalStateException("bin/ftmpirun not found above " + Path.of("").toAbsolutePath());
        return p;
    }

    record Result(int exit, String out, String err) {}

    /**
     * @param wrapper      a command that runs the launcher (its arguments follow), or empty
     * @param launcherArgs launcher options before the class
     * @param main         the rank program (a class of this module's tests)
     * @param args         its arguments
     * @param limitSeconds how long the launcher may take before it and its processes are killed
     */
    static Result run(List<String> wrapper, List<String> launcherArgs, Class<?> main, List<String> args,
                      int limitSeconds) throws IOException, InterruptedException {
        String cp = ROOT.resolve("shm-transport/target/test-classes") + File.pathSeparator
                + ROOT.resolve("ft-core/target/test-classes"); // org.ftmpi.testutil
        List<String> cmd = new ArrayList<>(wrapper);
        cmd.add(ROOT.resolve("bin/ftmpirun").toString());
        cmd.addAll(launcherArgs);
        cmd.addAll(List.of("-cp", cp, main.getName()));
        cmd.addAll(args);
        Path out = Files.createTempFile("shm-out", ".txt");
        Path err = Files.createTempFile("shm-err", ".txt");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().put("FTMPI_DEV_CLASSES", "1");
        Process p = pb.start();
        if (!p.waitFor(limitSeconds, TimeUnit.SECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly().waitFor();
            fail("ftmpirun timed out:\n" + Files.readString(out) + Files.readString(err));
        }
        Result r = new Result(p.exitValue(), Files.readString(out), Files.readString(err));
        Files.deleteIfExists(out);
        Files.deleteIfExists(err);
        return r;
    }
}
