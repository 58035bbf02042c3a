package org.ftmpi.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Copies one rank stream (stdout or stderr) to the launcher's matching stream, on its own
 * thread. Untagged: raw bytes as they arrive. Tagged: whole lines prefixed with {@code [rank] }.
 * At the job's end the launcher waits until each forwarder has seen its stream's end
 * ({@link #awaitDrained}): as long as it takes while the reader of the launcher's output keeps
 * taking it, so that nothing a rank wrote is lost to a slow reader.
 */
final class OutputForwarder implements Runnable {
    private final InputStream in;
    private final LauncherConsole console;
    private final boolean stderr;
    private final byte[] tag;
    private Thread thread;
    /** {@link System#nanoTime} of the last read that returned or write that completed. */
    private volatile long progressNanos = System.nanoTime();
    /** Set while a chunk is written to the launcher's stream, which a slow reader holds up. */
    private volatile boolean writing;

    OutputForwarder(InputStream in, LauncherConsole console, boolean stderr, int rank, boolean tagged) {
        this.in = in;
        this.console = console;
        this.stderr = stderr;
        this.tag = tagged ? ("[" + rank + "] ").getBytes(StandardCharsets.US_ASCII) : null;
    }

    static OutputForwarder start(InputStream in, LauncherConsole console, boolean stderr, int rank, boolean tagged) {
        OutputForwarder f = new OutputForwarder(in, console, stderr, rank, tagged);
        f.thread = new Thread(f, "ftmpirun-" + (stderr ? "err-" : "out-") + rank);
        f.thread.setDaemon(true);
        f.thread.start();
        return f;
    }

    /**
     * Waits until this forwarder has copied its stream to the end. Gives up only when the stream
     * has been silent for {@code idleMs} while nothing was being written: a process the rank
     * started may keep the pipe open after the rank is gone. While a write is held up by the
     * reader of the launcher's output (a pipe into a slow program), it keeps waiting.
     */
    void awaitDrained(long idleMs) throws InterruptedException {
        while (thread.isAlive()) {
            thread.join(100);
            if (!writing && System.nanoTime() - progressNanos > idleMs * 1_000_000L) return;
        }
    }

    private void write(byte[] b, int off, int len) {
        writing = true;
        try {
            console.write(stderr, b, off, len);
        } finally {
            writing = false;
            progressNanos = System.nanoTime();
        }
    }

    @Override
    public void run() {
        byte[] buf = new byte[8192];
        byte[] line = new byte[256];
        int lineLen = 0;
        try (in) {
            int n;
            while ((n = in.read(buf)) > 0) {
                progressNanos = System.nanoTime();
                if (tag == null) {
                    write(buf, 0, n);
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
                        write(line, 0, lineLen);
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
            write(line, 0, lineLen + 1);
        }
    }
}
