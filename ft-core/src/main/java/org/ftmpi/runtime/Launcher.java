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
            code = new Job(spec, rankCommand(spec, console), console).run();
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

    /**
     * {@code <java> [-XX:AOTCache=...] [jvm-options] -cp <lib>:<user> org.ftmpi.runtime.RankMain};
     * makes the ranks' AOT cache first when it is missing ({@link AotCache}).
     */
    static List<String> rankCommand(LaunchSpec spec, LauncherConsole console) throws UsageException, IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String lib = System.getProperty("ftmpi.lib.classpath", System.getProperty("java.class.path"));
        String user = spec.userClasspath();
        List<String> base = new ArrayList<>(defaultRankJvmOptions());
        List<String> cacheBase = new ArrayList<>(base); // the user's options do not change the cache
        cacheBase.addAll(hugePageOptions(THP_ENABLED, base, List.of()));
        base.addAll(hugePageOptions(THP_ENABLED, base, spec.jvmOptions()));
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.addAll(AotCache.options(spec, lib, cacheBase, System.getenv(), console));
        cmd.addAll(base);
        String record = System.getProperty(AotCache.RECORD_PROPERTY);
        if (record != null) { // the AOT cache's training job: its ranks record, with the library alone
            cmd.addAll(List.of("-XX:AOTMode=record", "-XX:AOTConfiguration=" + record));
            lib = lib.isEmpty() ? user : lib;
            user = "";
        }
        cmd.addAll(spec.jvmOptions());
        String mainFromJar = null;
        if (spec.jar() != null) {
            JarApp app = readJar(spec.jar());
            user = app.classpath();
            mainFromJar = app.mainClass();
        }
        cmd.add("-cp");
        cmd.add(lib.isEmpty() ? user : user.isEmpty() ? lib : lib + File.pathSeparator + user);
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

    /** The kernel's transparent-huge-page mode: {@code always [madvise] never}, the chosen one in brackets. */
    static final Path THP_ENABLED = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");

    /**
     * {@code -XX:+UseTransparentHugePages} when the kernel offers transparent huge pages to a
     * program that asks ({@code [madvise]} or {@code [always]} in {@code thpEnabled}) and no JVM
     * option before it ({@code before}: conf/rank-jvm.options) or after it ({@code user}) names
     * the flag; else nothing. The rank JVM's heap then lives in 2 MiB pages, which the kernel
     * frees about 10x faster when the process is killed: every failure signal (the controller's
     * waitpid, the peers' TCP EOF) waits for that teardown (docs/fault-tolerance.md, "How fast a
     * SIGKILL is seen"). The user's own {@code -XX:-UseTransparentHugePages} comes later and wins.
     */
    static List<String> hugePageOptions(Path thpEnabled, List<String> before, List<String> user) {
        for (List<String> l : List.of(before, user)) {
            for (String o : l) if (o.contains("UseTransparentHugePages")) return List.of();
        }
        String mode;
        try {
            mode = Files.readString(thpEnabled);
        } catch (IOException | RuntimeException e) {
            return List.of(); // no THP on this system (or not Linux)
        }
        return mode.contains("[madvise]") || mode.contains("[always]")
                ? List.of("-XX:+UseTransparentHugePages") : List.of();
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
