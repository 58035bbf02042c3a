package org.ftmpi.transport.tcp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.ftmpi.Version;

/**
 * Mutual challenge-response authentication of a TCP data connection with the per-job secret,
 * done in blocking mode before the channel is used for frames.
 *
 * <pre>
 *  connector                                   acceptor
 *  HELLO  magic "FTMJ" | ver | jobId | rank | nonceC(16)  --->
 *                                    <---  nonceA(16) | HMAC(secret, "A" | jobId | rankC | nonceC | nonceA)
 *  HMAC(secret, "C" | jobId | rankC | nonceA | nonceC)     --->
 * </pre>
 * A side whose check fails closes the connection; nothing is read from it before.
 */
final class TcpHandshake {
    static final int MAGIC = 0x464d544a; // "FTMJ"
    /** The message of the IOException when the peer closes the connection during the handshake. */
    static final String CLOSED = "connection closed during handshake";
    private static final int NONCE = 16;
    private static final int MAC = 32;
    private static final SecureRandom RANDOM = new SecureRandom();

    private TcpHandshake() {}

    /** Connector side; returns normally when both sides proved the secret. */
    static void connect(SocketChannel ch, byte[] secret, long jobId, int myRank) throws IOException {
        byte[] nonceC = nonce();
        ByteBuffer hello = ByteBuffer.allocate(4 + 1 + 8 + 4 + NONCE).order(ByteOrder.LITTLE_ENDIAN);
        hello.putInt(MAGIC).put((byte) Version.WIRE).putLong(jobId).putInt(myRank).put(nonceC).flip();
        writeFully(ch, hello);
        ByteBuffer reply = readFully(ch, NONCE + MAC);
        byte[] nonceA = new byte[NONCE];
        byte[] macA = new byte[MAC];
        reply.get(nonceA).get(macA);
        if (!MessageDigest.isEqual(macA, mac(secret, 'A', jobId, myRank, nonceC, nonceA))) {
            throw new IOException("peer failed authentication (wrong job secret)");
        }
        writeFully(ch, ByteBuffer.wrap(mac(secret, 'C', jobId, myRank, nonceA, nonceC)));
    }

    /** Acceptor side; returns the connector's rank once it proved the secret. */
    static int accept(SocketChannel ch, byte[] secret, long jobId, int size) throws IOException {
        ByteBuffer hello = readFully(ch, 4 + 1 + 8 + 4 + NONCE).order(ByteOrder.LITTLE_ENDIAN);
        if (hello.getInt() != MAGIC) throw new IOException("not an FT-MPI/J data connection (bad magic)");
        int ver = hello.get();
        if (ver != Version.WIRE) throw new IOException("wire version " + ver + ", expected " + Version.WIRE);
        long peerJob = hello.getLong();
        int rank = hello.getInt();
        if (peerJob != jobId) throw new IOException("connection from another job (" + Long.toHexString(peerJob) + ")");
        if (rank < 0 || rank >= size) throw new IOException("connection claims invalid rank " + rank);
        byte[] nonceC = new byte[NONCE];
        hello.get(nonceC);
        byte[] nonceA = nonce();
        ByteBuffer reply = ByteBuffer.allocate(NONCE + MAC);
        reply.put(nonceA).put(mac(secret, 'A', jobId, rank, nonceC, nonceA)).flip();
        writeFully(ch, reply);
        byte[] macC = new byte[MAC];
        readFully(ch, MAC).get(macC);
        if (!MessageDigest.isEqual(macC, mac(secret, 'C', jobId, rank, nonceA, nonceC))) {
            throw new IOException("peer claiming rank " + rank + " failed authentication (wrong job secret)");
        }
        return rank;
    }

    /**
     * A connection to a replacement (FT-MPI REBUILD: a survivor's reconnect, or a warm spare's
     * pre-made connection) carries, after the handshake, the connector's process id: the
     * replacement takes only connections from the processes its table names, so a connection
     * pre-made by a process that has died since is closed, not taken for its rank's new one.
     */
    static void writeProcId(SocketChannel ch, long procId) throws IOException {
        writeFully(ch, ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, procId));
    }

    /** Reads what {@link #writeProcId} wrote. */
    static long readProcId(SocketChannel ch) throws IOException {
        return readFully(ch, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    private static byte[] nonce() {
        byte[] n = new byte[NONCE];
        RANDOM.nextBytes(n);
        return n;
    }

    private static byte[] mac(byte[] secret, char role, long jobId, int rank, byte[] first, byte[] second) {
        try {
            Mac m = Mac.getInstance("HmacSHA256");
            m.init(new SecretKeySpec(secret, "HmacSHA256"));
            ByteBuffer b = ByteBuffer.allocate(1 + 8 + 4 + first.length + second.length);
            b.put((byte) role).putLong(jobId).putInt(rank).put(first).put(second);
            return m.doFinal(b.array());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    private static void writeFully(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (ch.write(b) < 0) throw new IOException(CLOSED);
        }
    }

    /** Reads through the socket adaptor, which honours SO_TIMEOUT (channel reads do not). */
    private static ByteBuffer readFully(SocketChannel ch, int n) throws IOException {
        byte[] b = ch.socket().getInputStream().readNBytes(n);
        if (b.length < n) throw new IOException(CLOSED);
        return ByteBuffer.wrap(b);
    }
}
