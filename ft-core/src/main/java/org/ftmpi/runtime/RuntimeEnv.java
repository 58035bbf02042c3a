package org.ftmpi.runtime;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Names of the environment variables through which ftmpirun tells a rank who it is. None of them
 * is secret: the job secret travels on the rank's stdin (see {@link SecretLine}).
 */
public final class RuntimeEnv {
    /** Rank in MPI_COMM_WORLD (decimal). Its presence marks a process started by ftmpirun. */
    public static final String RANK = "FTMPI_RANK";
    /** Number of ranks (decimal). */
    public static final String SIZE = "FTMPI_SIZE";
    /** Job id (16 hex digits). */
    public static final String JOB_ID = "FTMPI_JOB_ID";
    /** This process's never-reused process id (decimal). */
    public static final String PROC_ID = "FTMPI_PROC_ID";
    /** Job controller address, {@code host:port}. */
    public static final String CONTROLLER = "FTMPI_CONTROLLER";
    /** Host name of the node, as the launcher sees it. */
    public static final String HOST = "FTMPI_HOST";
    /** Job options, {@code key=value} pairs joined by {@code &}, each side URL-encoded. */
    public static final String OPTIONS = "FTMPI_OPTIONS";
    /** {@code 1} in a warm spare JVM (ftmpirun -sp): it waits for a rank to take over (no FTMPI_RANK). */
    public static final String SPARE = "FTMPI_SPARE";
    /**
     * {@code <file>#<slot>}: the process holds that slot's robust mutex of the job's death-watch
     * file for its whole life ({@link DeathWatch}); absent when the watch is off.
     */
    public static final String DEATH_WATCH = "FTMPI_DEATH_WATCH";

    private RuntimeEnv() {}

    public static String encodeOptions(Map<String, String> options) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, String> e : options.entrySet()) {
            if (!sb.isEmpty()) {
                sb.append('&');
            }
            sb.append(URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8)).append('=')
                    .append(URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8));
        }
        return sb.toString();
    }

    public static Map<String, String> decodeOptions(String s) {
        Map<String, String> m = new LinkedHashMap<>();
        if (s == null || s.isEmpty()) {
            return m;
        }
        for (String pair : s.split("&")) {
            int eq = pair.indexOf('=');
            String k = eq < 0 ? pair : pair.substring(0, eq);
            String v = eq < 0 ? "" : pair.substring(eq + 1);
            m.put(URLDecoder.decode(k, StandardCharsets.UTF_8), URLDecoder.decode(v, StandardCharsets.UTF_8));
        }
        return m;
    }
}
