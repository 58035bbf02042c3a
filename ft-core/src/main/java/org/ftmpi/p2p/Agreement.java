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

    // decision
    boolean decided;
    int dValue;
    BitSet dFailed;

    // coordinator
    final HashMap<Integer, Contrib> contribs = new HashMap<>();
    boolean proposing;
    int propValue;
    BitSet propFailed;
    final BitSet acks = new BitSet();

    Agreement(int k) {
        this.k = k;
    }
}
