package org.ftmpi.ft.detect;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.BitSet;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Encodes and authenticates detector datagrams. Layout (big-endian):
 * <pre>
 *   0  u8[2] magic 'F' 'D'      2  u8 version (1)       3  u8 type
 *   4  i64 job id               12 i32 from rank        16 i64 from procId
 *   24 i64 seq                  32 body (per type)
 *      HEARTBEAT: u16 byte count, bitset bytes (little-endian bit order, as BitSet.toByteArray)
 *      FAILED:    i32 subject, i64 subject procId, i32 origin, u16 length, UTF-8 how
 *      FENCED:    i32 subject
 *      BYE:       (empty)
 *   end - 16  u8[16] HMAC-SHA256 over all preceding bytes, truncated to 16 bytes
 * </pre>
 * The MAC key is HMAC-SHA256(job secret, "ftmpi-detect-v1"), so only members of the job can
 * produce datagrams; a datagram of another job or with a wrong MAC is dropped and counted.
 * No Java serialization.
 *
 * <p><b>Note:</b> not thread-safe (one Mac); each detector thread owns one codec.
 */
public final class DetectCodec {
    static final int VERSION = 1;
    static final int HEADER = 32;
    static final int MAC_BYTES = 16;
    static final int MAX_HOW = 512;
    /** Largest datagram: header, a bitset of 65 536 ranks, MAC. */
    public static final int MAX_DATAGRAM = HEADER + 2 + 8192 + MAC_BYTES;

    private final long jobId;
    private final Mac mac;
    private final byte[] tag = new byte[32];

    public DetectCodec(long jobId, byte[] secret) {
        this.jobId = jobId;
        try {
            Mac k = Mac.getInstance("HmacSHA256");
            k.init(new SecretKeySpec(secret, "HmacSHA256"));
            byte[] key = k.doFinal("ftmpi-detect-v1".getBytes(StandardCharsets.US_ASCII));
            mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    /** Encodes {@code m} into {@code buf} (cleared first); returns buf flipped for sending. */
    public ByteBuffer encode(DetectMessage m, ByteBuffer buf) {
        buf.clear();
        buf.put((byte) 'F').put((byte) 'D').put((byte) VERSION).put((byte) m.type());
        buf.putLong(jobId).putInt(m.from()).putLong(m.fromProcId()).putLong(m.seq());
        switch (m.type()) {
            case DetectMessage.HEARTBEAT -> {
                byte[] bits = m.failed().toByteArray();
                buf.putShort((short) bits.length).put(bits);
            }
            case DetectMessage.FAILED -> {
                byte[] how = m.how().getBytes(StandardCharsets.UTF_8);
                if (how.length > MAX_HOW) how = Arrays.copyOf(how, MAX_HOW);
                buf.putInt(m.subject()).putLong(m.subjectProcId()).putInt(m.origin())
                        .putShort((short) how.length).put(how);
            }
            case DetectMessage.FENCED -> buf.putInt(m.subject());
            case DetectMessage.BYE -> { }
            default -> throw new IllegalArgumentException("type " + m.type());
        }
        mac.update(buf.array(), 0, buf.position());
        try {
            mac.doFinal(tag, 0);
        } catch (javax.crypto.ShortBufferException e) {
            throw new IllegalStateException(e);
        }
        buf.put(tag, 0, MAC_BYTES);
        return buf.flip();
    }

    /** Decodes and verifies one datagram ({@code length} bytes of {@code data}); null if invalid. */
    public DetectMessage decode(byte[] data, int length) {
        if (length < HEADER + MAC_BYTES || data[0] != 'F' || data[1] != 'D' || data[2] != VERSION) {
            return null;
        }
        mac.update(data, 0, length - MAC_BYTES);
        try {
            mac.doFinal(tag, 0);
        } catch (javax.crypto.ShortBufferException e) {
            throw new IllegalStateException(e);
        }
        if (!MessageDigest.isEqual(Arrays.copyOf(tag, MAC_BYTES),
                Arrays.copyOfRange(data, length - MAC_BYTES, length))) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(data, 0, length - MAC_BYTES);
        b.position(3);
        int type = b.get() & 0xff;
        try {
            if (b.getLong() != jobId) return null;
            int from = b.getInt();
            long procId = b.getLong();
            long seq = b.getLong();
            DetectMessage m = switch (type) {
                case DetectMessage.HEARTBEAT -> {
                    byte[] bits = new byte[b.getShort() & 0xffff];
                    b.get(bits);
                    yield DetectMessage.heartbeat(from, procId, seq, BitSet.valueOf(bits));
                }
                case DetectMessage.FAILED -> {
                    int subject = b.getInt();
                    long sp = b.getLong();
                    int origin = b.getInt();
                    byte[] how = new byte[b.getShort() & 0xffff];
                    b.get(how);
                    yield DetectMessage.failed(from, procId, seq, subject, sp, origin,
                            new String(how, StandardCharsets.UTF_8));
                }
                case DetectMessage.FENCED -> DetectMessage.fenced(from, procId, seq, b.getInt());
                case DetectMessage.BYE -> DetectMessage.bye(from, procId, seq);
                default -> null;
            };
            return b.hasRemaining() ? null : m;
        } catch (java.nio.BufferUnderflowException e) {
            return null;
        }
    }
}
