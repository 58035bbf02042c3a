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
 * ranks (the higher rank connects to the lower). Small frames, and frames from Java arrays, are
 * copied into one staging buffer and written with one system call; larger frames from native
 * memory are written straight from it (gathering write). Bytes the socket does not take at once
 * go to a backlog that {@link #progress()} flushes: copies in pooled chunks, and rendezvous DATA
 * payloads by reference ({@link #sendPinned}). Large DATA payloads are read straight into the
 * receive buffer the engine names ({@link FrameSink#placement}), not through the read buffer.
 *
 * <p><b>Note:</b> not thread-safe; every method but the accessors runs under the engine's
 * progress lock.
 */
final class TcpTransport implements Transport {
    static final int EAGER_LIMIT = 64 * 1024;
    static final int MAX_FRAGMENT = 512 * 1024;
    private static final int MAX_FRAME = FrameHeader.BYTES + MAX_FRAGMENT;
    private static final int CONNECT_TIMEOUT_MS = 60_000;
    /** A replacement waiting for the survivors' connections checks this often whether one of them is known dead. */
    private static final int ACCEPT_SLICE_MS = 20;
    /** Frames with payloads up to this size are copied into staging and written with one write. */
    private static final int COALESCE_MAX = 8 * 1024;
    /** DATA payloads at least this large are read straight into their receive buffer. */
    private static final int PLACE_MIN = 32 * 1024;
    /**
     * A connection's read buffer starts at this size and grows to {@link #IN_MAX} at the first
     * frame that does not fit (an eager frame or fragment of more than 64 KiB that is not read
     * straight into its receive buffer) or the first read that fills it (a stream of smaller
     * frames, then read in pieces of up to 1 MiB as before); both show as a read that fills the
     * buffer. On one host shared memory carries the traffic and the TCP connections stay idle: a
     * full buffer per connection zeroed 1 MiB of direct memory for each of the job's other ranks
     * at start-up and for every replacement's connection (docs/benchmarks.md, "Session 23"), and
     * kept (ranks - 1) MiB per rank.
     */
    private static final int IN_FIRST = 64 * 1024, IN_MAX = 2 * MAX_FRAME;
    /** Size of the pooled direct chunks that hold copied backlog bytes. */
    private static final int CHUNK = 64 * 1024;
    /** Chunks kept for reuse per connection (4 MiB). */
    private static final int MAX_FREE_CHUNKS = 64;

    private final JobInfo pre;
    private final FrameSink sink;
    private final ServerSocketChannel server;
    private final byte[] endpoint;
    /** A warm spare's listener, open since the spare started, when this process is one that took over a rank; else null. */
    private final TcpSparePort sparePort;
    /**
     * FT-MPI REBUILD: connections to warm spares made ahead of need ({@link #prepareSpare}), by
     * the spare's process id, each configured and with its buffers made ({@link #prepared}, no
     * rank yet); taken by {@link #reconnect} when that spare replaces a rank. Never polled: they
     * cost the fault-free path nothing. Filled by background threads.
     */
    private final java.util.concurrent.ConcurrentHashMap<Long, java.util.concurrent.CompletableFuture<Conn>> premade =
            new java.util.concurrent.ConcurrentHashMap<>();
    private volatile boolean closing;
    private Conn[] conns;
    private final List<Conn> live = new ArrayList<>();
    /** Staging buffer for frames whose payload lives on the Java heap. */
    private final ByteBuffer staging = ByteBuffer.allocateDirect(MAX_FRAME);
    private final ByteBuffer[] gather = new ByteBuffer[2];
    private final MemorySegment stagingSeg = MemorySegment.ofBuffer(staging);

    TcpTransport(JobInfo pre, FrameSink sink) throws IOException {
        this.pre = pre;
        this.sink = sink;
        // A warm spare that took over a rank keeps the listener the ranks pre-connected to.
        sparePort = Boolean.parseBoolean(pre.option("restarted", "false")) ? TcpSparePort.take() : null;
        if (sparePort != null) {
            server = sparePort.server;
            endpoint = sparePort.endpoint;
            return;
        }
        String bind = pre.option("tcp-bind", "127.0.0.1");
        server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress(bind, 0), 256);
        endpoint = endpointOf(server);
    }

    /** "host:port" of a bound listener. */
    static byte[] endpointOf(ServerSocketChannel server) throws IOException {
        InetSocketAddress local = (InetSocketAddress) server.getLocalAddress();
        String host = local.getAddress().isAnyLocalAddress()
                ? java.net.InetAddress.getLocalHost().getHostAddress() : local.getAddress().getHostAddress();
        return (host + ":" + local.getPort()).getBytes(StandardCharsets.UTF_8);
    }

    @Override public String name() { return "tcp"; }

    @Override
    public TransportLimits limits() {
        // Any DATA fragment from native memory is sent pinned: the backlog references it instead
        // of copying it (there is no single-copy path on TCP, but no extra copy either).
        return new TransportLimits(EAGER_LIMIT, MAX_FRAGMENT, 10_000, 2_000_000_000L, 10, 1, EAGER_LIMIT);
    }

    @Override public byte[] localEndpoint() { return endpoint.clone(); }

    @Override
    public void connect(JobInfo job) throws IOException {
        int me = job.rank();
        conns = new Conn[job.size()];
        // A replacement (FT-MPI REBUILD, job option restarted) only accepts: every live rank
        // connects to it when its recovery ends (reconnect), or did so before (warm spare).
        boolean replacement = Boolean.parseBoolean(job.option("restarted", "false"));
        if (replacement) {
            acceptSurvivors(job);
            return;
        }
        // Connect to every lower rank, then accept every higher one: rank 0 only accepts, so
        // by induction every connect finds its acceptor.
        for (int peer = 0; peer < me; peer++) {
            Map<String, byte[]> ep = job.endpoints().get(peer);
            byte[] addr = ep == null ? null : ep.get("tcp");
            if (addr == null) continue;
            dial(peer, addr, job, false, ch -> { });
        }
        int expected = 0;
        for (int peer = me + 1; peer < job.size(); peer++) {
            if (hasTcp(job, peer)) expected++;
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
            if (peer <= me || peer >= conns.length || conns[peer] != null) {
                System.err.println("ftmpi: rank " + me + ": rejected a duplicate connection claiming rank " + peer);
                ch.close();
                continue;
            }
            installOrFail(peer, ch);
            expected--;
        }
        server.close();
    }

    private static boolean hasTcp(JobInfo job, int peer) {
        Map<String, byte[]> ep = job.endpoints().get(peer);
        return ep != null && ep.containsKey("tcp");
    }

    /** A connection accepted and authenticated by a replacement: the connector's rank and process id. */
    record Accepted(int rank, long procId, SocketChannel ch) {}

    /** The acceptor's side of a connection to a replacement: the handshake, then the connector's process id. */
    static Accepted authenticateReplacementPeer(SocketChannel ch, byte[] secret, long jobId, int size) throws IOException {
        ch.socket().setSoTimeout(10_000);
        int peer = TcpHandshake.accept(ch, secret, jobId, size);
        return new Accepted(peer, TcpHandshake.readProcId(ch), ch);
    }

    /**
     * A replacement's connect: takes one connection from every live rank of its table, by the
     * rank's current process. A warm spare's listener has accepted the survivors' pre-made
     * connections already, so they are taken from its queue; any others (a rank that had no
     * connection ready, or a replacement) are accepted now. A connection from a process the table
     * does not name any more (made ahead by a process that has died since) is closed.
     */
    private void acceptSurvivors(JobInfo job) throws IOException {
        int me = job.rank();
        boolean[] waiting = new boolean[job.size()];
        int expected = 0;
        for (int peer = 0; peer < job.size(); peer++) {
            waiting[peer] = peer != me && hasTcp(job, peer);
            if (waiting[peer]) expected++;
        }
        if (sparePort == null) server.socket().setSoTimeout(ACCEPT_SLICE_MS);
        int ahead = sparePort == null ? 0 : sparePort.ready(); // the first ones taken were made before the takeover
        // No time bound: a survivor connects when its recovery starts, at its next MPI call, which
        // a long computation can put off for any time; a survivor that dies meanwhile is not
        // waited for (its failure notice). A note after a minute tells the user why it waits.
        long noteAt = System.nanoTime() + CONNECT_TIMEOUT_MS * 1_000_000L;
        boolean noted = false;
        try {
            while (expected > 0) {
                Accepted a = nextSurvivor(job);
                if (a == null) { // none within a slice: stop waiting for peers known dead meanwhile
                    for (int peer = 0; peer < waiting.length; peer++) {
                        if (waiting[peer] && sink.peerGone(peer)) {
                            waiting[peer] = false;
                            expected--;
                        }
                    }
                    if (!noted && expected > 0 && System.nanoTime() - noteAt > 0) {
                        noted = true;
                        System.err.println("ftmpi: rank " + me + " (a replacement) still waits for ranks "
                                + ranksOf(waiting) + " to connect after " + CONNECT_TIMEOUT_MS / 1000
                                + " s; each connects when its recovery starts, at its next MPI call");
                    }
                    continue;
                }
                int peer = a.rank();
                boolean premadeOne = ahead-- > 0;
                // A connection made ahead by a process that has died since (or by this rank's
                // old process) is not a peer now; one whose process died is closed by the
                // kernel already (the peer then joins as a replacement, see Engine).
                if (peer == me || !waiting[peer] || a.procId() != job.procIds()[peer] || !install(peer, a.ch())) {
                    closeQuietly(a.ch());
                    continue;
                }
                waiting[peer] = false;
                expected--;
                if (premadeOne) premadeTaken++;
            }
        } finally {
            if (sparePort != null) sparePort.close();
            server.close();
        }
    }

    /** The indices set in {@code flags}, as "[1, 3]". */
    private static String ranksOf(boolean[] flags) {
        List<Integer> l = new ArrayList<>();
        for (int i = 0; i < flags.length; i++) if (flags[i]) l.add(i);
        return l.toString();
    }

    /** The next authenticated connection to this replacement, or null when none came within {@link #ACCEPT_SLICE_MS}. */
    private Accepted nextSurvivor(JobInfo job) throws IOException {
        if (sparePort != null) return sparePort.next(ACCEPT_SLICE_MS);
        SocketChannel ch;
        try {
            ch = server.socket().accept().getChannel();
        } catch (java.net.SocketTimeoutException e) {
            return null;
        }
        try {
            return authenticateReplacementPeer(ch, job.secret(), job.jobId(), job.size());
        } catch (IOException e) {
            System.err.println("ftmpi: rank " + job.rank() + ": rejected a TCP connection from "
                    + ch.getRemoteAddress() + ": " + e.getMessage());
            ch.close();
            return null;
        }
    }

    /** Connections made ahead of need taken into use (see {@link #premadeConnections}); diagnostics. */
    private int premadeTaken;

    @Override
    public int premadeConnections() {
        return premadeTaken;
    }

    static void closeQuietly(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    /**
     * FT-MPI REBUILD: connects to warm spare {@code procId} now, in the background (a daemon
     * thread; nothing under the progress lock), so that when it replaces a rank {@link #reconnect}
     * binds the rank to this connection instead of connecting and authenticating then.
     */
    @Override
    public java.util.concurrent.CompletionStage<?> prepareSpare(long procId, Map<String, byte[]> endpoints) {
        byte[] addr = endpoints.get("tcp");
        if (addr == null || closing) return null;
        var f = new java.util.concurrent.CompletableFuture<Conn>();
        if (premade.putIfAbsent(procId, f) != null) return null;
        Thread.ofPlatform().daemon().name("ftmpi-preconnect-" + procId).start(() -> {
            try {
                SocketChannel ch = open(addr, pre);
                TcpHandshake.writeProcId(ch, pre.procIds()[pre.rank()]);
                Conn c = prepared(ch);
                // A dropped future closes what it gets (dropSpare); a taken one belongs to
                // reconnect, which may be waiting on it already: only a closing transport closes here.
                f.complete(c);
                if (closing) closeQuietly(ch);
            } catch (IOException | RuntimeException e) {
                f.completeExceptionally(e);
            }
        });
        return f;
    }

    @Override
    public void dropSpare(long procId) {
        var f = premade.remove(procId);
        if (f != null) f.thenAccept(TcpTransport::closeQuietly);
    }

    static void closeQuietly(Conn c) {
        closeQuietly(c.ch);
    }

    @Override
    public boolean reconnect(int worldRank, long procId, Map<String, byte[]> endpoints) throws IOException {
        byte[] addr = endpoints.get("tcp");
        if (addr == null) return false;
        Conn made = takePremade(procId);
        if (made == null && sink.processGone(procId)) throw gone(procId);
        Conn old = conns[worldRank];
        if (old != null) {
            old.dead = true;
            old.dropBacklog();
            live.remove(old);
            try {
                old.ch.close();
            } catch (IOException ignored) {
                // the old process is gone
            }
            conns[worldRank] = null;
        }
        if (made != null) {
            try {
                if (bind(worldRank, made)) {
                    premadeTaken++;
                    return true;
                }
            } catch (IOException e) {
                // unusable (closed): connect now
            }
            closeQuietly(made); // the replacement closed it (it died): connecting now reports why
        }
        // The replacement can stop (or die) before it has answered the handshake: a guard closes
        // the connection being made as soon as its failure notice arrives, instead of waiting
        // for the handshake's timeout under the engine's lock.
        java.util.concurrent.atomic.AtomicReference<SocketChannel> inFlight = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        Thread guard = Thread.ofVirtual().start(() -> {
            while (!done.get()) {
                if (sink.processGone(procId)) {
                    SocketChannel ch = inFlight.get();
                    if (ch != null && !done.get()) closeQuietly(ch);
                    return;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(GONE_CHECK_NS);
            }
        });
        try {
            dial(worldRank, addr, pre, true, inFlight::set);
        } catch (IOException e) {
            throw sink.processGone(procId) ? gone(procId) : e;
        } finally {
            done.set(true);
            guard.interrupt();
        }
        return true;
    }

    /** How often a survivor waiting for a replacement checks whether it was declared failed. */
    private static final long GONE_CHECK_NS = 20_000_000L;

    private static IOException gone(long procId) {
        return new IOException("the replacement (process id " + procId + ") failed while this process connected to it");
    }

    /**
     * The pre-made connection to warm spare {@code procId}, waiting for it if it is being made
     * (at most {@link #CONNECT_TIMEOUT_MS}, and not once the spare is known to have failed); null if none.
     */
    private Conn takePremade(long procId) {
        var f = premade.remove(procId);
        if (f == null) return null;
        long deadline = System.nanoTime() + CONNECT_TIMEOUT_MS * 1_000_000L;
        try {
            while (!sink.processGone(procId) && System.nanoTime() - deadline < 0) {
                try {
                    return f.get(GONE_CHECK_NS, java.util.concurrent.TimeUnit.NANOSECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    // still being made: check the spare's state again
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException e) {
            // not made
        }
        f.thenAccept(TcpTransport::closeQuietly); // connect now; close it should it come late
        return null;
    }

    /**
     * Connects to {@code peer} at endpoint {@code addr} ("host:port"), authenticates and installs;
     * {@code toReplacement}: the peer is a replacement, which also reads this process's id;
     * {@code opened} gets the channel before it connects.
     */
    private void dial(int peer, byte[] addr, JobInfo job, boolean toReplacement,
                      java.util.function.Consumer<SocketChannel> opened) throws IOException {
        SocketChannel ch = open(addr, job, opened);
        try {
            if (toReplacement) TcpHandshake.writeProcId(ch, job.procIds()[job.rank()]);
            installOrFail(peer, ch);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /** Connects to endpoint {@code addr} ("host:port") and authenticates as {@code job}'s rank. */
    private static SocketChannel open(byte[] addr, JobInfo job) throws IOException {
        return open(addr, job, ch -> { });
    }

    /** {@link #open(byte[], JobInfo)}, handing the channel to {@code opened} before it connects (so that it can be closed meanwhile). */
    private static SocketChannel open(byte[] addr, JobInfo job, java.util.function.Consumer<SocketChannel> opened)
            throws IOException {
        String s = new String(addr, StandardCharsets.UTF_8);
        int colon = s.lastIndexOf(':');
        SocketChannel ch = SocketChannel.open();
        opened.accept(ch);
        try {
            ch.socket().connect(new InetSocketAddress(s.substring(0, colon),
                    Integer.parseInt(s.substring(colon + 1))), CONNECT_TIMEOUT_MS);
            ch.socket().setSoTimeout(CONNECT_TIMEOUT_MS);
            TcpHandshake.connect(ch, job.secret(), job.jobId(), job.rank());
            return ch;
        } catch (IOException | RuntimeException e) {
            // Close at once: a socket left open would stall the peer's (serial) accept loop
            // in its handshake read until that times out.
            ch.close();
            throw e;
        }
    }

    /**
     * Makes {@code ch} the connection to {@code peer}. Reads what has arrived already (kept for
     * the first {@link #progress}): false, installing nothing, if the peer has closed it (a
     * connection made ahead by a process that has died since).
     */
    private void installOrFail(int peer, SocketChannel ch) throws IOException {
        if (!install(peer, ch)) throw new IOException("connection closed by rank " + peer);
    }

    private boolean install(int peer, SocketChannel ch) throws IOException {
        return bind(peer, prepared(ch));
    }

    /**
     * A connection's channel configured for the progress loop (non-blocking, no Nagle, no read
     * timeout) with its buffers made, not bound to a rank yet ({@link #bind}). For a connection
     * made ahead to a warm spare this runs on the connecting thread, not in the survivors'
     * recovery: interpreted there, it took 0.1-0.25 ms of each survivor's CPU (session 27).
     */
    private static Conn prepared(SocketChannel ch) throws IOException {
        ch.socket().setSoTimeout(0);
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.configureBlocking(false);
        return new Conn(ch);
    }

    /** Makes {@code c} the connection of rank {@code peer}; false if its peer has closed it. */
    private boolean bind(int peer, Conn c) throws IOException {
        c.peer = peer;
        if (c.ch.read(c.in) < 0) return false;
        conns[peer] = c;
        live.add(c);
        return true;
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
        Conn c = liveConn(worldRank);
        if (length > COALESCE_MAX && payload.isNative()) {
            sendGather(c, header, payload, offset, length, false);
            return;
        }
        staging.clear();
        MemorySegment.copy(header, 0, stagingSeg, 0, FrameHeader.BYTES);
        if (length > 0) {
            MemorySegment.copy(payload, offset, stagingSeg, FrameHeader.BYTES, length);
        }
        staging.limit(FrameHeader.BYTES + length);
        if (c.backlog.isEmpty()) {
            try {
                while (staging.hasRemaining() && c.ch.write(staging) > 0) {
                    // keep writing while the socket takes bytes
                }
            } catch (IOException e) {
                lose(c, e.getMessage());
                throw e;
            }
        }
        c.enqueueCopy(staging);
    }

    /**
     * Sends a DATA frame whose native payload stays valid until {@link #released}: what the
     * socket does not take at once is queued by reference, never copied.
     */
    @Override
    public void sendPinned(int worldRank, MemorySegment header, MemorySegment payload, long offset, int length)
            throws IOException {
        if (!payload.isNative()) {
            send(worldRank, header, payload, offset, length);
            return;
        }
        sendGather(liveConn(worldRank), header, payload, offset, length, true);
    }

    @Override
    public boolean released(int worldRank) {
        Conn c = conns[worldRank];
        return c == null || c.pinned.isEmpty();
    }

    private Conn liveConn(int worldRank) throws IOException {
        Conn c = conns[worldRank];
        if (c == null || c.dead) {
            throw new IOException("no connection to rank " + worldRank + (c == null ? "" : ": " + c.deathCause));
        }
        return c;
    }

    /** Header from staging and payload straight from native memory in one gathering write. */
    private void sendGather(Conn c, MemorySegment header, MemorySegment payload, long offset, int length,
                            boolean pinned) throws IOException {
        staging.clear();
        MemorySegment.copy(header, 0, stagingSeg, 0, FrameHeader.BYTES);
        staging.limit(FrameHeader.BYTES);
        gather[0] = staging;
        gather[1] = payload.asSlice(offset, length).asByteBuffer();
        try {
            if (c.backlog.isEmpty()) {
                long want = (long) FrameHeader.BYTES + length;
                long done = 0;
                while (done < want) {
                    long n = c.ch.write(gather);
                    if (n <= 0) break;
                    done += n;
                }
            }
        } catch (IOException e) {
            gather[1] = null;
            lose(c, e.getMessage());
            throw e;
        }
        c.enqueueCopy(staging);
        if (pinned) {
            c.enqueuePinned(gather[1]);
        } else {
            c.enqueueCopy(gather[1]);
        }
        gather[1] = null;
    }

    @Override
    public int progress() {
        int work = 0;
        for (int i = 0; i < live.size(); i++) {
            Conn c = live.get(i);
            if (c.dead) continue;
            try {
                if (!c.backlog.isEmpty()) work += c.flush();
                work += read(c);
            } catch (IOException e) {
                lose(c, e.getMessage() == null ? e.toString() : e.getMessage());
            }
        }
        return work;
    }

    private int read(Conn c) throws IOException {
        if (c.placing != null) {
            int n = c.ch.read(c.placing);
            if (n < 0) throw new IOException("connection closed by rank " + c.peer);
            if (c.placing.hasRemaining()) return n > 0 ? 1 : 0;
            finishPlacement(c);
            return 1;
        }
        ByteBuffer in = c.in;
        int space = in.remaining();
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
            if (end - pos < FrameHeader.BYTES + plen) {
                if (plen >= PLACE_MIN && startPlacement(c, h, pos + FrameHeader.BYTES, end)) pos = end;
                break;
            }
            sink.onFrame(c.peer, h, c.inSeg.asSlice(pos + FrameHeader.BYTES, plen));
            pos += FrameHeader.BYTES + plen;
            frames++;
            if (c.dead) return frames;
        }
        if (pos > 0) {
            in.limit(end).position(pos);
            in.compact();
        }
        // the read filled the buffer: a frame larger than it, or a stream to read in larger pieces
        if (n == space && in.capacity() < IN_MAX) c.growIn();
        return frames + (n > 0 ? 1 : 0);
    }

    /**
     * Starts reading the rest of a large DATA payload straight into the receive buffer the
     * engine names (no copy through {@code in}); false when the engine names none.
     */
    private boolean startPlacement(Conn c, MemorySegment h, int payloadAt, int end) throws IOException {
        if (FrameHeader.type(h) != FrameHeader.DATA) return false;
        MemorySegment dest = sink.placement(c.peer, h);
        int plen = FrameHeader.payloadLength(h);
        if (dest == null || !dest.isNative() || dest.byteSize() != plen) return false;
        int have = end - payloadAt;
        MemorySegment.copy(c.inSeg, payloadAt, dest, 0, have);
        MemorySegment.copy(h, 0, c.placedHeader, 0, FrameHeader.BYTES);
        FrameHeader.flags(c.placedHeader, (short) (FrameHeader.flags(h) | FrameHeader.FLAG_PLACED));
        c.placed = dest;
        c.placing = dest.asSlice(have).asByteBuffer();
        return true;
    }

    private void finishPlacement(Conn c) {
        MemorySegment dest = c.placed;
        c.placing = null;
        c.placed = null;
        sink.onFrame(c.peer, c.placedHeader, dest);
    }

    private void lose(Conn c, String cause) {
        if (c.dead) return;
        c.dead = true;
        c.deathCause = cause;
        c.dropBacklog();
        try {
            c.ch.close();
        } catch (IOException ignored) {
            // already failing
        }
        sink.onPeerLost(c.peer, cause);
    }

    @Override
    public void close() {
        closing = true;
        for (Long id : premade.keySet()) dropSpare(id);
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

    /**
     * One connection's state. The backlog holds what the socket has not taken yet: copies in
     * pooled direct chunks (recycled once written, so a busy stream allocates nothing), and
     * pinned payloads by reference ({@link #sendPinned}).
     */
    private static final class Conn {
        /** The rank at the other end; -1 until {@link #bind} (a connection made ahead to a warm spare). */
        int peer = -1;
        final SocketChannel ch;
        /** Read buffer: {@link #IN_FIRST} bytes until a frame needs more ({@link #growIn}). */
        ByteBuffer in = ByteBuffer.allocateDirect(IN_FIRST);
        MemorySegment inSeg = MemorySegment.ofBuffer(in);
        final ArrayDeque<ByteBuffer> backlog = new ArrayDeque<>();
        /** Backlog entries that are pinned user memory (identity: not to be recycled). */
        final java.util.Set<ByteBuffer> pinned = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        final ArrayDeque<ByteBuffer> freeChunks = new ArrayDeque<>();
        final ByteBuffer[] writev = new ByteBuffer[16];
        long backlogBytes;
        /** A large DATA payload being read straight into its receive buffer, or null. */
        ByteBuffer placing;
        MemorySegment placed;
        final MemorySegment placedHeader = java.lang.foreign.Arena.ofAuto().allocate(FrameHeader.BYTES, 8);
        boolean dead;
        String deathCause;

        Conn(SocketChannel ch) {
            this.ch = ch;
        }

        /** The read buffer at its full size ({@link #IN_MAX}), keeping what it holds. */
        void growIn() {
            ByteBuffer b = ByteBuffer.allocateDirect(IN_MAX);
            inSeg = MemorySegment.ofBuffer(b); // at position 0: a segment starts at its buffer's position
            in.flip();
            b.put(in);
            in = b;
        }

        /** Queues a copy of {@code src}'s remaining bytes (appending to the last chunk if it fits). */
        void enqueueCopy(ByteBuffer src) {
            int n = src.remaining();
            if (n == 0) return;
            backlogBytes += n;
            ByteBuffer last = backlog.peekLast();
            if (last != null && !pinned.contains(last) && last.capacity() - last.limit() >= n) {
                int at = last.limit();
                last.limit(at + n);
                last.put(at, src, src.position(), n);
                src.position(src.limit());
                return;
            }
            while (src.hasRemaining()) {
                ByteBuffer chunk = freeChunks.poll();
                if (chunk == null) chunk = ByteBuffer.allocateDirect(CHUNK);
                int k = Math.min(src.remaining(), CHUNK);
                chunk.clear();
                chunk.put(0, src, src.position(), k);
                chunk.limit(k);
                src.position(src.position() + k);
                backlog.add(chunk);
            }
        }

        /** Queues {@code src}'s remaining bytes by reference; the memory stays pinned until written. */
        void enqueuePinned(ByteBuffer src) {
            int n = src.remaining();
            if (n == 0) return;
            backlogBytes += n;
            pinned.add(src);
            backlog.add(src);
        }

        /** Writes as much of the backlog as the socket takes, several chunks per system call. */
        int flush() throws IOException {
            int work = 0;
            while (!backlog.isEmpty()) {
                int k = 0;
                for (ByteBuffer b : backlog) {
                    writev[k++] = b;
                    if (k == writev.length) break;
                }
                long n = ch.write(writev, 0, k);
                java.util.Arrays.fill(writev, 0, k, null);
                if (n <= 0) break;
                backlogBytes -= n;
                work++;
                ByteBuffer b;
                while ((b = backlog.peek()) != null && !b.hasRemaining()) {
                    backlog.poll();
                    release(b);
                }
                if (b != null) break; // the socket is full
            }
            return work;
        }

        private void release(ByteBuffer b) {
            if (!pinned.remove(b) && freeChunks.size() < MAX_FREE_CHUNKS) {
                freeChunks.add(b);
            }
        }

        void dropBacklog() {
            backlog.clear();
            pinned.clear();
            backlogBytes = 0;
            placing = null;
            placed = null;
        }
    }
}
