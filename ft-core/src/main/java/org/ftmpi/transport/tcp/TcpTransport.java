package org.ftmpi.transport.tcp;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.ftmpi.runtime.JobInfo;
import org.ftmpi.transport.FrameHeader;
import org.ftmpi.transport.FrameSink;
import org.ftmpi.transport.Transport;
import org.ftmpi.transport.TransportLimits;

/**
 * TCP transport: one authenticated, non-blocking, {@code TCP_NODELAY} connection per pair of
 * ranks (the higher rank connects to the lower). Frames from native memory are written straight
 * from it (gathering write); frames from Java arrays go through one staging copy. Bytes the
 * socket does not take at once are copied into a backlog that {@link #progress()} flushes.
 *
 * <p><b>Note:</b> not thread-safe; every method but the accessors runs under the engine's
 * progress lock.
 */
final class TcpTransport implements Transport {
    static final int EAGER_LIMIT = 64 * 1024;
    static final int MAX_FRAGMENT = 512 * 1024;
    private static final int MAX_FRAME = FrameHeader.BYTES + MAX_FRAGMENT;
    private static final int CONNECT_TIMEOUT_MS = 60_000;

    private final JobInfo pre;
    private final FrameSink sink;
    private final ServerSocketChannel server;
    private final byte[] endpoint;
    private Conn[] conns;
    private final List<Conn> live = new ArrayList<>();
    /** Staging buffer for frames whose payload lives on the Java heap. */
    private final ByteBuffer staging = ByteBuffer.allocateDirect(MAX_FRAME);
    private final ByteBuffer[] gather = new ByteBuffer[2];
    private final MemorySegment stagingSeg = MemorySegment.ofBuffer(staging);

    TcpTransport(JobInfo pre, FrameSink sink) throws IOException {
        this.pre = pre;
        this.sink = sink;
        String bind = pre.option("tcp-bind", "127.0.0.1");
        server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress(bind, 0), 256);
        InetSocketAddress local = (InetSocketAddress) server.getLocalAddress();
        String host = local.getAddress().isAnyLocalAddress()
                ? java.net.InetAddress.getLocalHost().getHostAddress() : local.getAddress().getHostAddress();
        endpoint = (host + ":" + local.getPort()).getBytes(StandardCharsets.UTF_8);
    }

    @Override public String name() { return "tcp"; }

    @Override
    public TransportLimits limits() {
        return new TransportLimits(EAGER_LIMIT, MAX_FRAGMENT, 10_000, 2_000_000_000L, 10);
    }

    @Override public byte[] localEndpoint() { return endpoint.clone(); }

    @Override
    public void connect(JobInfo job) throws IOException {
        int me = job.rank();
        conns = new Conn[job.size()];
        // Connect to every lower rank, then accept every higher one: rank 0 only accepts, so
        // by induction every connect finds its acceptor.
        for (int peer = 0; peer < me; peer++) {
            Map<String, byte[]> ep = job.endpoints().get(peer);
            byte[] addr = ep == null ? null : ep.get("tcp");
            if (addr == null) continue;
            String s = new String(addr, StandardCharsets.UTF_8);
            int colon = s.lastIndexOf(':');
            SocketChannel ch = SocketChannel.open();
            try {
                ch.socket().connect(new InetSocketAddress(s.substring(0, colon),
                        Integer.parseInt(s.substring(colon + 1))), CONNECT_TIMEOUT_MS);
                ch.socket().setSoTimeout(CONNECT_TIMEOUT_MS);
                TcpHandshake.connect(ch, job.secret(), job.jobId(), me);
                install(peer, ch);
            } catch (IOException | RuntimeException e) {
                // Close at once: a socket left open would stall the peer's (serial) accept loop
                // in its handshake read until that times out.
                ch.close();
                throw e;
            }
        }
        int expected = 0;
        for (int peer = me + 1; peer < job.size(); peer++) {
            Map<String, byte[]> ep = job.endpoints().get(peer);
            if (ep != null && ep.containsKey("tcp")) expected++;
        }
        server.socket().setSoTimeout(CONNECT_TIMEOUT_MS);
        while (expected > 0) {
            SocketChannel ch = server.socket().accept().getChannel();
            ch.socket().setSoTimeout(10_000);
            int peer;
            try {
                peer = TcpHandshake.accept(ch, job.secret(), job.jobId(), job.size());
            } catch (IOException e) {
                System.err.println("ftmpi: rank " + me + ": rejected a TCP connection from "
                        + ch.getRemoteAddress() + ": " + e.getMessage());
                ch.close();
                continue;
            }
            if (peer <= me || conns[peer] != null) {
                System.err.println("ftmpi: rank " + me + ": rejected a duplicate connection claiming rank " + peer);
                ch.close();
                continue;
            }
            install(peer, ch);
            expected--;
        }
        server.close();
    }

    private void install(int peer, SocketChannel ch) throws IOException {
        ch.socket().setSoTimeout(0);
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.configureBlocking(false);
        Conn c = new Conn(peer, ch);
        conns[peer] = c;
        live.add(c);
    }

    @Override
    public boolean reaches(int worldRank) {
        return conns != null && worldRank >= 0 && worldRank < conns.length && conns[worldRank] != null;
    }

    @Override
    public long backlogBytes(int worldRank) {
        Conn c = conns[worldRank];
        return c == null ? 0 : c.backlogBytes;
    }

    @Override
    public void send(int worldRank, MemorySegment header, MemorySegment payload, long offset, int length)
            throws IOException {
        Conn c = conns[worldRank];
        if (c == null || c.dead) {
            throw new IOException("no connection to rank " + worldRank + (c == null ? "" : ": " + c.deathCause));
        }
        ByteBuffer out;
        if (length > 0 && payload.isNative()) {
            staging.clear();
            MemorySegment.copy(header, 0, stagingSeg, 0, FrameHeader.BYTES);
            staging.limit(FrameHeader.BYTES);
            gather[0] = staging;
            gather[1] = payload.asSlice(offset, length).asByteBuffer();
            if (c.backlog.isEmpty()) {
                writeGather(c);
            }
            if (staging.hasRemaining() || gather[1].hasRemaining()) {
                enqueueCopy(c, staging);
                enqueueCopy(c, gather[1]);
            }
            gather[1] = null;
            return;
        }
        staging.clear();
        MemorySegment.copy(header, 0, stagingSeg, 0, FrameHeader.BYTES);
        if (length > 0) {
            MemorySegment.copy(payload, offset, stagingSeg, FrameHeader.BYTES, length);
        }
        staging.limit(FrameHeader.BYTES + length);
        out = staging;
        if (c.backlog.isEmpty()) {
            try {
                while (out.hasRemaining() && c.ch.write(out) > 0) {
                    // keep writing while the socket takes bytes
                }
            } catch (IOException e) {
                lose(c, e.getMessage());
                throw e;
            }
        }
        if (out.hasRemaining()) {
            enqueueCopy(c, out);
        }
    }

    private void writeGather(Conn c) throws IOException {
        try {
            long want = (long) gather[0].remaining() + gather[1].remaining();
            long done = 0;
            while (done < want) {
                long n = c.ch.write(gather);
                if (n <= 0) break;
                done += n;
            }
        } catch (IOException e) {
            lose(c, e.getMessage());
            throw e;
        }
    }

    private static void enqueueCopy(Conn c, ByteBuffer src) {
        int n = src.remaining();
        if (n == 0) return;
        ByteBuffer copy = ByteBuffer.allocateDirect(n);
        copy.put(src).flip();
        c.backlog.add(copy);
        c.backlogBytes += n;
    }

    @Override
    public int progress() {
        int work = 0;
        for (int i = 0; i < live.size(); i++) {
            Conn c = live.get(i);
            if (c.dead) continue;
            try {
                if (!c.backlog.isEmpty()) work += flush(c);
                work += read(c);
            } catch (IOException e) {
                lose(c, e.getMessage() == null ? e.toString() : e.getMessage());
            }
        }
        return work;
    }

    private int flush(Conn c) throws IOException {
        int work = 0;
        ByteBuffer b;
        while ((b = c.backlog.peek()) != null) {
            int n = c.ch.write(b);
            c.backlogBytes -= n;
            work += n > 0 ? 1 : 0;
            if (b.hasRemaining()) break;
            c.backlog.poll();
        }
        return work;
    }

    private int read(Conn c) throws IOException {
        ByteBuffer in = c.in;
        int n = c.ch.read(in);
        if (n < 0) {
            throw new IOException("connection closed by rank " + c.peer);
        }
        if (n == 0 && in.position() < FrameHeader.BYTES) return 0;
        int frames = 0;
        int pos = 0;
        int end = in.position();
        while (end - pos >= FrameHeader.BYTES) {
            MemorySegment h = c.inSeg.asSlice(pos, FrameHeader.BYTES);
            int plen = FrameHeader.payloadLength(h);
            if (FrameHeader.version(h) != org.ftmpi.Version.WIRE || plen < 0 || plen > MAX_FRAGMENT) {
                throw new IOException("corrupt frame from rank " + c.peer + " (version "
                        + FrameHeader.version(h) + ", payload " + plen + ")");
            }
            if (end - pos < FrameHeader.BYTES + plen) break;
            sink.onFrame(c.peer, h, c.inSeg.asSlice(pos + FrameHeader.BYTES, plen));
            pos += FrameHeader.BYTES + plen;
            frames++;
            if (c.dead) return frames;
        }
        if (pos > 0) {
            in.limit(end).position(pos);
            in.compact();
        }
        return frames + (n > 0 ? 1 : 0);
    }

    private void lose(Conn c, String cause) {
        if (c.dead) return;
        c.dead = true;
        c.deathCause = cause;
        try {
            c.ch.close();
        } catch (IOException ignored) {
            // already failing
        }
        sink.onPeerLost(c.peer, cause);
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // closing
        }
        for (Conn c : live) {
            c.dead = true;
            try {
                c.ch.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    /** One connection's state. */
    private static final class Conn {
        final int peer;
        final SocketChannel ch;
        final ByteBuffer in = ByteBuffer.allocateDirect(2 * MAX_FRAME);
        final MemorySegment inSeg = MemorySegment.ofBuffer(in);
        final ArrayDeque<ByteBuffer> backlog = new ArrayDeque<>();
        long backlogBytes;
        boolean dead;
        String deathCause;

        Conn(int peer, SocketChannel ch) {
            this.peer = peer;
            this.ch = ch;
        }
    }
}
