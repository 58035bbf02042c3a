package org.ftmpi.runtime;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

import org.ftmpi.Version;

/**
 * Main class of {@code bin/ftmpirun}: parses the command line, runs the {@link Job} and exits
 * with its status. The library class path for the ranks is this JVM's own class path (the
 * script starts it with the library jars), the JVM is this JVM's {@code java.home}.
 */
public final class Launcher {
    private Launcher() {}

    public static void main(String[] args) {
        LaunchSpec spec;
        try {
            spec = LauncherOptions.parse(args, System.getenv());
        } catch (UsageException e) {
            System.err.println("ftmpirun: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (spec.help()) {
            System.out.print(LauncherOptions.HELP);
            System.exit(0);
        }
        if (spec.version()) {
            System.out.println("ftmpirun (" + Version.LIBRARY + ", wire version " + Version.WIRE + ")");
            System.exit(0);
        }
        LauncherConsole console = new LauncherConsole(spec.verbose());
        int code;
        try {
            code = new Job(spec, rankCommand(spec), console).run();
        } catch (UsageException e) {
            System.err.println("ftmpirun: " + e.getMessage());
            code = 2;
        } catch (IOException e) {
            console.message("error: " + e.getMessage());
            code = 1;
        } catch (InterruptedException e) {
            code = 1;
        } catch (RuntimeException | Error e) {
            console.message("internal error: " + e);
            e.printStackTrace();
            code = 1;
        }
        System.exit(code);
    }

    /** {@code <java> [jvm-options] -cp <lib>:<user> org.ftmpi.runtime.RankMain}. */
    static List<String> rankCommand(LaunchSpec spec) throws UsageException, IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String lib = System.getProperty("ftmpi.lib.classpath", System.getProperty("java.class.path"));
        String user = spec.userClasspath();
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.addAll(defaultRankJvmOptions());
        cmd.addAll(spec.jvmOptions());
        String mainFromJar = null;
        if (spec.jar() != null) {
            JarApp app = readJar(spec.jar());
            user = app.classpath();
            mainFromJar = app.mainClass();
        }
        cmd.add("-cp");
        cmd.add(lib.isEmpty() ? user : lib + File.pathSeparator + user);
        cmd.add(RankMain.class.getName());
        if (mainFromJar != null) {
            cmd.add(mainFromJar);
        }
        return cmd;
    }

    /** Lines of {@code $FTMPI_ROOT/conf/rank-jvm.options} (property ftmpi.root), if present. */
    static List<String> defaultRankJvmOptions() throws IOException {
        String root = System.getProperty("ftmpi.root");
        if (root == null) {
            return List.of();
        }
        Path f = Path.of(root, "conf", "rank-jvm.options");
        if (!Files.isRegularFile(f)) {
            return List.of();
        }
        List<String> opts = new ArrayList<>();
        for (String line : Files.readAllLines(f)) {
            String t = line.strip();
            if (!t.isEmpty() && !t.startsWith("#")) {
                opts.add(t);
            }
        }
        return opts;
    }

    record JarApp(String mainClass, String classpath) {}

    /** Main-Class and class path (the jar plus its manifest Class-Path) of an executable jar. */
    static JarApp readJar(String jar) throws UsageException, IOException {
        File f = new File(jar);
        if (!f.isFile()) {
            throw new UsageException("-jar " + jar + ": no such file");
        }
        try (JarFile jf = new JarFile(f)) {
            Manifest m = jf.getManifest();
            String main = m == null ? null : m.getMainAttributes().getValue(Attributes.Name.MAIN_CLASS);
            if (main == null || main.isBlank()) {
                throw new UsageException("no main manifest attribute, in " + jar);
            }
            StringBuilder cp = new StringBuilder(jar);
            String extra = m.getMainAttributes().getValue(Attributes.Name.CLASS_PATH);
            if (extra != null) {
                File dir = f.getAbsoluteFile().getParentFile();
                for (String e : extra.trim().split("\\s+")) {
                    if (!e.isEmpty()) {
                        cp.append(File.pathSeparator).append(new File(dir, e).getPath());
                    }
                }
            }
            return new JarApp(main.trim(), cp.toString());
        }
    }
}
