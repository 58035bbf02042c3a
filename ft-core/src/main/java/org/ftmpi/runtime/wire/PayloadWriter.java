package org.ftmpi.runtime.wire;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** Builds a frame payload: big-endian ints and longs, length-prefixed UTF-8 strings and bytes. */
public final class PayloadWriter {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
    private final DataOutputStream out = new DataOutputStream(bytes);

    public PayloadWriter putInt(int v) {
        try {
            out.writeInt(v);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    public PayloadWriter putLong(long v) {
        try {
            out.writeLong(v);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Int length, then the bytes. */
    public PayloadWriter putBytes(byte[] b) {
        putInt(b.length);
        return putRaw(b);
    }

    /** The bytes without a length. */
    public PayloadWriter putRaw(byte[] b) {
        try {
            out.write(b);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Int length, then UTF-8. */
    public PayloadWriter putString(String s) {
        return putBytes(s.getBytes(StandardCharsets.UTF_8));
    }

    public byte[] toByteArray() {
        return bytes.toByteArray();
    }

    public Frame toFrame(int type) {
        return new Frame(type, toByteArray());
    }
}
