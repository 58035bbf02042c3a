package org.ftmpi.transport;

/**
 * The numbers a transport publishes so that the p2p layer can choose protocols once, at setup
 * (Open MPI's BTL parameters, UCX's protocol thresholds).
 *
 * @param eagerLimitBytes   largest payload sent eagerly (with the envelope, no handshake)
 * @param maxFragmentBytes  largest payload of one DATA fragment in the rendezvous protocol
 * @param latencyNs         expected one-way latency of a small frame
 * @param bandwidthBytesPerSec expected streaming bandwidth
 * @param exclusivity       higher wins when several transports reach the same peer
 * @param singleCopyMinBytes smallest DATA fragment from native memory that the engine hands to
 *                          {@link Transport#sendPinned} (the transport may then move it with a
 *                          single copy straight into the receiver's buffer);
 *                          {@link #NO_SINGLE_COPY} when the transport has no such path
 * @param rendezvousInlineBytes payload the rendezvous request (RTS) carries with it, at most the
 *                          eager limit: the receiver copies it while its clear-to-send travels
 *                          back, so one handshake no longer delays the first byte (Open MPI
 *                          ob1's rendezvous with inline data); 0 for a bare RTS
 * @param maxPinnedBytes    largest DATA fragment the engine hands to {@link Transport#sendPinned}
 *                          at once, at least {@code maxFragmentBytes}: a transport whose receiver
 *                          reads pinned memory itself (shm's process_vm_readv) takes a whole
 *                          message in one piece, as Open MPI's vader does, since every read call
 *                          has a fixed cost; others take {@code maxFragmentBytes}
 */
public record TransportLimits(int eagerLimitBytes, int maxFragmentBytes, long latencyNs,
                              long bandwidthBytesPerSec, int exclusivity, int singleCopyMinBytes,
                              int rendezvousInlineBytes, int maxPinnedBytes) {

    public TransportLimits {
        if (rendezvousInlineBytes < 0 || rendezvousInlineBytes > eagerLimitBytes) {
            throw new IllegalArgumentException("rendezvousInlineBytes " + rendezvousInlineBytes
                    + " must be between 0 and the eager limit " + eagerLimitBytes);
        }
        if (maxPinnedBytes < maxFragmentBytes) {
            throw new IllegalArgumentException("maxPinnedBytes " + maxPinnedBytes
                    + " must be at least the fragment size " + maxFragmentBytes);
        }
    }

    /** Limits of a transport whose pinned fragments are no larger than its other fragments. */
    public TransportLimits(int eagerLimitBytes, int maxFragmentBytes, long latencyNs,
                           long bandwidthBytesPerSec, int exclusivity, int singleCopyMinBytes,
                           int rendezvousInlineBytes) {
        this(eagerLimitBytes, maxFragmentBytes, latencyNs, bandwidthBytesPerSec, exclusivity, singleCopyMinBytes,
                rendezvousInlineBytes, maxFragmentBytes);
    }

    /** Limits of a transport whose rendezvous requests carry no data. */
    public TransportLimits(int eagerLimitBytes, int maxFragmentBytes, long latencyNs,
                           long bandwidthBytesPerSec, int exclusivity, int singleCopyMinBytes) {
        this(eagerLimitBytes, maxFragmentBytes, latencyNs, bandwidthBytesPerSec, exclusivity, singleCopyMinBytes, 0);
    }

    /** {@link #singleCopyMinBytes} of a transport that always copies through its own buffers. */
    public static final int NO_SINGLE_COPY = Integer.MAX_VALUE;

    /** Limits of a transport without a single-copy path. */
    public TransportLimits(int eagerLimitBytes, int maxFragmentBytes, long latencyNs,
                           long bandwidthBytesPerSec, int exclusivity) {
        this(eagerLimitBytes, maxFragmentBytes, latencyNs, bandwidthBytesPerSec, exclusivity, NO_SINGLE_COPY);
    }
}
