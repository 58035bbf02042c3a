package org.ftmpi.ckpt.rs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * One shard of a stripe: its index in {@code [0, k + m)} (data shards first, then parity), its
 * payload and the CRC32C of the payload. A shard whose payload no longer matches its CRC is corrupt
 * and {@link ShardSet#reconstruct} treats it as lost.
 *
 * <p>Serialized header ({@value #HEADER_BYTES} bytes, little-endian), written before the payload when a
 * shard is stored or sent:
 * <pre>
 *  offset size field
 *   0     4    magic 0x31535246 ("FRS1")
 *   4     1    version (1)
 *   5     1    flags (0, reserved)
 *   6     2    k  (data shards in the stripe)
 *   8     2    m  (parity shards in the stripe)
 *  10     2    index (0..k+m-1)
 *  12     4    reserved (0)
 *  16     8    payload length in bytes
 *  24     4    CRC32C of the payload
 *  28     4    CRC32C of header bytes 0..27
 * </pre>
 */
public final class Shard {
    public static final int HEADER_BYTES = 32;
    public static final int MAGIC = 0x31535246;
    public static final int VERSION = 1;

    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final int index;
    private final MemorySegment data;
    private final int crc32c;

    private Shard(int index, MemorySegment data, int crc32c) {
        if (index < 0 || index > 255) throw new IllegalArgumentException("index: must be in [0, 256), got " + index);
        this.index = index;
        this.data = Objects.requireNonNull(data, "data");
        this.crc32c = crc32c;
    }

    /** A shard over {@code data} with its CRC32C computed now. */
    public static Shard seal(int index, MemorySegment data) {
        return new Shard(index, data, crc32c(data));
    }

    /** A shard with a CRC received from elsewhere (e.g. a header); not verified here. */
    public static Shard of(int index, MemorySegment data, int crc32c) {
        return new Shard(index, data, crc32c);
    }

    public int index() {
        return index;
    }

    public long length() {
        return data.byteSize();
    }

    public int crc32c() {
        return crc32c;
    }

    public MemorySegment data() {
        return data;
    }

    /** True if the payload still matches the recorded CRC32C. */
    public boolean verify() {
        return crc32c(data) == crc32c;
    }

    /** CRC32C (Castagnoli) of a segment's bytes (java.util.zip.CRC32C, hardware-accelerated). */
    public static int crc32c(MemorySegment s) {
        CRC32C c = new CRC32C();
        long off = 0, len = s.byteSize();
        // asByteBuffer is limited to 2 GiB per view
        while (off < len) {
            long n = Math.min(len - off, 1L << 30);
            c.update(s.asSlice(off, n).asByteBuffer());
            off += n;
        }
        return (int) c.getValue();
    }

    /** Writes the {@value #HEADER_BYTES}-byte header for this shard of a (k, m) stripe. */
    public void writeHeader(MemorySegment dst, int k, int m) {
        if (k < 1 || m < 0 || k + m > 256) throw new IllegalArgumentException("k, m: invalid stripe shape k=" + k + ", m=" + m);
        if (index >= k + m) throw new IllegalArgumentException("index: " + index + " not below k + m = " + (k + m));
        if (dst.byteSize() < HEADER_BYTES) throw new IllegalArgumentException("dst: needs " + HEADER_BYTES + " bytes, has " + dst.byteSize());
        dst.set(I32, 0, MAGIC);
        dst.set(ValueLayout.JAVA_BYTE, 4, (byte) VERSION);
        dst.set(ValueLayout.JAVA_BYTE, 5, (byte) 0);
        dst.set(I16, 6, (short) k);
        dst.set(I16, 8, (short) m);
        dst.set(I16, 10, (short) index);
        dst.set(I32, 12, 0);
        dst.set(I64, 16, length());
        dst.set(I32, 24, crc32c);
        dst.set(I32, 28, crc32c(dst.asSlice(0, 28)));
    }

    /** A parsed header. */
    public record Header(int k, int m, int index, long length, int crc32c) {}

    /**
     * Parses and checks a header.
     *
     * @throws ErasureCodeException if the magic, version, header checksum or fields are invalid
     */
    public static Header readHeader(MemorySegment src) {
        if (src.byteSize() < HEADER_BYTES) {
            throw new ErasureCodeException("src: header needs " + HEADER_BYTES + " bytes, has " + src.byteSize());
        }
        int magic = src.get(I32, 0);
        if (magic != MAGIC) throw new ErasureCodeException(String.format("src: bad shard magic 0x%08x", magic));
        int version = src.get(ValueLayout.JAVA_BYTE, 4) & 0xff;
        if (version != VERSION) throw new ErasureCodeException("src: unsupported shard header version " + version);
        int hcrc = crc32c(src.asSlice(0, 28));
        if (hcrc != src.get(I32, 28)) throw new ErasureCodeException("src: shard header checksum mismatch");
        int k = src.get(I16, 6) & 0xffff, m = src.get(I16, 8) & 0xffff, index = src.get(I16, 10) & 0xffff;
        long length = src.get(I64, 16);
        if (k < 1 || k + m > 256 || index >= k + m || length < 0) {
            throw new ErasureCodeException("src: inconsistent shard header k=" + k + " m=" + m + " index=" + index + " length=" + length);
        }
        return new Header(k, m, index, length, src.get(I32, 24));
    }

    @Override
    public String toString() {
        return "Shard[index=" + index + ", length=" + length() + String.format(", crc32c=%08x]", crc32c);
    }
}
