package org.ftmpi.ddt;

import java.util.Objects;

/** Padding mode and encoding of a packed stream. Sender and receiver must use the same options. */
public record PackOptions(Padding padding, Encoding encoding) {
    /** Homogeneous default: no padding, native representation (the fast path). */
    public static final PackOptions NATIVE = new PackOptions(Padding.NONE, Encoding.NATIVE);
    /** {@code MPI_Pack_external("external32", ...)}. */
    public static final PackOptions EXTERNAL32 = new PackOptions(Padding.NONE, Encoding.EXTERNAL32);

    public PackOptions {
        if (padding == null) {
            throw DatatypeException.arg("padding must not be null");
        }
        if (encoding == null) {
            throw DatatypeException.arg("encoding must not be null");
        }
        Objects.requireNonNull(padding);
    }

    /** True when the stream is the plain concatenation of the type's bytes. */
    boolean isPlain() {
        return padding == Padding.NONE && !encoding.swaps();
    }
}
