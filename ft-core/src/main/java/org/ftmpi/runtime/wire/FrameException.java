package org.ftmpi.runtime.wire;

import java.io.IOException;

/** A control frame that is malformed: bad length, unknown version, truncated or bad payload. */
public final class FrameException extends IOException {
    public FrameException(String message) {
        super(message);
    }
}
