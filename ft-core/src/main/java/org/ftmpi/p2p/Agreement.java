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

    // acceptor
    int ballot = -1;
    int pValue;
    BitSet pFailed = new BitSet();
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
