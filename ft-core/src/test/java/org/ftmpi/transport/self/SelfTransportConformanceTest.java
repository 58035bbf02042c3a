package org.ftmpi.transport.self;

import java.util.Set;
import org.ftmpi.transport.TransportConformanceTest;
import org.ftmpi.transport.TransportProvider;

/** The loop-back transport: a rank to itself only; it queues without limit (no backlog). */
class SelfTransportConformanceTest extends TransportConformanceTest {

    @Override protected TransportProvider provider() { return new SelfTransportProvider(); }

    @Override protected Set<Topology> topologies() { return Set.of(Topology.LOOPBACK); }

    @Override protected boolean buffersBacklog() { return false; }
}
