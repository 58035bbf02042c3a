package org.ftmpi.runtime.wire;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class AuthTest {
    private static final byte[] SECRET = new byte[32];

    static {
        Arrays.fill(SECRET, (byte) 0x5a);
    }

    /** Runs server and client handshakes over loopback; returns the server's outcome. */
    private static CompletableFuture<Void> handshake(byte[] serverSecret, byte[] clientSecret,
                                                     CompletableFuture<Void> clientOutcome) throws Exception {
        try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> server = CompletableFuture.runAsync(() -> {
                try (Socket s = ss.accept()) {
                    Auth.server(new DataInputStream(s.getInputStream()), new DataOutputStream(s.getOutputStream()),
                            serverSecret);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            try (Socket c = new Socket(InetAddress.getLoopbackAddress(), ss.getLocalPort())) {
                Auth.client(new DataInputStream(c.getInputStream()), new DataOutputStream(c.getOutputStream()),
                        clientSecret);
                clientOutcome.complete(null);
            } catch (IOException e) {
                clientOutcome.completeExceptionally(e);
            }
            try {
                server.get(5, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                // reported through the returned future
            }
            return server;
        }
    }

    @Test
    void succeedsWithTheRightSecret() throws Exception {
        CompletableFuture<Void> client = new CompletableFuture<>();
        CompletableFuture<Void> server = handshake(SECRET, SECRET.clone(), client);
        assertDoesNotThrow(() -> client.get());
        assertDoesNotThrow(() -> server.get());
    }

    @Test
    void failsBothWaysWithAWrongSecret() throws Exception {
        byte[] wrong = SECRET.clone();
        wrong[31] ^= 1;
        CompletableFuture<Void> client = new CompletableFuture<>();
        CompletableFuture<Void> server = handshake(SECRET, wrong, client);
        ExecutionException ce = assertThrows(ExecutionException.class, client::get);
        assertInstanceOf(AuthException.class, ce.getCause());
        ExecutionException se = assertThrows(ExecutionException.class, server::get);
        assertInstanceOf(IOException.class, se.getCause().getCause());
    }

    @Test
    void proofsDependOnLabelsAndNonceOrder() {
        byte[] a = new byte[32];
        byte[] b = new byte[32];
        b[0] = 1;
        byte[] x = Auth.hmac(SECRET, "l1".getBytes(), a, b);
        byte[] y = Auth.hmac(SECRET, "l1".getBytes(), b, a);
        byte[] z = Auth.hmac(SECRET, "l2".getBytes(), a, b);
        org.junit.jupiter.api.Assertions.assertFalse(Arrays.equals(x, y));
        org.junit.jupiter.api.Assertions.assertFalse(Arrays.equals(x, z));
    }
}
