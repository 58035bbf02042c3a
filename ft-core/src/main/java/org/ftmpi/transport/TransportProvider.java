package org.ftmpi.transport;

import java.io.IOException;

/**
 * Found with {@link java.util.ServiceLoader}: one per transport implementation.
 */
public interface TransportProvider {

    /** Short name used in {@code --transports} lists ("self", "tcp", "shm", ...). */
    String name();

    /** Why the transport cannot be used here, or {@code null} when it can. Probed once. */
    String unavailabilityCause(TransportContext context);

    /** Opens the transport: binds local resources and computes the local endpoint. */
    Transport open(TransportContext context) throws IOException;
}
