package org.ftmpi.runtime.wire;

import java.io.IOException;

/** The peer failed the challenge-response authentication (or broke its protocol). */
public final class AuthException extends IOException {
    public AuthException(String message) {
        super(message);
    }
}
