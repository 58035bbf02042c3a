package org.ftmpi.ddt;

import java.nio.ByteOrder;

/** Numeric representation of the packed stream. */
public enum Encoding {
    /** This machine's representation: plain copies. */
    NATIVE,
    /** Every multi-byte element byte-reversed, for a peer of the other endianness. */
    BYTE_SWAP,
    /**
     * MPI external32: big-endian two's complement integers, big-endian IEEE 754 floating point,
     * sizes per {@link BasicType#external32Size()}.
     */
    EXTERNAL32;

    /** Whether multi-byte elements are byte-reversed on this host. */
    boolean swaps() {
        return switch (this) {
            case NATIVE -> false;
            case BYTE_SWAP -> true;
            case EXTERNAL32 -> ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
        };
    }
}
