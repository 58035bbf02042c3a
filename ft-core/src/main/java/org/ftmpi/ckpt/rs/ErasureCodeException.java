package org.ftmpi.ckpt.rs;

/**
 * Thrown when an erasure-coding operation cannot produce a correct result: too many shards lost or
 * corrupted, inconsistent shard lengths, or a malformed shard header. The message always names the
 * offending argument. Pure argument-range errors (e.g. {@code k < 1}) are reported as
 * {@link IllegalArgumentException} instead.
 */
public class ErasureCodeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ErasureCodeException(String message) {
        super(message);
    }

    public ErasureCodeException(String message, Throwable cause) {
        super(message, cause);
    }
}
