package org.ftmpi.transport.self;

import org.ftmpi.transport.Transport;
import org.ftmpi.transport.TransportContext;
import org.ftmpi.transport.TransportProvider;

/** The loop-back transport of a rank to itself. Always available. */
public final class SelfTransportProvider implements TransportProvider {
    @Override public String name() { return "self"; }
    @Override public String unavailabilityCause(TransportContext context) { return null; }
    @Override public Transport open(TransportContext context) {
        return new SelfTransport(context.job().rank(), context.sink());
    }
}
