package org.ftmpi.transport.tcp;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The TCP listener of a warm spare (ftmpirun -sp, comm-mode REBUILD), open from the spare's
 * start. The controller announces it to the ranks (SPARE_READY), which connect and authenticate
 * to it in the background ({@link TcpTransport#prepareSpare}); this port accepts and
 * authenticates those connections as they come and keeps them, unread, until the spare takes
 * over a rank. Its TCP transport then starts on this listener ({@link #take}): its endpoint is
 * the one the survivors pre-connected to, and {@link TcpTransport#connect} takes the connections
 * accepted here (and any that arrive later, from ranks that had none ready) instead of accepting
 * after the failure.
 *
 * <p><b>Note:</b> thread-safe. One daemon thread, {@code ftmpi-spare-accept}, accepts and
 * authenticates; the rank's engine takes the accepted connections from a queue. One per
 * process (a spare is one process), hence the static handoff.
 */
public final class TcpSparePort {
    private static volatile TcpSparePort current;

    final ServerSocketChannel server;
    final byte[] endpoint;
    private final LinkedBlockingQueue<TcpTransport.Accepted> accepted = new LinkedBlockingQueue<>();

    private TcpSparePort(ServerSocketChannel server, byte[] endpoint) {
        this.server = server;
        this.endpoint = endpoint;
    }

    /**
     * Opens this spare's listener on {@code bind} (job option {@code tcp-bind}) and starts
     * accepting; returns its endpoint ("host:port"), to publish as the spare's {@code tcp}
     * endpoint.
     */
    public static byte[] open(long jobId, int size, byte[] secret, String bind) throws IOException {
        ServerSocketChannel s = ServerSocketChannel.open();
        s.bind(new InetSocketAddress(bind, 0), 256);
        TcpSparePort p = new TcpSparePort(s, TcpTransport.endpointOf(s));
        Thread t = new Thread(() -> p.acceptLoop(jobId, size, secret), "ftmpi-spare-accept");
        t.setDaemon(true);
        t.start();
        current = p;
        return p.endpoint.clone();
    }

    /** The port of this spare, once, for the TCP transport of the rank it took over; else null. */
    static TcpSparePort take() {
        TcpSparePort p = current;
        current = null;
        return p;
    }

    /** The next authenticated connection, or null after {@code timeoutMs}. */
    TcpTransport.Accepted next(long timeoutMs) throws IOException {
        try {
            return accepted.poll(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while accepting the survivors' connections");
        }
    }

    /** Connections accepted so far and not taken: the pre-made ones when the takeover starts. */
    int ready() {
        return accepted.size();
    }

    /** Stops accepting; connections not taken are closed. */
    void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // closing
        }
        TcpTransport.Accepted a;
        while ((a = accepted.poll()) != null) TcpTransport.closeQuietly(a.ch());
    }

    private void acceptLoop(long jobId, int size, byte[] secret) {
        while (server.isOpen()) {
            SocketChannel ch;
            try {
                ch = server.socket().accept().getChannel();
            } catch (IOException e) {
                return; // closed: the spare took over a rank (or ends)
            }
            try {
                accepted.add(TcpTransport.authenticateReplacementPeer(ch, secret, jobId, size));
            } catch (IOException e) {
                // A rank that ends (or dies) while it connects closes or resets the connection
                // mid-handshake: nothing to report. A connection that fails the handshake's checks
                // (authentication, job, version) is reported.
                if (e.getClass() == IOException.class && !TcpHandshake.CLOSED.equals(e.getMessage())) {
                    System.err.println("ftmpi: warm spare: rejected a TCP connection: " + e.getMessage());
                }
                TcpTransport.closeQuietly(ch);
            }
        }
    }

    @Override
    public String toString() {
        return "TcpSparePort " + new String(endpoint, StandardCharsets.UTF_8);
    }
}
