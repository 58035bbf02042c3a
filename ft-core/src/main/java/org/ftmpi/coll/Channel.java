package org.ftmpi.coll;

import java.lang.foreign.MemorySegment;
import org.ftmpi.p2p.P2pException;
import org.ftmpi.p2p.Request;

/**
 * The point-to-point view a collective algorithm gets of its communicator: ranks are those of
 * the communicator, and every message travels on the communicator's collective context, which
 * point-to-point receives never match.
 */
public interface Channel {
    int rank();

    int size();

    /** Starts a send of all of {@code data} to {@code dest}. */
    Request send(int dest, int tag, MemorySegment data);

    /** Posts a receive into all of {@code into} from {@code source}. */
    Request receive(int source, int tag, MemorySegment into);

    /** Waits for every request and throws the first error (failed peer, truncation, abort). */
    void waitAll(Request... requests) throws P2pException;

    /** {@link #waitAll} of one request, without the array of a varargs call. */
    default void waitFor(Request request) throws P2pException {
        waitAll(request);
    }

    /** Exchanges with two peers at once (send and receive may be the same rank). */
    default void sendReceive(int dest, MemorySegment data, int source, MemorySegment into, int tag)
            throws P2pException {
        Request r = receive(source, tag, into);
        Request s = send(dest, tag, data);
        waitAll(s, r);
    }
}
