package org.ftmpi.runtime.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import org.ftmpi.Version;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class FrameCodecTest {

    private static byte[] encode(Frame... frames) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(b);
        for (Frame f : frames) {
            FrameCodec.write(out, f);
        }
        return b.toByteArray();
    }

    private static DataInputStream in(byte[] b) {
        return new DataInputStream(new ByteArrayInputStream(b));
    }

    @Test
    void roundTripsFramesAndPayloadFields() throws IOException {
        Frame a = new PayloadWriter().putInt(-7).putLong(Long.MIN_VALUE + 3).putString("héllo")
                .putBytes(new byte[] {1, 2, 3}).putRaw(new byte[] {9}).toFrame(FrameType.REGISTER);
        byte[] wire = encode(a, Frame.of(FrameType.FINALIZE));
        assertEquals(4 + 2 + a.payload().length + 4 + 2, wire.length);
        assertEquals(Version.WIRE, wire[4]);
        DataInputStream in = in(wire);
        Frame back = FrameCodec.read(in, FrameCodec.MAX_PAYLOAD);
        assertEquals(FrameType.REGISTER, back.type());
        PayloadReader r = back.reader();
        assertEquals(-7, r.getInt());
        assertEquals(Long.MIN_VALUE + 3, r.getLong());
        assertEquals("héllo", r.getString());
        assertArrayEquals(new byte[] {1, 2, 3}, r.getBytes());
        assertArrayEquals(new byte[] {9}, r.getRaw(1));
        r.end();
        Frame fin = FrameCodec.read(in, FrameCodec.MAX_PAYLOAD);
        assertEquals(FrameType.FINALIZE, fin.type());
        assertEquals(0, fin.payload().length);
        assertNull(FrameCodec.read(in, FrameCodec.MAX_PAYLOAD), "clean end of stream");
    }

    @Test
    void rejectsWrongVersion() throws IOException {
        byte[] wire = encode(Frame.of(FrameType.FINALIZE));
        wire[4] = (byte) (Version.WIRE + 1);
        FrameException e = assertThrows(FrameException.class, () -> FrameCodec.read(in(wire), 100));
        assertTrue(e.getMessage().contains("version"), e.getMessage());
    }

    @Test
    void rejectsBadLengths() {
        byte[] tooShort = {0, 0, 0, 1, (byte) Version.WIRE};
        assertThrows(FrameException.class, () -> FrameCodec.read(in(tooShort), 100));
        byte[] negative = {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xfe, 1, 1};
        assertThrows(FrameException.class, () -> FrameCodec.read(in(negative), 100));
        byte[] tooLong = {0, 0, 1, 0, (byte) Version.WIRE, 1};
        assertThrows(FrameException.class, () -> FrameCodec.read(in(tooLong), 100));
    }

    @Test
    void rejectsTruncatedFramesAndPayloads() throws IOException {
        byte[] wire = encode(new PayloadWriter().putLong(5).toFrame(FrameType.TABLE));
        byte[] cut = Arrays.copyOf(wire, wire.length - 3);
        assertThrows(FrameException.class, () -> FrameCodec.read(in(cut), 100));
        byte[] cutHeader = Arrays.copyOf(wire, 3);
        assertThrows(FrameException.class, () -> FrameCodec.read(in(cutHeader), 100));
        PayloadReader r = new PayloadReader(new byte[] {0, 0, 0, 9, 1});
        assertThrows(FrameException.class, r::getBytes);
        PayloadReader trailing = new PayloadReader(new byte[] {0, 0, 0, 1, 7});
        trailing.getInt();
        assertThrows(FrameException.class, trailing::end);
    }
}
