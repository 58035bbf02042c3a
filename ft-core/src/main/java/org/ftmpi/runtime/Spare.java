package org.ftmpi.runtime;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Map;

import org.ftmpi.runtime.wire.Auth;
import org.ftmpi.runtime.wire.Frame;
import org.ftmpi.runtime.wire.FrameCodec;
import org.ftmpi.runtime.wire.FrameType;
import org.ftmpi.transport.TransportProvider;
import org.ftmpi.transport.tcp.TcpSparePort;

/**
 * A warm spare (ftmpirun -sp, FT-MPI comm-mode REBUILD): a rank JVM started ahead of need, with
 * its classes loaded, connected to the job controller and waiting. When a rank fails the
 * controller sends it ASSIGN(rank); it then runs the user's main as that rank's replacement
 * ({@code MPI.isRestarted()} is true). When the job ends first, the controller closes the
 * connection and the spare exits 0.
 *
 * <p>Before it reports ready, a spare also makes and authenticates the control connection of
 * the rank it may become (the controller accepts a REGISTER on any authenticated connection);
 * its MPI_Init after a takeover uses that one ({@link #takeRankConnection}) instead of
 * connecting then, which took 35-50 ms of the recovery at a load average of 20
 * (docs/benchmarks.md, "Issue 8, session 6").
 *
 * <p>It also opens, from the start, the TCP listener its rank's transport will use
 * ({@link TcpSparePort}) and publishes it in SPARE; the controller passes it on to the ranks
 * (SPARE_READY), which connect and authenticate to it in the background. After a takeover the
 * survivors bind the rank to those connections instead of connecting (docs/fault-tolerance.md,
 * "REBUILD, cold respawn and warm spares").
 */
final class Spare {
    private Spare() {}

    /** The rank's control connection, made while waiting; taken by the first MPI_Init after the takeover. */
    private static volatile ControlClient.Connection rankConnection;

    /**
     * The control connection this spare made for the rank it took over, once; else null. The
     * spare registered as that rank on it already, at the assignment ({@link #awaitAssignment}).
     */
    static ControlClient.Connection takeRankConnection() {
        ControlClient.Connection c = rankConnection;
        rankConnection = null;
        return c;
    }

    /** Waits for an assignment; returns the rank to take over, or exits the JVM (status 0) when the job ends. */
    static int awaitAssignment(Map<String, String> env, byte[] secret) {
        String ctl = env.get(RuntimeEnv.CONTROLLER);
        long procId = Long.parseLong(env.get(RuntimeEnv.PROC_ID));
        int colon = ctl.lastIndexOf(':');
        String host = RankRuntimes.controllerHost(ctl, colon);
        String myHost = RankRuntimes.hostOf(env);
        int port = Integer.parseInt(ctl.substring(colon + 1));
        Map<String, byte[]> endpoints;
        long beatMs;
        try {
            rankConnection = ControlClient.connect(secret, host, port);
            long jobId = Long.parseUnsignedLong(env.get(RuntimeEnv.JOB_ID), 16);
            int size = Integer.parseInt(env.get(RuntimeEnv.SIZE));
            Map<String, String> options = RuntimeEnv.decodeOptions(env.get(RuntimeEnv.OPTIONS));
            beatMs = Long.parseLong(options.getOrDefault(ControlClient.HB_CONTROL, "0"));
            endpoints = new java.util.LinkedHashMap<>(Map.of("tcp",
                    TcpSparePort.open(jobId, size, secret, options.getOrDefault("tcp-bind", "127.0.0.1"))));
            endpoints.putAll(aheadEndpoints(new JobInfo(jobId, -1, size, new long[0], new String[0],
                    java.util.List.of(), secret, Map.copyOf(options))));
        } catch (IOException e) {
            System.exit(0); // the controller is gone: nothing to take over
            return -1;
        }
        try (Socket s = new Socket()) {
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress(host, port), 10_000);
            DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
            Auth.client(in, out, secret);
            DeathWatch.awaitHeld(); // the controller starts watching at SPARE
            FrameCodec.write(out, ControlMessages.spare(FrameType.SPARE, procId, myHost, endpoints));
            // the controller takes a silent spare for hung (ControlClient.HB_CONTROL)
            ControlClient.startBeats("ftmpi-spare-beat", out, beatMs, ControlClient.closedOf(s));
            Frame f;
            while ((f = FrameCodec.read(in, FrameCodec.MAX_PAYLOAD)) != null) {
                if (f.type() == FrameType.ASSIGN) {
                    int rank = f.reader().getInt();
                    org.ftmpi.p2p.FtTrace.spareAssigned(rank);
                    register(rank, procId, myHost, endpoints, beatMs);
                    return rank;
                }
            }
        } catch (IOException e) {
            // the controller is gone: nothing to take over
        }
        System.exit(0);
        return -1;
    }

    /**
     * The endpoints other transports of this process will publish after a takeover, known now
     * ({@link TransportProvider#spareEndpoint}: shared memory's domain and pid), so that the ranks
     * of this host re-make their shared-memory pairs with this spare when it takes over a rank.
     * Only the transports a replacement opens (tcp, shm; within {@code --transports}).
     */
    private static Map<String, byte[]> aheadEndpoints(JobInfo job) {
        String wanted = job.option("transports", "");
        java.util.List<String> allow = wanted.isBlank() ? null : java.util.Arrays.asList(wanted.split(","));
        Map<String, byte[]> eps = new java.util.LinkedHashMap<>();
        for (TransportProvider p : java.util.ServiceLoader.load(TransportProvider.class, Spare.class.getClassLoader())) {
            if (!org.ftmpi.p2p.Engine.REPLACEMENT_TRANSPORTS.contains(p.name())
                    || allow != null && !allow.contains(p.name())) continue;
            byte[] e = p.spareEndpoint(job);
            if (e != null) eps.put(p.name(), e);
        }
        return eps;
    }

    /**
     * Registers as {@code rank} at once, on the rank's control connection, with the endpoints
     * this spare listens at already: the controller announces the replacement (REPLACED) and
     * the survivors bind the rank to their pre-made connections and finish their recovery while
     * the user's main starts; the TABLE waits on the connection for MPI_Init, whose exchange
     * does not register again. The takeover is a state change: nothing after the failure waits
     * for the replacement's start-up.
     */
    private static void register(int rank, long procId, String host, Map<String, byte[]> endpoints, long beatMs)
            throws IOException {
        ControlClient.Connection c = rankConnection;
        FrameCodec.write(c.out(), ControlMessages.register(new ControlMessages.Register(rank, procId, host, endpoints)));
        org.ftmpi.p2p.FtTrace.early(org.ftmpi.p2p.FtTrace.REGISTERED, rank);
        // The controller watches the rank's beats from its table, sent now; the user's main may
        // run long before its MPI_Init reads it, so the beats start here, on the rank's connection.
        ControlClient.startBeats("ftmpi-control-beat", c.out(), beatMs, ControlClient.closedOf(c.socket()));
    }

    /** Loads the rank classes, then runs {@link WarmUp#run} in full before the spare reports ready. */
    static void warmUp(ClassLoader loader) {
        // The last two: what a replacement's MPI_Init loads that the warm-up (TCP, no trace) does not.
        Preload.classes(loader, "mpi.MPI", "mpi.Intracomm", "org.ftmpi.p2p.Engine",
                "org.ftmpi.runtime.ControlClient", "org.ftmpi.transport.tcp.TcpTransport",
                "org.ftmpi.transport.shm.ShmConnector$ReplacementWait", "org.ftmpi.p2p.FtTrace$Printer");
        WarmUp.run(WarmUp.SPARE_ROUNDS, true);
        takeoverOnce();
        firstCollection();
    }

    /**
     * Runs once what the takeover runs for the first time in this JVM and the warm-up does not:
     * an iteration of the environment's entries, and a reflective call of a static method taking
     * a {@code String[]} (as RankMain calls the user's main: the JDK spins the method-handle forms
     * of that shape at the first such call). Seen with {@code -Xlog:class+load} after the
     * assignment (docs/fault-tolerance.md, "Session 24"). And the close of a connected blocking
     * socket channel: the replacement's TCP transport closes the connection that the dead rank
     * made to this spare ahead, and the JDK spins a lambda at its first such close
     * ({@code Net.shouldShutdownWriteBeforeClose}; session 25, {@code -XX:LogClassLoadingCauseFor}).
     */
    private static void takeoverOnce() {
        int entries = 0;
        for (Map.Entry<String, String> e : System.getenv().entrySet()) if (e.getKey() != null) entries++;
        try {
            Spare.class.getDeclaredMethod("noMain", String[].class).invoke(null, (Object) new String[] {Integer.toString(entries)});
        } catch (ReflectiveOperationException e) {
            // only a warm-up
        }
        try (java.nio.channels.ServerSocketChannel server = java.nio.channels.ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0));
            try (java.nio.channels.SocketChannel out = java.nio.channels.SocketChannel.open(server.getLocalAddress())) {
                server.accept().close(); // channels are blocking until configured otherwise
            }
        } catch (IOException e) {
            // only a warm-up: the first close is then the takeover's
        }
    }

    /** The static {@code String[]} method {@link #takeoverOnce} calls; does nothing. */
    @SuppressWarnings("unused")
    private static void noMain(String[] args) {}

    /** At most this much garbage is made to bring about the JVM's first collection. */
    private static final long FIRST_COLLECTION_MAX_BYTES = 64L << 20;

    /**
     * Makes short-lived garbage until the JVM has run a collection, so that a spare's first one
     * (G1: a young collection of 7-28 ms with both of this machine's CPUs, the first of a JVM
     * being the slowest; G1 sizes the young generation after it, 4 to 39 regions of 4 MiB) runs
     * while it waits, not in the MPI_Init of the rank it takes over: a replacement of np 8 on 2
     * cores made it there, 14-28 ms of the recovery (docs/benchmarks.md, "Session 23"). Chunks
     * of 64 KiB are never humongous (G1 regions are 1 MiB at least); at most 64 MiB in all (a larger
     * young generation holds the MPI_Init of a replacement anyway).
     *
     * @return the bytes of garbage made
     */
    static long firstCollection() {
        long before = collections();
        if (before < 0) return 0; // no collector reports counts
        byte[][] keep = new byte[16][];
        long made = 0;
        while (made < FIRST_COLLECTION_MAX_BYTES && collections() == before) {
            for (int i = 0; i < keep.length; i++) keep[i] = new byte[1 << 16];
            made += keep.length << 16;
        }
        return made;
    }

    /** Collections the JVM's collectors ran so far, or -1 when none reports a count. */
    static long collections() {
        long n = 0;
        boolean any = false;
        for (var gc : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
            long c = gc.getCollectionCount();
            if (c >= 0) {
                n += c;
                any = true;
            }
        }
        return any ? n : -1;
    }
}
