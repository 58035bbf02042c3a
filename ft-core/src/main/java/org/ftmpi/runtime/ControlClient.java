package org.ftmpi.runtime;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

import org.ftmpi.runtime.wire.Auth;
import org.ftmpi.runtime.wire.Frame;
import org.ftmpi.runtime.wire.FrameCodec;
import org.ftmpi.runtime.wire.FrameType;

/**
 * The rank side of the control connection to the ftmpirun job controller.
 *
 * <p><b>Note:</b> thread-safe. One daemon thread named {@code ftmpi-control} reads the
 * connection and runs the {@link ControlListener} callbacks; callers' threads write frames under
 * {@link #writeLock}.
 */
public final class ControlClient implements RankRuntime {
    private static final int CONNECT_TIMEOUT_MS = 10_000;

    private final JobInfo preliminary;
    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private final Object writeLock = new Object();
    private final CompletableFuture<JobInfo> table = new CompletableFuture<>();
    private final CompletableFuture<Void> finalizeDone = new CompletableFuture<>();
    private final AtomicBoolean exchangeCalled = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile boolean controllerGone;
    private volatile ControlListener listener;

    /**
     * Connects to the controller and authenticates.
     *
     * @param preliminary this rank's identity (rank, size, job id, own procId and host, secret,
     *                    options)
     */
    public ControlClient(JobInfo preliminary, String host, int port) throws IOException {
        this.preliminary = preliminary;
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress(host, port), CONNECT_TIMEOUT_MS);
            s.setSoTimeout(CONNECT_TIMEOUT_MS);
            in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
            out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
            Auth.client(in, out, preliminary.secret());
            s.setSoTimeout(0);
        } catch (IOException e) {
            s.close();
            throw new IOException("cannot join the job controller at " + host + ":" + port + ": "
                    + e.getMessage(), e);
        }
        socket = s;
        Thread t = new Thread(this::readLoop, "ftmpi-control");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public JobInfo preliminaryInfo() {
        return preliminary;
    }

    @Override
    public JobInfo exchange(Map<String, byte[]> myEndpoints) throws IOException {
        if (!exchangeCalled.compareAndSet(false, true)) {
            throw new IllegalStateException("exchange() may be called only once");
        }
        JobInfo p = preliminary;
        send(ControlMessages.register(new ControlMessages.Register(p.rank(), p.procIds()[p.rank()],
                p.hosts()[p.rank()], Map.copyOf(myEndpoints))));
        try {
            return table.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for the endpoint exchange");
        } catch (ExecutionException e) {
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        }
    }

    @Override
    public void setListener(ControlListener l) {
        listener = l;
    }

    @Override
    public void abort(int exitCode, String reason) {
        try {
            send(ControlMessages.abort(FrameType.ABORT_REQUEST,
                    new ControlMessages.Abort(exitCode, reason == null ? "" : reason)));
        } catch (IOException e) {
            System.err.println("ftmpi: rank " + preliminary.rank() + " called MPI_Abort with code "
                    + exitCode + ": " + reason + " (job controller unreachable; exiting)");
            System.err.flush();
            System.exit(exitCode);
        }
    }

    @Override
    public void finalizeBarrier() throws IOException {
        if (controllerGone) {
            return;
        }
        try {
            send(Frame.of(FrameType.FINALIZE));
        } catch (IOException e) {
            return; // controller gone: nobody to wait for
        }
        try {
            finalizeDone.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted in the finalize barrier");
        } catch (ExecutionException e) {
            throw new IOException(e.getCause());
        }
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    private void send(Frame f) throws IOException {
        if (controllerGone) {
            throw new IOException("the job controller is gone");
        }
        synchronized (writeLock) {
            FrameCodec.write(out, f);
        }
    }

    private void readLoop() {
        String why = "connection closed";
        try {
            while (true) {
                Frame f = FrameCodec.read(in, FrameCodec.MAX_PAYLOAD);
                if (f == null) {
                    break;
                }
                dispatch(f);
            }
        } catch (IOException e) {
            why = e.getMessage();
        } catch (RuntimeException e) {
            why = "internal error: " + e;
            e.printStackTrace();
        }
        controllerGone = true;
        if (!closed.get()) {
            System.err.println("ftmpi: rank " + preliminary.rank() + ": lost the connection to the"
                    + " job controller (" + why + "); continuing without it");
            System.err.flush();
            close();
        }
        table.completeExceptionally(new IOException("the job controller is gone (" + why + ")"));
        finalizeDone.complete(null);
    }

    private void dispatch(Frame f) throws IOException {
        switch (f.type()) {
            case FrameType.TABLE -> table.complete(toJobInfo(ControlMessages.table(f)));
            case FrameType.FINALIZE_DONE -> finalizeDone.complete(null);
            case FrameType.PROCESS_FAILED -> {
                ControlMessages.Failed x = ControlMessages.failed(f);
                ControlListener l = listener;
                if (l != null) {
                    l.processFailed(x.rank(), x.procId(), x.how());
                }
            }
            case FrameType.ABORT -> {
                ControlMessages.Abort a = ControlMessages.abort(f);
                ControlListener l = listener;
                if (l != null) {
                    l.abort(a.code(), a.reason());
                }
            }
            default -> throw new IOException("unexpected frame " + FrameType.name(f.type())
                    + " from the controller");
        }
    }

    private JobInfo toJobInfo(List<ControlMessages.Entry> rows) throws IOException {
        JobInfo p = preliminary;
        if (rows.size() != p.size()) {
            throw new IOException("endpoint table has " + rows.size() + " rows, expected " + p.size());
        }
        long[] procIds = new long[rows.size()];
        String[] hosts = new String[rows.size()];
        List<Map<String, byte[]>> eps = new ArrayList<>(rows.size());
        for (int i = 0; i < rows.size(); i++) {
            procIds[i] = rows.get(i).procId();
            hosts[i] = rows.get(i).host();
            eps.add(rows.get(i).endpoints());
        }
        return new JobInfo(p.jobId(), p.rank(), p.size(), procIds, hosts,
                Collections.unmodifiableList(eps), p.secret(), p.options());
    }

    /** A preliminary JobInfo: own procId and host filled in, others 0 and "", no endpoints. */
    static JobInfo preliminary(long jobId, int rank, int size, long procId, String host,
                               byte[] secret, Map<String, String> options) {
        long[] procIds = new long[size];
        procIds[rank] = procId;
        String[] hosts = new String[size];
        Arrays.fill(hosts, "");
        hosts[rank] = host;
        List<Map<String, byte[]>> eps = Collections.nCopies(size, Map.of());
        return new JobInfo(jobId, rank, size, procIds, hosts, eps, secret, Map.copyOf(options));
    }
}
