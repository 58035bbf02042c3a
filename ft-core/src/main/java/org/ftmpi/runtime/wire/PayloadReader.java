package org.ftmpi.runtime.wire;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** Reads a frame payload written by {@link PayloadWriter}; any overrun is a {@link FrameException}. */
public final class PayloadReader {
    private final byte[] buf;
    private int pos;

    public PayloadReader(byte[] buf) {
        this.buf = buf;
    }

    private void need(int n) throws FrameException {
        if (n < 0 || buf.length - pos < n) {
            throw new FrameException("truncated payload: need " + n + " bytes at offset " + pos
                    + " of " + buf.length);
        }
    }

    public int getInt() throws FrameException {
        need(4);
        int v = ((buf[pos] & 0xff) << 24) | ((buf[pos + 1] & 0xff) << 16)
                | ((buf[pos + 2] & 0xff) << 8) | (buf[pos + 3] & 0xff);
        pos += 4;
        return v;
    }

    public long getLong() throws FrameException {
        long hi = getInt() & 0xffffffffL;
        long lo = getInt() & 0xffffffffL;
        return (hi << 32) | lo;
    }

    public byte[] getRaw(int n) throws FrameException {
        need(n);
        byte[] b = Arrays.copyOfRange(buf, pos, pos + n);
        pos += n;
        return b;
    }

    public byte[] getBytes() throws FrameException {
        int n = getInt();
        if (n < 0) {
            throw new FrameException("negative length " + n);
        }
        return getRaw(n);
    }

    public String getString() throws FrameException {
        return new String(getBytes(), StandardCharsets.UTF_8);
    }

    /** Fails unless the whole payload was consumed. */
    public void end() throws FrameException {
        if (pos != buf.length) {
            throw new FrameException((buf.length - pos) + " unexpected trailing payload bytes");
        }
    }
}
