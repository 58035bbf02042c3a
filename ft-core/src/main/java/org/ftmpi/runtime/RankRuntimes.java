package org.ftmpi.runtime;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.util.Map;

/** Chooses the {@link RankRuntime} of this process. */
public final class RankRuntimes {
    private static final SecureRandom RANDOM = new SecureRandom();

    private RankRuntimes() {}

    /**
     * Call once per process (the engine's MPI.Init does): under ftmpirun each call opens a new
     * control connection, and a rank may register only once.
     *
     * <p>The control client when this process was started by ftmpirun (environment variable
     * {@value RuntimeEnv#RANK} present), otherwise a singleton runtime (size 1, rank 0).
     *
     * @throws UncheckedIOException  if the job controller cannot be reached or authenticated
     * @throws IllegalStateException if the ftmpirun environment is present but incomplete, or the
     *                               process was not started through {@link RankMain}
     */
    public static RankRuntime fromEnvironment() {
        Map<String, String> a = assigned;
        return fromEnvironment(a != null ? a : System.getenv());
    }

    /** A warm spare's environment once it took over a rank (its own, plus FTMPI_RANK). */
    private static volatile Map<String, String> assigned;

    /** A warm spare takes over {@code rank}: MPI.Init then joins the job as that rank. */
    static void assign(int rank) {
        Map<String, String> env = new java.util.HashMap<>(System.getenv());
        env.put(RuntimeEnv.RANK, Integer.toString(rank));
        env.remove(RuntimeEnv.SPARE);
        assigned = env;
    }

    static RankRuntime fromEnvironment(Map<String, String> env) {
        if (env.get(RuntimeEnv.RANK) == null) {
            byte[] secret = new byte[SecretLine.SECRET_BYTES];
            RANDOM.nextBytes(secret);
            return new SingletonRuntime(RANDOM.nextLong() & Long.MAX_VALUE, secret, localHost());
        }
        byte[] secret = SecretLine.processSecret();
        if (secret == null) {
            throw new IllegalStateException("this process has the ftmpirun environment ("
                    + RuntimeEnv.RANK + ") but was not started by ftmpirun's rank launcher "
                    + RankMain.class.getName() + ", so it has no job secret");
        }
        int rank = intVar(env, RuntimeEnv.RANK);
        int size = intVar(env, RuntimeEnv.SIZE);
        if (size < 1 || rank < 0 || rank >= size) {
            throw new IllegalStateException("bad " + RuntimeEnv.RANK + "/" + RuntimeEnv.SIZE + ": "
                    + rank + "/" + size);
        }
        long jobId = Long.parseUnsignedLong(var(env, RuntimeEnv.JOB_ID), 16);
        long procId = Long.parseLong(var(env, RuntimeEnv.PROC_ID));
        String ctl = var(env, RuntimeEnv.CONTROLLER);
        int colon = ctl.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalStateException("bad " + RuntimeEnv.CONTROLLER + ": " + ctl);
        }
        String host = hostOf(env);
        JobInfo pre = ControlClient.preliminary(jobId, rank, size, procId, host, secret,
                RuntimeEnv.decodeOptions(env.get(RuntimeEnv.OPTIONS)));
        try {
            String ctlHost = controllerHost(ctl, colon);
            ControlClient.Connection made = Spare.takeRankConnection();
            if (made != null) return new ControlClient(pre, made, true);
            return new ControlClient(pre, ctlHost,
                    Integer.parseInt(ctl.substring(colon + 1)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String var(Map<String, String> env, String name) {
        String v = env.get(name);
        if (v == null || v.isEmpty()) {
            throw new IllegalStateException("environment variable " + name + " is missing");
        }
        return v;
    }

    private static int intVar(Map<String, String> env, String name) {
        try {
            return Integer.parseInt(var(env, name));
        } catch (NumberFormatException e) {
            throw new IllegalStateException("environment variable " + name + " is not a number");
        }
    }

    /** This process's host name as the launcher gave it ({@code FTMPI_HOST}), else the local host name. */
    static String hostOf(Map<String, String> env) {
        String host = env.getOrDefault(RuntimeEnv.HOST, "");
        return host.isEmpty() ? localHost() : host;
    }

    /** The host part of the controller's address {@code ctl} ("host:port", an IPv6 host in brackets); {@code colon}: its last ':'. */
    static String controllerHost(String ctl, int colon) {
        String host = ctl.substring(0, colon);
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    static String localHost() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }
}
