package org.ftmpi.ft.detect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.BitSet;

import org.junit.jupiter.api.Test;

class DetectCodecTest {
    private final byte[] secret = new byte[32];
    private final ByteBuffer buf = ByteBuffer.allocate(DetectCodec.MAX_DATAGRAM);

    private byte[] bytes(DetectCodec c, DetectMessage m) {
        ByteBuffer b = c.encode(m, buf);
        return Arrays.copyOf(b.array(), b.limit());
    }

    @Test
    void roundTripsEveryType() {
        DetectCodec c = new DetectCodec(5, secret);
        BitSet f = new BitSet();
        f.set(3);
        f.set(700);
        for (DetectMessage m : new DetectMessage[] {DetectMessage.heartbeat(1, 2, 3, f),
                DetectMessage.failed(1, 2, 4, 7, 8, 1, "declared failed by rank 1: no heartbeat for 512 ms"),
                DetectMessage.fenced(1, 2, 5, 9), DetectMessage.bye(1, 2, 6)}) {
            byte[] d = bytes(c, m);
            assertEquals(m, c.decode(d, d.length));
        }
    }

    @Test
    void rejectsWrongSecretOtherJobAndTampering() {
        DetectCodec c = new DetectCodec(5, secret);
        byte[] d = bytes(c, DetectMessage.fenced(1, 2, 5, 9));
        byte[] other = secret.clone();
        other[0] = 1;
        assertNull(new DetectCodec(5, other).decode(d, d.length));
        assertNull(new DetectCodec(6, secret).decode(d, d.length));
        byte[] t = d.clone();
        t[t.length - 20] ^= 1;
        assertNull(c.decode(t, t.length));
        assertNull(c.decode(d, d.length - 1));
    }
}
