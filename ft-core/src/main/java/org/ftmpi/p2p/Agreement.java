package org.ftmpi.p2p;

import java.util.BitSet;
import java.util.HashMap;

/**
 * One instance of the fault-tolerant agreement of a communicator (see {@link FtProtocol} and
 * docs/fault-tolerance.md): its local contribution, its acceptor state (the proposal with the
 * highest ballot it accepted), its decision, and, while this process coordinates, the
 * contributions and acknowledgements it collected. Bit sets hold communicator ranks.
 *
 * <p><b>Note:</b> guarded by the engine's progress lock.
 */
final class Agreement {
    /** What a member sent to its coordinator: its flag, the failures it knows, its accepted proposal. */
    record Contrib(int value, BitSet failed, int ballot, int pValue, BitSet pFailed) {}

    final int k;
    boolean started;
    int value;
    /** Coordinator the contribution was last sent to, or -1. */
    int sentTo = -1;

    // fast path (see FtProtocol): two recursive-doubling passes, values (phase 0) then acceptances (phase 1)
    /** This member runs the fast path: it knew no failed member at its start and saw no slow message since. */
    boolean fast;
    /** A message of the coordinator protocol arrived for this instance: the fast path is closed here. */
    boolean slowSeen;
    /** This member's exchange steps ({@link FtProtocol#schedule}), its phase, its position and the last position it sent at. */
    int[] fastSchedule;
    int fastPhase, fastPos, fastSentPos = -1;
    /** Phase 0: members whose value is folded into {@link #fastAnd}; phase 1: members known to have accepted. */
    BitSet fastMask;
    int fastAnd = -1;
    /** Fast messages received, by pass * rounds + round (made by the first; FtProtocol.fastRounds): their mask (null: not arrived) and value. */
    BitSet[] fastIn;
    int[] fastInValue;

    // acceptor; ballots: -1 none, FtProtocol.FAST for the fast path, rank + 1 for a coordinator
    int ballot = -1;
    int pValue;
    BitSet pFailed = FtProtocol.NO_MEMBERS;
    /** Members that accepted proposal {@link #ackBallot} (the highest ballot acknowledged to this process). */
    int ackBallot = -1;
    final BitSet acked = new BitSet();

    // decision
    boolean decided;
    int dValue;
    BitSet dFailed;

    // coordinator
    final HashMap<Integer, Contrib> contribs = new HashMap<>();
    boolean proposing;
    int propValue;
    BitSet propFailed;

    Agreement(int k) {
        this.k = k;
    }

    /** Records that comm rank {@code member} accepted the proposal of ballot {@code b}. */
    void acked(int b, int member) {
        if (b > ackBallot) {
            ackBallot = b;
            acked.clear();
        }
        if (b == ackBallot) acked.set(member);
    }
}
