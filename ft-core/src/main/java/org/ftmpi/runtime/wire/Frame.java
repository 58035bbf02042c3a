package org.ftmpi.runtime.wire;

/**
 * One control frame: a type and its payload. On the wire:
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |             length (int, big-endian) = 2 + payload            |
 *  +---------------+---------------+-------------------------------+
 *  | version (=1)  |     type      |  payload (length - 2 bytes) ...
 *  +---------------+---------------+-------------------------------+
 * </pre>
 *
 * @param type    one of the {@link FrameType} constants
 * @param payload the payload bytes (not copied)
 */
public record Frame(int type, byte[] payload) {
    public Frame {
        if (type < 0 || type > 255) {
            throw new IllegalArgumentException("frame type out of range: " + type);
        }
        if (payload == null) {
            payload = new byte[0];
        }
    }

    /** A frame without payload. */
    public static Frame of(int type) {
        return new Frame(type, new byte[0]);
    }

    /** A reader over this frame's payload. */
    public PayloadReader reader() {
        return new PayloadReader(payload);
    }
}
