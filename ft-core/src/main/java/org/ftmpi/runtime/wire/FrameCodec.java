package org.ftmpi.runtime.wire;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;

import org.ftmpi.Version;

/**
 * Reads and writes {@link Frame}s. Stateless; callers serialise writes on one stream themselves
 * ({@link #write} is one buffered write plus flush, so a lock around it keeps frames whole).
 */
public final class FrameCodec {
    /** Bytes of version and type that the length field counts. */
    public static final int HEADER_AFTER_LENGTH = 2;
    /** Largest payload accepted after authentication (the endpoint table of a large job). */
    public static final int MAX_PAYLOAD = 16 << 20;
    /** Largest payload accepted before authentication. */
    public static final int MAX_AUTH_PAYLOAD = 256;

    private FrameCodec() {}

    public static void write(DataOutputStream out, Frame frame) throws IOException {
        byte[] p = frame.payload();
        if (p.length > MAX_PAYLOAD) {
            throw new FrameException("frame payload too large: " + p.length + " bytes");
        }
        byte[] buf = new byte[4 + HEADER_AFTER_LENGTH + p.length];
        int len = HEADER_AFTER_LENGTH + p.length;
        buf[0] = (byte) (len >>> 24);
        buf[1] = (byte) (len >>> 16);
        buf[2] = (byte) (len >>> 8);
        buf[3] = (byte) len;
        buf[4] = (byte) Version.WIRE;
        buf[5] = (byte) frame.type();
        System.arraycopy(p, 0, buf, 6, p.length);
        out.write(buf);
        out.flush();
    }

    /**
     * Reads one frame.
     *
     * @param maxPayload largest payload accepted; a longer frame is rejected unread
     * @return the frame, or null at a clean end of stream (before the first byte of a frame)
     * @throws FrameException on a bad length or version, or a stream ending inside a frame
     */
    public static Frame read(DataInputStream in, int maxPayload) throws IOException {
        int b0 = in.read();
        if (b0 < 0) {
            return null;
        }
        int len;
        int version;
        int type;
        byte[] payload;
        try {
            len = (b0 << 24) | (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8)
                    | in.readUnsignedByte();
            if (len < HEADER_AFTER_LENGTH || len - HEADER_AFTER_LENGTH > maxPayload) {
                throw new FrameException("bad frame length " + len + " (limit "
                        + (maxPayload + HEADER_AFTER_LENGTH) + ")");
            }
            version = in.readUnsignedByte();
            if (version != Version.WIRE) {
                throw new FrameException("unsupported wire version " + version + " (expected "
                        + Version.WIRE + ")");
            }
            type = in.readUnsignedByte();
            payload = new byte[len - HEADER_AFTER_LENGTH];
            in.readFully(payload);
        } catch (EOFException e) {
            throw new FrameException("stream ended inside a frame");
        }
        return new Frame(type, payload);
    }
}
