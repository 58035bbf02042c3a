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
 */
public record TransportLimits(int eagerLimitBytes, int maxFragmentBytes, long latencyNs,
                              long bandwidthBytesPerSec, int exclusivity) {
}
