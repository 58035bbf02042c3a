package org.ftmpi.p2p;

import java.util.ArrayList;
import org.ftmpi.transport.FrameHeader;

/**
 * Posted receives and unexpected messages of one context id, both in arrival order, so that
 * matching preserves MPI's non-overtaking rule per (source, tag, context).
 *
 * <p><b>Note:</b> guarded by the engine's progress lock.
 */
final class MatchQueues {
    /**
     * FT-MPI message mode CONT on a point-to-point context: the generation count is not used for
     * matching, and a receive names its source by process (world rank), so that a message sent
     * before a recovery matches a receive posted after it (or the other way round) even when
     * comm-mode SHRINK changed the sender's rank. Collective contexts always match by epoch.
     */
    final boolean cont;
    final MatchList<Request> posted = new MatchList<>();
    final MatchList<Unexpected> unexpected = new MatchList<>();

    /** A message that arrived before its receive was posted. */
    static final class Unexpected extends MatchList.Link {
        byte type;          // FrameHeader.EAGER, EAGER_SYNC or RTS
        int source;         // comm rank
        int sourceWorld;
        int tag;
        int epoch;
        long sendId;
        long length;
        java.lang.foreign.MemorySegment data; // eager payload copy (a heap segment; see Engine.payloadArray)
    }

    MatchQueues(boolean cont) {
        this.cont = cont;
    }

    /**
     * The envelope match: source, tag and the communicator epoch (FT-MPI's generation count; a
     * message of another epoch never matches, which is message mode RESET; the epoch is 0 in a
     * job that never recovered).
     */
    static boolean matches(Request r, int source, int tag, int epoch) {
        return (r.peer == Engine.ANY_SOURCE || r.peer == source)
                && (r.tag == Engine.ANY_TAG || r.tag == tag) && r.epoch == epoch;
    }

    static boolean matches(int wantSource, int wantTag, int wantEpoch, Unexpected u) {
        return (wantSource == Engine.ANY_SOURCE || wantSource == u.source)
                && (wantTag == Engine.ANY_TAG || wantTag == u.tag) && wantEpoch == u.epoch;
    }

    /** CONT: source process and tag; the epoch is ignored. */
    static boolean matchesCont(Request r, int sourceWorld, int tag) {
        return (r.peer == Engine.ANY_SOURCE || r.peerWorld == sourceWorld) && (r.tag == Engine.ANY_TAG || r.tag == tag);
    }

    Request takePosted(int source, int sourceWorld, int tag, int epoch) {
        for (Request r = posted.first(); r != null; r = posted.next(r)) {
            if (cont ? matchesCont(r, sourceWorld, tag) : matches(r, source, tag, epoch)) {
                posted.remove(r);
                return r;
            }
        }
        return null;
    }

    /** {@code sourceWorld} is the world rank of {@code source}, or -1 for ANY_SOURCE. */
    Unexpected findUnexpected(int source, int sourceWorld, int tag, int epoch, boolean remove) {
        for (Unexpected u = unexpected.first(); u != null; u = unexpected.next(u)) {
            boolean m = cont
                    ? (source == Engine.ANY_SOURCE || u.sourceWorld == sourceWorld) && (tag == Engine.ANY_TAG || tag == u.tag)
                    : matches(source, tag, epoch, u);
            if (m) {
                if (remove) unexpected.remove(u);
                return u;
            }
        }
        return null;
    }

    /**
     * Removes the rendezvous announcements (RTS) of {@code sourceWorld}, which has failed: the
     * rest of such a message can never come, so no receive may match one. Eager messages stay:
     * they arrived whole and are still delivered. A loop, not removeIf with a lambda (the
     * failure path, see docs/fault-tolerance.md "Cold failure path").
     */
    void dropRendezvousFrom(int sourceWorld) {
        for (Unexpected u = unexpected.first(); u != null; ) {
            Unexpected n = unexpected.next(u);
            if (u.sourceWorld == sourceWorld && u.type == FrameHeader.RTS) unexpected.remove(u);
            u = n;
        }
    }

    /** Removes and returns every posted receive that waits for {@code sourceWorld}. */
    ArrayList<Request> removePostedFrom(int sourceWorld) {
        ArrayList<Request> out = new ArrayList<>();
        for (Request r = posted.first(); r != null; ) {
            Request n = posted.next(r);
            if (r.peerWorld == sourceWorld) {
                posted.remove(r);
                out.add(r);
            }
            r = n;
        }
        return out;
    }
}
