package org.ftmpi.p2p;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.BitSet;
import java.util.Map;

/**
 * The fault-tolerance control protocol of an engine: revoke notices and the agreement. Its
 * messages are {@link org.ftmpi.transport.FrameHeader#FT} frames: they carry the communicator's
 * context id and a message kind in the tag, are handled on arrival (never matched against
 * receives), so revoke and agreement never mix with user traffic and work on a revoked
 * communicator.
 *
 * <p><b>Agreement</b> (documented with its correctness argument in docs/fault-tolerance.md): a
 * coordinator-based two-phase protocol with ballots, in the style of Paxos with a perfect failure
 * detector. The coordinator is the lowest-ranked member not known failed; its ballot is its rank.
 * Every member sends CONTRIB (flag, failures it knows, accepted proposal) to its coordinator,
 * and again whenever its coordinator changes. The coordinator waits for a contribution from every
 * member not known failed, then proposes (PROPOSE) either the accepted proposal with the highest
 * ballot among the contributions, or (AND of flags, union of failures). A member that accepts a
 * proposal acknowledges it (ACK) to every member ({@link #ACK_ALL_MAX}), and each member decides
 * once every live member not in the proposed failed set accepted the same ballot: three message
 * delays. (In larger communicators the ACKs go to the coordinator, which then sends COMMIT.) A
 * member that has decided keeps answering for that instance (COMMIT to a CONTRIB or a PROPOSE),
 * so a new coordinator finishes even if it is the only member that has not returned.
 *
 * <p><b>Note:</b> every method runs under the engine's progress lock.
 */
final class FtProtocol {
    static final int REVOKE = 1, CONTRIB = 2, PROPOSE = 3, ACK = 4, COMMIT = 5;

    private final Engine engine;
    private final Map<Integer, CommFt> comms;

    FtProtocol(Engine engine, Map<Integer, CommFt> comms) {
        this.engine = engine;
        this.comms = comms;
    }

    CommFt state(int context) {
        return comms.computeIfAbsent(context, CommFt::new);
    }

    // ------------------------------------------------------------------ frames in

    void onFrame(int peer, int context, int kind, MemorySegment payload) {
        CommFt f = state(context);
        if (kind == REVOKE) {
            revoke(f, "revoked by rank " + peer);
            return;
        }
        ByteBuffer b = payload.asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        int k = b.getInt(), value = b.getInt(), ballot = b.getInt(), pValue = b.getInt();
        BitSet a = bits(b), c = bits(b);
        if (f.rankOf == null || !f.contains(peer)) {
            // A communicator this process has not made yet (a fast member started using it): keep
            // the message; the sender's comm rank is needed, so it is stored by world rank until
            // registration maps it (world == comm rank is not assumed).
            f.pendingFrames().add(new Object[] {peer, kind, k, value, ballot, pValue, a, c});
            return;
        }
        handle(f, f.rankOf[peer], kind, k, value, ballot, pValue, a, c);
    }

    /** Replays FT messages that arrived before the communicator was registered. */
    void replay(CommFt f) {
        if (f.pending == null) return;
        var list = f.pending;
        f.pending = null;
        for (Object[] m : list) {
            int peer = (Integer) m[0];
            if (!f.contains(peer) || engine.isFailed(peer)) continue;
            handle(f, f.rankOf[peer], (Integer) m[1], (Integer) m[2], (Integer) m[3], (Integer) m[4],
                    (Integer) m[5], (BitSet) m[6], (BitSet) m[7]);
        }
    }

    private void handle(CommFt f, int from, int kind, int k, int value, int ballot, int pValue,
                        BitSet a, BitSet c) {
        Agreement g = f.agreement(k);
        switch (kind) {
            case CONTRIB -> {
                if (g.decided) {
                    send(f, from, COMMIT, k, g.dValue, 0, 0, g.dFailed, null);
                    return;
                }
                g.contribs.put(from, new Agreement.Contrib(value, a, ballot, pValue, c));
                advance(f, g);
            }
            case PROPOSE -> {
                if (g.decided) {
                    send(f, from, COMMIT, k, g.dValue, 0, 0, g.dFailed, null); // the proposer passes it on
                    return;
                }
                if (ballot < g.ballot) return; // superseded: a higher ballot was accepted here
                g.ballot = ballot;
                g.pValue = value;
                g.pFailed = a;
                g.acked(ballot, from); // a proposer accepts its own proposal
                int me = myRank(f);
                g.acked(ballot, me);
                if (ackToAll(f)) {
                    for (int r = 0; r < f.world.length; r++) {
                        if (r != me && !a.get(r) && !engine.isFailed(f.world[r])) {
                            send(f, r, ACK, k, 0, ballot, 0, null, null);
                        }
                    }
                } else {
                    send(f, from, ACK, k, 0, ballot, 0, null, null);
                }
                advance(f, g);
            }
            case ACK -> {
                if (g.decided) return;
                g.acked(ballot, from);
                advance(f, g);
            }
            case COMMIT -> {
                if (g.decided) return;
                decide(g, value, a);
                if (f.world != null && coordinator(f) == myRank(f)) {
                    // This process coordinates: the others wait for it, so it passes the decision on.
                    int me = myRank(f);
                    g.sentTo = me;
                    for (int r = 0; r < f.world.length; r++) {
                        if (r != me && !g.dFailed.get(r) && !engine.isFailed(f.world[r])) {
                            send(f, r, COMMIT, k, g.dValue, 0, 0, g.dFailed, null);
                        }
                    }
                }
            }
            default -> { } // unknown kinds from a newer peer are ignored
        }
    }

    // ------------------------------------------------------------------ agreement

    /** Starts this process's part of agreement {@code k} with {@code value}. */
    Agreement start(CommFt f, int k, int value) {
        Agreement g = f.agreement(k);
        if (!g.started) {
            g.started = true;
            g.value = value;
        }
        advance(f, g);
        return g;
    }

    /** Re-evaluates an agreement after a message, a failure or a poll. */
    void advance(CommFt f, Agreement g) {
        if (!g.started || f.world == null) return;
        int me = myRank(f);
        int coord = coordinator(f);
        if (g.decided) {
            // A new coordinator may be waiting for this member's contribution: give it the decision.
            if (coord != g.sentTo) {
                g.sentTo = coord;
                if (coord != me) send(f, coord, COMMIT, g.k, g.dValue, 0, 0, g.dFailed, null);
            }
            return;
        }
        if (coord != g.sentTo) {
            g.sentTo = coord;
            BitSet known = knownFailed(f);
            if (coord == me) {
                g.contribs.put(me, new Agreement.Contrib(g.value, known, g.ballot, g.pValue, g.pFailed));
            } else {
                send(f, coord, CONTRIB, g.k, g.value, g.ballot, g.pValue, known, g.pFailed);
            }
        }
        if (coord == me) coordinate(f, g, me);
        decideIfAccepted(f, g, me);
    }

    /**
     * Communicators up to this size acknowledge a proposal to every member, and each member
     * decides once every live member accepted (three message delays, (n-1)^2 acknowledgements);
     * larger ones acknowledge to the coordinator, which then sends COMMIT (four delays, 2(n-1)
     * messages). Every member derives the same choice from the size.
     */
    static final int ACK_ALL_MAX = 16;

    private static boolean ackToAll(CommFt f) {
        return f.world.length <= ACK_ALL_MAX;
    }

    /** The coordinator proposes once it holds a contribution from every member not known failed. */
    private void coordinate(CommFt f, Agreement g, int me) {
        if (g.proposing) return;
        int n = f.world.length;
        BitSet failedNow = knownFailed(f);
        for (int r = 0; r < n; r++) {
            if (!failedNow.get(r) && !g.contribs.containsKey(r)) return; // still waiting
        }
        Agreement.Contrib best = null;
        int and = -1; // bitwise AND, as MPIX_Comm_agree
        BitSet union = (BitSet) failedNow.clone();
        for (int r = 0; r < n; r++) {
            Agreement.Contrib c = g.contribs.get(r);
            if (c == null) {
                union.set(r);
                continue;
            }
            and &= c.value();
            union.or(c.failed());
            if (c.ballot() >= 0 && (best == null || c.ballot() > best.ballot())) best = c;
        }
        g.proposing = true;
        if (best != null) {
            g.propValue = best.pValue();
            g.propFailed = (BitSet) best.pFailed().clone();
        } else {
            g.propValue = and;
            g.propFailed = union;
        }
        g.ballot = me;
        g.pValue = g.propValue;
        g.pFailed = g.propFailed;
        g.acked(me, me);
        for (int r = 0; r < n; r++) {
            if (r != me && !failedNow.get(r) && !g.propFailed.get(r)) {
                send(f, r, PROPOSE, g.k, g.propValue, me, 0, g.propFailed, null);
            }
        }
    }

    /**
     * Decides the proposal accepted here once every member outside its failed set and not known
     * failed accepted it too: at any member when acknowledgements go to everyone, else at its
     * proposer, which then sends COMMIT.
     */
    private void decideIfAccepted(CommFt f, Agreement g, int me) {
        if (g.decided || g.ballot < 0 || g.ackBallot != g.ballot) return;
        boolean all = ackToAll(f);
        if (!all && g.ballot != me) return;
        int n = f.world.length;
        for (int r = 0; r < n; r++) {
            if (!g.acked.get(r) && !g.pFailed.get(r) && !engine.isFailed(f.world[r])) return;
        }
        if (!all) {
            for (int r = 0; r < n; r++) {
                if (r != me && !g.pFailed.get(r) && !engine.isFailed(f.world[r])) {
                    send(f, r, COMMIT, g.k, g.pValue, 0, 0, g.pFailed, null);
                }
            }
        }
        decide(g, g.pValue, g.pFailed);
    }

    private static void decide(Agreement g, int value, BitSet failed) {
        if (g.decided) return;
        g.decided = true;
        g.dValue = value;
        g.dFailed = (BitSet) failed.clone();
        g.contribs.clear();
    }

    /** A member failed: every started agreement of the communicators it belongs to moves on. */
    void memberFailed(CommFt f) {
        for (Agreement g : f.agreements.values()) advance(f, g);
    }

    private int coordinator(CommFt f) {
        for (int r = 0; r < f.world.length; r++) {
            if (!engine.isFailed(f.world[r])) return r;
        }
        return myRank(f);
    }

    private int myRank(CommFt f) {
        return f.rankOf[engine.rank()];
    }

    private BitSet knownFailed(CommFt f) {
        BitSet b = new BitSet();
        for (int r = 0; r < f.world.length; r++) {
            if (engine.isFailed(f.world[r])) b.set(r);
        }
        return b;
    }

    // ------------------------------------------------------------------ revoke

    /** Marks {@code f} revoked (once), fails its pending operations and floods the notice to its members. */
    void revoke(CommFt f, String why) {
        if (f.revoked) return;
        f.revoked = true;
        engine.ftEvent();
        engine.failContext(f.context, ErrorClass.ERR_REVOKED, "the communicator was " + why, -1);
        engine.failContext(f.context + 1, ErrorClass.ERR_REVOKED, "the communicator was " + why, -1);
        if (f.world != null) floodRevoke(f);
    }

    /** Sends REVOKE to every other live member (each member forwards once: reliable broadcast). */
    void floodRevoke(CommFt f) {
        int me = myRank(f);
        for (int r = 0; r < f.world.length; r++) {
            if (r != me && !engine.isFailed(f.world[r])) send(f, r, REVOKE, 0, 0, 0, 0, null, null);
        }
    }

    // ------------------------------------------------------------------ wire

    private void send(CommFt f, int to, int kind, int k, int value, int ballot, int pValue, BitSet a, BitSet c) {
        int na = a == null ? 0 : a.cardinality(), nc = c == null ? 0 : c.cardinality();
        ByteBuffer b = ByteBuffer.allocate(4 * (6 + na + nc)).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(k).putInt(value).putInt(ballot).putInt(pValue);
        put(b, a, na);
        put(b, c, nc);
        engine.ftSend(f.world[to], f.context, kind, b.array());
    }

    private static void put(ByteBuffer b, BitSet s, int n) {
        b.putInt(n);
        if (s != null) for (int i = s.nextSetBit(0); i >= 0; i = s.nextSetBit(i + 1)) b.putInt(i);
    }

    private static BitSet bits(ByteBuffer b) {
        BitSet s = new BitSet();
        if (b.remaining() < 4) return s;
        int n = b.getInt();
        for (int i = 0; i < n && b.remaining() >= 4; i++) s.set(b.getInt());
        return s;
    }
}
