package org.ftmpi.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Copies one rank stream (stdout or stderr) to the launcher's matching stream, on its own
 * thread. Untagged: raw bytes as they arrive. Tagged: whole lines prefixed with {@code [rank] }.
 */
final class OutputForwarder implements Runnable {
    private final InputStream in;
    private final LauncherConsole console;
    private final boolean stderr;
    private final byte[] tag;

    OutputForwarder(InputStream in, LauncherConsole console, boolean stderr, int rank, boolean tagged) {
        this.in = in;
        this.console = console;
        this.stderr = stderr;
        this.tag = tagged ? ("[" + rank + "] ").getBytes(StandardCharsets.US_ASCII) : null;
    }

    static Thread start(InputStream in, LauncherConsole console, boolean stderr, int rank, boolean tagged) {
        Thread t = new Thread(new OutputForwarder(in, console, stderr, rank, tagged),
                "ftmpirun-" + (stderr ? "err-" : "out-") + rank);
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Override
    public void run() {
        byte[] buf = new byte[8192];
        byte[] line = new byte[256];
        int lineLen = 0;
        try (in) {
            int n;
            while ((n = in.read(buf)) > 0) {
                if (tag == null) {
                    console.write(stderr, buf, 0, n);
                    continue;
                }
                for (int i = 0; i < n; i++) {
                    if (lineLen + tag.length + 1 > line.length) {
                        line = Arrays.copyOf(line, line.length * 2);
                    }
                    if (lineLen == 0) {
                        System.arraycopy(tag, 0, line, 0, tag.length);
                        lineLen = tag.length;
                    }
                    line[lineLen++] = buf[i];
                    if (buf[i] == '\n') {
                        console.write(stderr, line, 0, lineLen);
                        lineLen = 0;
                    }
                }
            }
        } catch (IOException ignored) {
            // the rank's pipe broke: it is gone
        }
        if (lineLen > 0) {
            line = Arrays.copyOf(line, lineLen + 1);
            line[lineLen] = '\n';
            console.write(stderr, line, 0, lineLen + 1);
        }
    }
}
