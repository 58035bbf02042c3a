package org.ftmpi.runtime;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The launcher's own stdout and stderr, shared by the output forwarders and the controller's
 * messages. Each write happens whole under the stream's lock and is flushed at once; write errors
 * (a closed terminal or pipe) are swallowed so ranks never block on their output.
 */
final class LauncherConsole {
    private final OutputStream out = new FileOutputStream(FileDescriptor.out);
    private final OutputStream err = new FileOutputStream(FileDescriptor.err);
    private final boolean verbose;

    LauncherConsole(boolean verbose) {
        this.verbose = verbose;
    }

    OutputStream stream(boolean stderr) {
        return stderr ? err : out;
    }

    /** Writes {@code len} bytes to the stream in one piece. */
    void write(boolean stderr, byte[] b, int off, int len) {
        OutputStream s = stream(stderr);
        synchronized (s) {
            try {
                s.write(b, off, len);
                s.flush();
            } catch (IOException ignored) {
                // nobody reads our output any more; keep draining the ranks
            }
        }
    }

    /** An "ftmpirun: " message on stderr. */
    void message(String text) {
        byte[] b = ("ftmpirun: " + text + "\n").getBytes(StandardCharsets.UTF_8);
        write(true, b, 0, b.length);
    }

    boolean verbose() {
        return verbose;
    }

    /** A log line shown with --verbose only. */
    void log(String text) {
        if (verbose) {
            message("[controller] " + text);
        }
    }
}
