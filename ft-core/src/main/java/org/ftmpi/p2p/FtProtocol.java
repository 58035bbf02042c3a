package org.ftmpi.p2p;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
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
 * detector, with a coordinator-free fast path first. <i>Fast path</i> (by default communicators
 * of up to {@link #FAST_SMALL_AUTO} and of more than {@link #ACK_ALL_MAX} members, job option
 * {@code agree-fast}; only while no member is known failed):
 * two passes shaped like allreduce's recursive doubling, or all-to-all in communicators of up to
 * {@code agree-direct} members ({@link #direct}: two message delays in all) (FAST messages). The first gathers the
 * AND of all n values; a member that holds all n accepts the proposal (that AND, no failed
 * member) under ballot {@link #FAST_BALLOT}. The second gathers the set of members known
 * to have accepted it; a member decides once it holds all n: 2 log2 n message delays, 2 n log2 n
 * messages, n log2 n per pass as one allreduce. A failure, or any message of the coordinator
 * protocol, closes the fast path at a member for that instance: it then never accepts the FAST
 * ballot again and runs the coordinator protocol, reporting the FAST proposal if it accepted it
 * (so a coordinator re-proposes it, as Paxos re-proposes any accepted value).
 * <i>Coordinator protocol</i>: the coordinator is the lowest-ranked member not known failed; its
 * ballot is its rank + 1.
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
    static final int REVOKE = 1, CONTRIB = 2, PROPOSE = 3, ACK = 4, COMMIT = 5, FAST = 6;
    /** A union agreement's invitation ({@link #joinUnion}): the sender's group, to a member of the other group. */
    static final int HELLO = 7;
    /** Kind flag of the messages of a union agreement ({@link #joinUnion}). */
    static final int UNION = 0x40;
    /** The instance number of a union agreement (each has its own state, so one instance). */
    static final int UNION_K = 1;

    /** The fast path's ballot: below every coordinator's (rank + 1), so a coordinator re-proposes it. */
    static final int FAST_BALLOT = 0;

    /**
     * Without the job option {@code agree-fast} ("auto"), communicators of more than
     * {@link #ACK_ALL_MAX} members try the fast path first: there the coordinator protocol
     * handles 2(n - 1) messages at the coordinator and takes four delays, the fast path
     * 2 (log2 n + 1) messages at every member (bench {@code ft-agree-sim}, docs/benchmarks.md,
     * "Issue 7, session 7"). Smaller ones keep the coordinator protocol's three delays, which
     * measured no slower at 4 and 8 members ("Issue 7, session 5").
     */
    static final int FAST_MIN_AUTO = 17;

    /**
     * Without the job option {@code agree-fast} ("auto"), communicators of 2 to this many members
     * also try the fast path first, all-to-all ({@link #DIRECT_MAX_AUTO}): two message delays
     * against the coordinator protocol's three, where its 4(n - 1) messages per member are few
     * (docs/benchmarks.md, "Issue 7, session 9").
     */
    static final int FAST_SMALL_AUTO = 4;


    /**
     * Everything the protocol needs from its process: who it is, which processes are known
     * failed, a way to send, and what a revoke does locally. The engine is one
     * ({@code Engine.FtHost}); {@link AgreementNode} is another, so that the same state machine
     * runs with thousands of simulated processes (bench {@code ft-agree-sim}).
     */
    interface Host {
        /** This process's world rank. */
        int rank();

        /** Whether world rank {@code worldRank} is known failed here (final once true). */
        boolean isFailed(int worldRank);

        /**
         * Sends an FT control message (kind in the tag) to world rank {@code worldRank}: the
         * first {@code length} bytes of {@code payload}, which the protocol reuses after the call.
         */
        void ftSend(int worldRank, int context, int kind, byte[] payload, int length);

        /** The communicator with point-to-point context {@code context} was revoked here: fail its pending operations. */
        void revoked(int context, String why);
    }

    private final Host engine;
    private final Map<Integer, CommFt> comms;
    /** Communicators of fastMin..fastMax members try the fast path first (fastMin > fastMax: none). */
    private int fastMin = FAST_MIN_AUTO, fastMax = Integer.MAX_VALUE;
    /** Communicators of 2..smallMax members try the fast path first too (0: none). */
    private int smallMax;
    /** Fast paths of communicators of up to this many members exchange all-to-all ({@link #direct}). */
    private int directMax = DIRECT_MAX_AUTO;

    /** Test seam (FastAgreementTest): sees each fast-path step of this process. */
    interface StepListener {
        /** Before the message of step {@code pos} of pass {@code pass} is sent; pass 2: just decided. */
        void step(int k, int pass, int pos);
    }

    /** Null except in tests that kill a member at a chosen fast-path step. */
    StepListener stepListener;

    FtProtocol(Host engine, Map<Integer, CommFt> comms) {
        this.engine = engine;
        this.comms = comms;
    }

    /** Communicators of {@code min} to {@code max} members use the fast path first (min > max: never). */
    void fastRange(int min, int max) {
        fastMin = Math.max(2, min);
        fastMax = max;
    }

    /** Communicators of 2 to {@code max} members use the fast path first as well (0: no more than {@link #fastRange}). */
    void fastSmall(int max) {
        smallMax = max;
    }

    /**
     * Fast paths of communicators of up to {@code max} members exchange all-to-all (two message
     * delays), larger ones by recursive doubling; at most {@link #DIRECT_LIMIT}.
     */
    void directMax(int max) {
        directMax = Math.min(max, DIRECT_LIMIT);
    }

    CommFt state(int context) {
        return comms.computeIfAbsent(context, CommFt::new);
    }

    // ------------------------------------------------------------------ frames in

    void onFrame(int peer, int context, int kind, MemorySegment payload) {
        onFrame(peer, context, kind, payload, 0, (int) payload.byteSize());
    }

    /** An FT frame whose payload is {@code length} bytes of {@code memory} at {@code offset} (valid during the call). */
    void onFrame(int peer, int context, int kind, MemorySegment memory, long offset, int length) {
        if ((kind & UNION) != 0) {
            unionFrame(peer, context, kind & ~UNION, memory.asSlice(offset, length));
            return;
        }
        CommFt f = state(context);
        if (kind == REVOKE) {
            revoke(f, "revoked by rank " + peer);
            return;
        }
        ByteBuffer b = in(memory, offset, length);
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
            case FAST -> {
                // ballot: the pass (0 values, 1 acceptances); pValue: the round
                if (g.decided) {
                    // The sender waits for this member's message of a pass it finished long ago (a
                    // REBUILD replacement numbering its agreements from 0 again): give it the decision.
                    send(f, from, COMMIT, k, g.dValue, 0, 0, g.dFailed, null);
                    return;
                }
                int width = fastRounds(f);
                if (ballot < 0 || ballot > 1 || pValue < 0 || pValue >= width) return;
                if (g.fastIn == null) {
                    g.fastIn = new BitSet[2 * width];
                    g.fastInValue = new int[2 * width];
                }
                g.fastIn[ballot * width + pValue] = a;
                g.fastInValue[ballot * width + pValue] = value;
                advance(f, g);
            }
            case CONTRIB -> {
                if (g.decided) {
                    send(f, from, COMMIT, k, g.dValue, 0, 0, g.dFailed, null);
                    return;
                }
                closeFast(g);
                g.contribs.put(from, new Agreement.Contrib(value, a, ballot, pValue, c));
                advance(f, g);
            }
            case PROPOSE -> {
                if (g.decided) {
                    send(f, from, COMMIT, k, g.dValue, 0, 0, g.dFailed, null); // the proposer passes it on
                    return;
                }
                closeFast(g);
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
                closeFast(g);
                g.acked(ballot, from);
                advance(f, g);
            }
            case COMMIT -> {
                if (g.decided) return;
                closeFast(g);
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
            int n = f.world == null ? 0 : f.world.length;
            boolean tryFast = n >= fastMin && n <= fastMax || n >= 2 && n <= smallMax;
            if (tryFast && !g.slowSeen && !anyMemberFailed(f)) startFast(f, g, value);
        }
        advance(f, g);
        return g;
    }

    /** Starts the fast path: this member's value is the first of the first pass. */
    private void startFast(CommFt f, Agreement g, int value) {
        int me = myRank(f);
        g.fast = true;
        g.sentTo = coordinator(f); // no contribution to a coordinator unless the fast path closes
        int n = f.world.length;
        g.fastSchedule = n <= directMax ? direct(me, n) : schedule(me, n);
        g.fastMask = new BitSet();
        g.fastMask.set(me);
        g.fastAnd = value;
    }

    private static final int SEND = 1, RECV = 2, EXCHANGE = 3, FOLD_IN = 0, FOLD_OUT = 63;

    /**
     * The exchange steps of member {@code me} of {@code n} in one fast pass, as allreduce's
     * recursive doubling: with {@code p} the largest power of two not above {@code n} and
     * {@code rem = n - p}, each even rank below {@code 2 rem} sends to the odd one above it and
     * receives the result from it at the end; the others exchange with partner {@code newRank ^ 2^i}
     * in round {@code i + 1}. Each step is {@code peer << 8 | round << 2 | SEND/RECV/EXCHANGE}.
     */
    static int[] schedule(int me, int n) {
        int pof2 = Integer.highestOneBit(n), rem = n - pof2;
        if (me < 2 * rem && me % 2 == 0) return new int[] {step(me + 1, FOLD_IN, SEND), step(me + 1, FOLD_OUT, RECV)};
        int rounds = Integer.numberOfTrailingZeros(pof2);
        boolean folds = me < 2 * rem;
        int[] out = new int[rounds + (folds ? 2 : 0)];
        int i = 0;
        if (folds) out[i++] = step(me - 1, FOLD_IN, RECV);
        int newRank = folds ? me / 2 : me - rem;
        for (int r = 0; r < rounds; r++) {
            int partner = newRank ^ (1 << r);
            out[i++] = step(partner < rem ? partner * 2 + 1 : partner + rem, r + 1, EXCHANGE);
        }
        if (folds) out[i] = step(me - 1, FOLD_OUT, SEND);
        return out;
    }

    /**
     * Without the job option {@code agree-direct}, fast paths of communicators of up to this many
     * members exchange all-to-all: two message delays for the whole agreement, against 2 log2 n by
     * recursive doubling, for n - 1 messages per member and pass instead of log2 n.
     */
    static final int DIRECT_MAX_AUTO = 8;

    /** The direct pattern's slots are the senders' ranks + 1, below {@code FOLD_OUT}. */
    static final int DIRECT_LIMIT = FOLD_OUT - 1;

    /**
     * The exchange steps of member {@code me} of {@code n} in one all-to-all fast pass: this
     * member's message to every other member, then one from each. The round field of a message is
     * its sender's rank + 1, so that each has its own slot at the receiver.
     */
    static int[] direct(int me, int n) {
        int[] out = new int[2 * (n - 1)];
        int i = 0;
        for (int p = 0; p < n; p++) if (p != me) out[i++] = step(p, me + 1, SEND);
        for (int p = 0; p < n; p++) if (p != me) out[i++] = step(p, p + 1, RECV);
        return out;
    }

    /**
     * The round numbers of one fast pass of {@code f}'s agreements, each a slot of {@link
     * Agreement#fastIn} per pass: the senders' ranks + 1 in the all-to-all pattern, else up to
     * {@code FOLD_OUT}. Every member derives the same from the size and the job's {@code agree-direct}.
     */
    private int fastRounds(CommFt f) {
        return f.world.length <= directMax ? f.world.length + 1 : FOLD_OUT + 1;
    }

    private static int step(int peer, int round, int type) {
        return peer << 8 | round << 2 | type;
    }

    /**
     * Runs the fast path as far as the messages received allow: sends this step's message once,
     * folds in the partner's when it is there; after the first pass accepts the FAST proposal
     * (all n values are in), after the second decides it (all n members accepted it).
     */
    private void fastStep(CommFt f, Agreement g) {
        int n = f.world.length;
        while (g.fast && !g.decided) {
            int[] sched = g.fastSchedule;
            if (g.fastPos == sched.length) {
                if (g.fastMask.cardinality() < n) return; // not without a failure, which closes the fast path
                if (g.fastPhase == 1) {
                    decide(g, g.pValue, g.pFailed);
                    if (stepListener != null) stepListener.step(g.k, 2, 0);
                    return;
                }
                g.ballot = FAST_BALLOT;
                g.pValue = g.fastAnd;
                g.pFailed = NO_MEMBERS;
                g.fastPhase = 1;
                g.fastPos = 0;
                g.fastSentPos = -1;
                g.fastMask.clear(); // its phase-0 content went out with each message (serialized)
                g.fastMask.set(myRank(f));
                continue;
            }
            int e = sched[g.fastPos], peer = e >>> 8, round = (e >>> 2) & 63;
            if ((e & SEND) != 0 && g.fastSentPos < g.fastPos) {
                g.fastSentPos = g.fastPos;
                if (stepListener != null) stepListener.step(g.k, g.fastPhase, g.fastPos);
                send(f, peer, FAST, g.k, g.fastPhase == 0 ? g.fastAnd : 0, g.fastPhase, round, g.fastMask, null);
            }
            if ((e & RECV) != 0) {
                int slot = g.fastPhase * fastRounds(f) + round;
                BitSet in = g.fastIn == null ? null : g.fastIn[slot];
                if (in == null) return;
                g.fastMask.or(in);
                if (g.fastPhase == 0) g.fastAnd &= g.fastInValue[slot];
            }
            g.fastPos++;
        }
    }

    /**
     * Closes the fast path of {@code g} here (a failure is known, or the coordinator protocol
     * runs): the FAST ballot is never accepted here afterwards (the promise that makes a later
     * coordinator see it if it was decided), and the next {@link #advance} sends this member's
     * contribution, or its decision, to the coordinator.
     */
    private static void closeFast(Agreement g) {
        g.slowSeen = true;
        if (g.fast) {
            g.fast = false;
            g.sentTo = -1;
        }
    }

    private boolean anyMemberFailed(CommFt f) {
        for (int w : f.world) {
            if (engine.isFailed(w)) return true;
        }
        return false;
    }

    /** Re-evaluates an agreement after a message, a failure or a poll. */
    void advance(CommFt f, Agreement g) {
        if (!g.started || f.world == null) return;
        if (g.fast && anyMemberFailed(f)) closeFast(g);
        if (g.fast) fastStep(f, g);
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
        if (coord == me && !g.fast) coordinate(f, g, me);
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
        g.ballot = me + 1;
        g.pValue = g.propValue;
        g.pFailed = g.propFailed;
        g.acked(g.ballot, me);
        for (int r = 0; r < n; r++) {
            if (r != me && !failedNow.get(r) && !g.propFailed.get(r)) {
                send(f, r, PROPOSE, g.k, g.propValue, g.ballot, 0, g.propFailed, null);
            }
        }
    }

    /**
     * Decides the proposal accepted here once every member outside its failed set and not known
     * failed accepted it too: at any member when acknowledgements go to everyone, else at its
     * proposer, which then sends COMMIT. (The FAST proposal is decided by the fast path itself, once
     * all n members accepted it.)
     */
    private void decideIfAccepted(CommFt f, Agreement g, int me) {
        if (g.decided || g.ballot < 0 || g.ackBallot != g.ballot) return;
        int n = f.world.length;
        boolean all = ackToAll(f);
        if (!all && g.ballot != me + 1) return;
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
        g.dFailed = failed.isEmpty() ? NO_MEMBERS : (BitSet) failed.clone();
        g.contribs.clear();
    }

    /** A member failed: every started agreement of the communicators it belongs to moves on. */
    void memberFailed(CommFt f) {
        for (Agreement g : f.keptAgreements()) advance(f, g);
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
        engine.revoked(f.context, why);
        if (f.world != null) floodRevoke(f);
    }

    /** Sends REVOKE to every other live member (each member forwards once: reliable broadcast). */
    void floodRevoke(CommFt f) {
        int me = myRank(f);
        for (int r = 0; r < f.world.length; r++) {
            if (r != me && !engine.isFailed(f.world[r])) send(f, r, REVOKE, 0, 0, 0, 0, null, null);
        }
    }

    // ------------------------------------------------------------------ union agreements

    /*
     * A union agreement is one agreement over two groups whose members need not know each other
     * (MPI_INTERCOMM_CREATE under ATOMIC: a member learns the other group only from its leader,
     * which can die before passing the list on). Every member receives the agreement's messages
     * on its own group's context, with its group's call token, both of which the other group
     * learned from the leaders' exchange. A member that knows both groups joins with its vote and
     * invites (HELLO) every member of the other group, sending its own group's list, context and
     * token. A member whose call failed votes 0: at once if it knows the other group, else as soon
     * as an invitation names it ({@link #refuseUnion}). So a member never waits for one that
     * cannot know it: whoever waits in the agreement has invited every member it waits for, and a
     * member that has been invited either joins or fails, and joins when it fails. Past that, the
     * agreement is the ordinary one, over the members in a fixed order (the group with the
     * lower first world rank first).
     */

    /** Union agreements this process is a member of, by the context its own group receives on; oldest first. */
    private final Map<Integer, CommFt> unions = new LinkedHashMap<>();
    /** Calls that failed here before this process learned the other group: context -> the call (the newest {@link #UNION_KEEP}). */
    private final Map<Integer, Refusal> refused = bounded();
    /** Union messages that came before this process joined or refused: context -> {peer, kind, payload} (the newest {@link #UNION_KEEP} contexts). */
    private final Map<Integer, ArrayList<Object[]>> unionEarly = bounded();

    /**
     * A map that keeps its {@link #UNION_KEEP} newest entries: without a recovery (ULFM, recovery
     * mode IGNORE) a program that retries a failing {@code createIntercomm} adds one per call.
     */
    private static <V> Map<Integer, V> bounded() {
        return new LinkedHashMap<>() {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Integer, V> eldest) {
                return size() > UNION_KEEP;
            }
        };
    }
    /** Union agreements made here (their keys in the communicator map). */
    private int unionCount;

    /** A failed call that waits for an invitation: its group's token and members. */
    private record Refusal(long token, int[] world) {}

    /** Keys of union agreements in the communicator map: even, far below any context id or recovery key. */
    static final int UNION_KEY_BASE = -(1 << 30);
    /** Union agreements kept at most (the oldest decided one goes first; all go at a recovery). */
    static final int UNION_KEEP = 32;
    /** Early union messages kept per context at most. */
    private static final int UNION_EARLY_MAX = 4096;

    /**
     * Makes this process a member of the union agreement of its group (context {@code
     * ownContext}, call {@code ownToken}, members {@code ownWorld}) and the other group, and
     * invites the other group's live members. Returns the agreement's state (instance {@link
     * #UNION_K}, not started: the caller starts it with its vote); if this process is a member
     * already, that one.
     */
    CommFt joinUnion(int ownContext, long ownToken, int[] ownWorld, int otherContext, long otherToken, int[] otherWorld) {
        CommFt u = unions.get(ownContext);
        if (u != null && u.ownToken == ownToken) return u;
        refused.remove(ownContext);
        if (u != null) comms.remove(u.context); // an earlier call's, on a context used again
        boolean ownLow = ownWorld[0] < otherWorld[0];
        int[] low = ownLow ? ownWorld : otherWorld, high = ownLow ? otherWorld : ownWorld;
        int lowContext = ownLow ? ownContext : otherContext, highContext = ownLow ? otherContext : ownContext;
        long lowToken = ownLow ? ownToken : otherToken, highToken = ownLow ? otherToken : ownToken;
        int n = low.length + high.length, max = 0;
        u = new CommFt(UNION_KEY_BASE - 2 * (unionCount++ & 0xfffff));
        u.world = new int[n];
        u.unionContext = new int[n];
        u.unionToken = new long[n];
        u.ownContext = ownContext;
        u.ownToken = ownToken;
        for (int i = 0; i < n; i++) {
            boolean isLow = i < low.length;
            u.world[i] = isLow ? low[i] : high[i - low.length];
            u.unionContext[i] = isLow ? lowContext : highContext;
            u.unionToken[i] = isLow ? lowToken : highToken;
            max = Math.max(max, u.world[i]);
        }
        u.rankOf = new int[max + 1];
        java.util.Arrays.fill(u.rankOf, -1);
        for (int i = 0; i < n; i++) u.rankOf[u.world[i]] = i;
        if (unions.size() >= UNION_KEEP) dropOldestDecidedUnion();
        unions.put(ownContext, u);
        comms.put(u.context, u); // so that failures reach it
        invite(u, ownWorld, otherContext, otherToken, otherWorld);
        ArrayList<Object[]> early = unionEarly.remove(ownContext);
        if (early != null) {
            for (Object[] m : early) {
                int peer = (Integer) m[0];
                if (!engine.isFailed(peer)) unionFrame(peer, ownContext, (Integer) m[1], MemorySegment.ofArray((byte[]) m[2]));
            }
        }
        return u;
    }

    /** HELLO to every live member of the other group: toToken, this group's context, token, size and members. */
    private void invite(CommFt u, int[] ownWorld, int otherContext, long otherToken, int[] otherWorld) {
        int bytes = 8 + 4 + 8 + 4 + 4 * ownWorld.length;
        ByteBuffer b = out(bytes);
        b.putLong(otherToken).putInt(u.ownContext).putLong(u.ownToken).putInt(ownWorld.length);
        for (int w : ownWorld) b.putInt(w);
        for (int w : otherWorld) {
            if (!engine.isFailed(w)) engine.ftSend(w, otherContext, HELLO | UNION, b.array(), bytes);
        }
    }

    /**
     * The call of this process's group (context {@code ownContext}, token {@code ownToken},
     * members {@code ownWorld}) failed here: vote 0 in its union agreement, at once if the other
     * group is known ({@code otherWorld} not null) or an invitation came already, else when one
     * comes. Nothing if this process is a member already (it has voted).
     */
    void refuseUnion(int ownContext, long ownToken, int[] ownWorld, int otherContext, long otherToken, int[] otherWorld) {
        CommFt u = unions.get(ownContext);
        if (u != null && u.ownToken == ownToken) return;
        if (otherWorld != null) {
            start(joinUnion(ownContext, ownToken, ownWorld, otherContext, otherToken, otherWorld), UNION_K, 0);
            return;
        }
        refused.put(ownContext, new Refusal(ownToken, ownWorld.clone()));
        ArrayList<Object[]> early = unionEarly.get(ownContext);
        if (early == null) return;
        for (Object[] m : early) {
            if ((Integer) m[1] == HELLO && helloToken((byte[]) m[2]) == ownToken) {
                // an invitation came already: handled now as on arrival (joins with 0, replays the rest)
                early.remove(m);
                unionFrame((Integer) m[0], ownContext, HELLO, MemorySegment.ofArray((byte[]) m[2]));
                return;
            }
        }
    }

    private static long helloToken(byte[] payload) {
        return payload.length < 8 ? 0 : ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
    }

    /** The member list of a HELLO (after its two tokens and context), or null if it makes no sense. */
    private static int[] helloWorld(ByteBuffer b) {
        if (b.remaining() < 4) return null;
        int n = b.getInt();
        if (n < 1 || n > MAX_MEMBERS || b.remaining() < 4L * n) return null;
        int[] w = new int[n];
        for (int i = 0; i < n; i++) {
            w[i] = b.getInt();
            if (w[i] < 0 || w[i] >= MAX_MEMBERS) return null;
        }
        return w;
    }

    /** A message of a union agreement, on this process's group's context {@code context}. */
    private void unionFrame(int peer, int context, int kind, MemorySegment payload) {
        ByteBuffer b = payload.asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        CommFt u = unions.get(context);
        if (kind == HELLO) {
            if (b.remaining() < 24) return;
            long toToken = b.getLong();
            if (u != null && u.ownToken == toToken) return; // a member already
            Refusal r = refused.get(context);
            if (r != null && r.token() == toToken) {
                int otherContext = b.getInt();
                long otherToken = b.getLong();
                int[] otherWorld = helloWorld(b);
                if (otherWorld == null) return;
                refused.remove(context);
                start(joinUnion(context, toToken, r.world(), otherContext, otherToken, otherWorld), UNION_K, 0);
                return;
            }
            early(peer, context, kind, payload);
            return;
        }
        if (b.remaining() < 16) return;
        int k = b.getInt(), value = b.getInt(), ballot = b.getInt(), pValue = b.getInt();
        BitSet a = bits(b), c = bits(b);
        if (b.remaining() < 8) return;
        long toToken = b.getLong();
        if (u != null && u.ownToken == toToken) {
            if (u.contains(peer) && k == UNION_K) handle(u, u.rankOf[peer], kind, k, value, ballot, pValue, a, c);
            return;
        }
        early(peer, context, kind, payload);
    }

    private void early(int peer, int context, int kind, MemorySegment payload) {
        ArrayList<Object[]> l = unionEarly.computeIfAbsent(context, x -> new ArrayList<>());
        if (l.size() < UNION_EARLY_MAX) l.add(new Object[] {peer, kind, payload.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)});
    }

    private void dropOldestDecidedUnion() {
        for (Iterator<CommFt> it = unions.values().iterator(); it.hasNext(); ) {
            CommFt u = it.next();
            Agreement g = u.agreementIfKept(UNION_K);
            if (g != null && g.decided) {
                it.remove();
                comms.remove(u.context);
                return;
            }
        }
    }

    /**
     * A recovery ended: every survivor passed its agreement, so none is in a union agreement any
     * more (and messages of the older generation are dropped); forgets them all.
     */
    void clearUnions() {
        for (CommFt u : unions.values()) comms.remove(u.context);
        unions.clear();
        refused.clear();
        unionEarly.clear();
    }

    /** Union agreements this process is a member of (tests). */
    int unionCount() {
        return unions.size();
    }

    /** Failed calls waiting for an invitation (tests). */
    int refusedCount() {
        return refused.size();
    }

    // ------------------------------------------------------------------ wire

    /**
     * Payload (little-endian ints): k, value, ballot, pValue, then two member sets, each as a
     * count of runs and the runs ({@code first, last + 1}). The fast path's masks are a few
     * aligned blocks of ranks, so a message stays a few dozen bytes at any n (a list of ranks
     * grew to n/2 ints in the last round); failed sets are short either way.
     */
    private void send(CommFt f, int to, int kind, int k, int value, int ballot, int pValue, BitSet a, BitSet c) {
        boolean union = f.unionContext != null;
        int na = runs(a), nc = runs(c), bytes = 4 * (6 + 2 * (na + nc)) + (union ? 8 : 0);
        ByteBuffer b = out(bytes);
        b.putInt(k).putInt(value).putInt(ballot).putInt(pValue);
        put(b, a, na);
        put(b, c, nc);
        if (union) {
            // a union agreement's message travels on the recipient's own group's context, with its call's token
            b.putLong(f.unionToken[to]);
            engine.ftSend(f.world[to], f.unionContext[to], kind | UNION, b.array(), bytes);
        } else {
            engine.ftSend(f.world[to], f.context, kind, b.array(), bytes);
        }
    }

    /**
     * The payload of the message being read, copied into a reused heap buffer (a few dozen
     * bytes): a view of the transport's memory as a ByteBuffer was an object per message.
     */
    private ByteBuffer in(MemorySegment memory, long offset, int length) {
        if (inArray.length < length) {
            inArray = new byte[Math.max(length, 2 * inArray.length)];
            inSegment = MemorySegment.ofArray(inArray);
            inBuffer = ByteBuffer.wrap(inArray).order(ByteOrder.LITTLE_ENDIAN);
        }
        MemorySegment.copy(memory, offset, inSegment, 0, length);
        return inBuffer.clear().limit(length);
    }

    private byte[] inArray = new byte[256];
    private MemorySegment inSegment = MemorySegment.ofArray(inArray);
    private ByteBuffer inBuffer = ByteBuffer.wrap(inArray).order(ByteOrder.LITTLE_ENDIAN);

    /** {@link #out}, cleared, with room for {@code bytes}. */
    private ByteBuffer out(int bytes) {
        if (out.capacity() < bytes) out = ByteBuffer.allocate(Math.max(bytes, 2 * out.capacity())).order(ByteOrder.LITTLE_ENDIAN);
        return out.clear();
    }

    /** The payload of the message being sent, reused (under the progress lock): no allocation per message. */
    private ByteBuffer out = ByteBuffer.allocate(256).order(ByteOrder.LITTLE_ENDIAN);

    /** Number of runs of consecutive members in {@code s} (0 for null). */
    private static int runs(BitSet s) {
        int n = 0;
        if (s != null) for (int i = s.nextSetBit(0); i >= 0; i = s.nextSetBit(s.nextClearBit(i))) n++;
        return n;
    }

    private static void put(ByteBuffer b, BitSet s, int runs) {
        b.putInt(runs);
        if (s == null) return;
        for (int i = s.nextSetBit(0); i >= 0; i = s.nextSetBit(i)) {
            int end = s.nextClearBit(i);
            b.putInt(i).putInt(end);
            i = end;
        }
    }

    /**
     * The empty member set, shared: the protocol never changes a set it received, proposed or
     * decided (it clones or makes new ones), so every empty one can be this (a fault-free agree
     * made 2-3 per message).
     */
    static final BitSet NO_MEMBERS = new BitSet(0);

    /** A member set written by {@link #put}; runs that do not fit the payload or make no sense are ignored. */
    private static BitSet bits(ByteBuffer b) {
        if (b.remaining() < 4) return NO_MEMBERS;
        int n = b.getInt();
        if (n <= 0) return NO_MEMBERS;
        BitSet s = new BitSet();
        for (int i = 0; i < n && b.remaining() >= 8; i++) {
            int from = b.getInt(), to = b.getInt();
            if (from >= 0 && to > from && to <= MAX_MEMBERS) s.set(from, to);
        }
        return s;
    }

    /** Bound on a member rank in a message (a communicator is never larger than a job). */
    private static final int MAX_MEMBERS = 1 << 24;
}
