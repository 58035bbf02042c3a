package org.ftmpi.runtime;

/** A bad ftmpirun command line; the message says what is wrong. */
public final class UsageException extends Exception {
    public UsageException(String message) {
        super(message);
    }
}
