package org.ftmpi.transport.shm;

import java.util.Set;
import org.ftmpi.transport.TransportConformanceTest;
import org.ftmpi.transport.TransportProvider;

/** The shared-memory transport: between distinct ranks of one host (loopback is the self transport's). */
class ShmTransportConformanceTest extends TransportConformanceTest {

    @Override protected TransportProvider provider() { return new ShmTransportProvider(); }

    @Override protected Set<Topology> topologies() { return Set.of(Topology.PEERS); }

    @Override protected boolean buffersBacklog() { return true; }
}
