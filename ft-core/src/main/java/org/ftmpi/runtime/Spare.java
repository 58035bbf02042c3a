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
import org.ftmpi.runtime.wire.PayloadWriter;

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
 */
final class Spare {
    private Spare() {}

    /** The rank's control connection, made while waiting; taken by the first MPI_Init after the takeover. */
    private static volatile ControlClient.Connection rankConnection;

    /** The control connection this spare made for the rank it took over, once; else null. */
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
        String host = ctl.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) host = host.substring(1, host.length() - 1);
        int port = Integer.parseInt(ctl.substring(colon + 1));
        try {
            rankConnection = ControlClient.connect(secret, host, port);
        } catch (IOException e) {
            System.exit(0); // the controller is gone: nothing to take over
        }
        try (Socket s = new Socket()) {
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress(host, port), 10_000);
            DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
            Auth.client(in, out, secret);
            DeathWatch.awaitHeld(); // the controller starts watching at SPARE
            FrameCodec.write(out, new PayloadWriter().putLong(procId).toFrame(FrameType.SPARE));
            Frame f;
            while ((f = FrameCodec.read(in, FrameCodec.MAX_PAYLOAD)) != null) {
                if (f.type() == FrameType.ASSIGN) {
                    int rank = f.reader().getInt();
                    org.ftmpi.p2p.FtTrace.spareAssigned(rank);
                    return rank;
                }
            }
        } catch (IOException e) {
            // the controller is gone: nothing to take over
        }
        System.exit(0);
        return -1;
    }

    /** Loads the rank classes, then runs {@link WarmUp#run} in full before the spare reports ready. */
    static void warmUp(ClassLoader loader) {
        for (String c : new String[] {"mpi.MPI", "mpi.Intracomm", "org.ftmpi.p2p.Engine",
                "org.ftmpi.runtime.ControlClient", "org.ftmpi.transport.tcp.TcpTransport"}) {
            try {
                Class.forName(c, true, loader);
            } catch (ClassNotFoundException | LinkageError e) {
                // not on this class path: loaded on demand
            }
        }
        WarmUp.run(WarmUp.SPARE_ROUNDS, true);
    }
}
