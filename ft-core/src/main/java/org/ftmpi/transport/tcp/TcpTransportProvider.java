package org.ftmpi.transport.tcp;

import java.io.IOException;
import org.ftmpi.transport.Transport;
import org.ftmpi.transport.TransportContext;
import org.ftmpi.transport.TransportProvider;

/** TCP between any two ranks, on one host or across hosts. Always available. */
public final class TcpTransportProvider implements TransportProvider {
    @Override public String name() { return "tcp"; }
    @Override public String unavailabilityCause(TransportContext context) { return null; }
    @Override public Transport open(TransportContext context) throws IOException {
        return new TcpTransport(context.job(), context.sink());
    }
}
