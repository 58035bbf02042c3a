package org.ftmpi.transport;

import java.io.IOException;
import org.ftmpi.runtime.JobInfo;

/**
 * Found with {@link java.util.ServiceLoader}: one per transport implementation.
 */
public interface TransportProvider {

    /** Short name used in {@code --transports} lists ("self", "tcp", "shm", ...). */
    String name();

    /** Why the transport cannot be used here, or {@code null} when it can. Probed once. */
    String unavailabilityCause(TransportContext context);

    /**
     * FT-MPI REBUILD with warm spares: the endpoint the transport opened in this process (a warm
     * spare, {@code job} holding the job id, size, secret and options; rank -1) will publish,
     * known before the spare takes over a rank, so that the spare can register it at its
     * assignment; or null when this transport is not usable here or publishes nothing ahead
     * (the default: the spare then reaches nobody over it).
     */
    default byte[] spareEndpoint(JobInfo job) {
        return null;
    }

    /** Opens the transport: binds local resources and computes the local endpoint. */
    Transport open(TransportContext context) throws IOException;
}
