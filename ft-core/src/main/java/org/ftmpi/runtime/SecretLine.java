package org.ftmpi.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * The one line the launcher writes first on each rank's stdin: {@code FTMPI-SECRET 1 <64 hex>\n}.
 * {@link RankMain} reads it byte by byte (so no user input is consumed) and keeps the secret
 * here for {@link RankRuntimes#fromEnvironment()}.
 */
public final class SecretLine {
    public static final String PREFIX = "FTMPI-SECRET 1 ";
    public static final int SECRET_BYTES = 32;
    private static final int MAX_LINE = PREFIX.length() + 2 * SECRET_BYTES + 2;

    private static volatile byte[] processSecret;

    private SecretLine() {}

    public static byte[] format(byte[] secret) {
        return (PREFIX + HexFormat.of().formatHex(secret) + "\n").getBytes(StandardCharsets.US_ASCII);
    }

    /** Reads exactly one secret line from {@code in}, not one byte more. */
    public static byte[] read(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder(MAX_LINE);
        while (true) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("stdin ended before the job secret line");
            }
            if (c == '\n') {
                break;
            }
            if (sb.length() >= MAX_LINE) {
                throw new IOException("malformed job secret line (too long)");
            }
            sb.append((char) c);
        }
        String line = sb.toString();
        if (line.endsWith("\r")) {
            line = line.substring(0, line.length() - 1);
        }
        if (!line.startsWith(PREFIX) || line.length() != PREFIX.length() + 2 * SECRET_BYTES) {
            throw new IOException("malformed job secret line");
        }
        try {
            return HexFormat.of().parseHex(line, PREFIX.length(), line.length());
        } catch (IllegalArgumentException e) {
            throw new IOException("malformed job secret line");
        }
    }

    static void setProcessSecret(byte[] secret) {
        processSecret = secret.clone();
    }

    /** The secret read by {@link RankMain}, or null when the process was not started by it. */
    static byte[] processSecret() {
        byte[] s = processSecret;
        return s == null ? null : s.clone();
    }
}
