package org.ftmpi.runtime.wire;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Mutual challenge-response authentication over the per-job secret, run on a fresh connection
 * before any other frame:
 *
 * <pre>
 *   client                                         controller
 *   AUTH_HELLO     nc (32 random bytes)       -->
 *                                             <--  AUTH_CHALLENGE  ns (32 random bytes),
 *                                                    HMAC(secret, "ftmpi-auth-server" | nc | ns)
 *   checks the controller's proof
 *   AUTH_RESPONSE  HMAC(secret, "ftmpi-auth-client" | ns | nc)  -->
 *                                                  checks the client's proof
 *                                             <--  AUTH_OK
 * </pre>
 *
 * HMAC is HMAC-SHA256; proofs are compared in constant time. The distinct labels stop a proof
 * from being reflected back. The secret itself never crosses the connection.
 */
public final class Auth {
    public static final int NONCE_BYTES = 32;
    public static final int MAC_BYTES = 32;
    private static final byte[] SERVER_LABEL = "ftmpi-auth-server".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CLIENT_LABEL = "ftmpi-auth-client".getBytes(StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();

    private Auth() {}

    /** Runs the client side; returns normally once the controller accepted us. */
    public static void client(DataInputStream in, DataOutputStream out, byte[] secret)
            throws IOException {
        byte[] nc = nonce();
        FrameCodec.write(out, new Frame(FrameType.AUTH_HELLO, nc));
        Frame ch = expect(in, FrameType.AUTH_CHALLENGE);
        PayloadReader r = ch.reader();
        byte[] ns = r.getRaw(NONCE_BYTES);
        byte[] serverProof = r.getRaw(MAC_BYTES);
        r.end();
        if (!MessageDigest.isEqual(serverProof, hmac(secret, SERVER_LABEL, nc, ns))) {
            throw new AuthException("the controller failed authentication (wrong job secret)");
        }
        FrameCodec.write(out, new Frame(FrameType.AUTH_RESPONSE, hmac(secret, CLIENT_LABEL, ns, nc)));
        Frame ok = expect(in, FrameType.AUTH_OK);
        ok.reader().end();
    }

    /** Runs the controller side; returns normally once the client proved it knows the secret. */
    public static void server(DataInputStream in, DataOutputStream out, byte[] secret)
            throws IOException {
        Frame hello = expect(in, FrameType.AUTH_HELLO);
        PayloadReader r = hello.reader();
        byte[] nc = r.getRaw(NONCE_BYTES);
        r.end();
        byte[] ns = nonce();
        byte[] proof = hmac(secret, SERVER_LABEL, nc, ns);
        FrameCodec.write(out, new PayloadWriter().putRaw(ns).putRaw(proof)
                .toFrame(FrameType.AUTH_CHALLENGE));
        Frame resp = expect(in, FrameType.AUTH_RESPONSE);
        PayloadReader rr = resp.reader();
        byte[] clientProof = rr.getRaw(MAC_BYTES);
        rr.end();
        if (!MessageDigest.isEqual(clientProof, hmac(secret, CLIENT_LABEL, ns, nc))) {
            throw new AuthException("client failed authentication (wrong job secret)");
        }
        FrameCodec.write(out, Frame.of(FrameType.AUTH_OK));
    }

    private static Frame expect(DataInputStream in, int type) throws IOException {
        Frame f = FrameCodec.read(in, FrameCodec.MAX_AUTH_PAYLOAD);
        if (f == null) {
            throw new AuthException("connection closed during authentication");
        }
        if (f.type() != type) {
            throw new AuthException("expected " + FrameType.name(type) + " during authentication, got "
                    + FrameType.name(f.type()));
        }
        return f;
    }

    private static byte[] nonce() {
        byte[] b = new byte[NONCE_BYTES];
        RANDOM.nextBytes(b);
        return b;
    }

    static byte[] hmac(byte[] secret, byte[] label, byte[] a, byte[] b) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            mac.update(label);
            mac.update(a);
            mac.update(b);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }
}
