package org.ftmpi.ft.detect;

import java.util.BitSet;

/**
 * One datagram of the detector channel, decoded.
 *
 * @param type       {@link #HEARTBEAT}, {@link #FAILED}, {@link #FENCED} or {@link #BYE}
 * @param from       sender's world rank
 * @param fromProcId sender's process id
 * @param seq        sender's sequence number (strictly increasing per sender; replays are dropped)
 * @param subject    FAILED: the failed rank; FENCED: the rank told it is dead; else -1
 * @param subjectProcId FAILED: the failed process id; else 0
 * @param origin     FAILED: the rank that declared the failure; else -1
 * @param how        FAILED: human-readable cause; else ""
 * @param failed     HEARTBEAT: the ranks the sender knows to be failed (anti-entropy); else empty
 */
public record DetectMessage(int type, int from, long fromProcId, long seq, int subject, long subjectProcId,
                            int origin, String how, BitSet failed) {
    /** Periodic beat from a process to its ring successor; carries the sender's failed set. */
    public static final int HEARTBEAT = 1;
    /** Reliable-broadcast notice: {@code subject} was declared failed by {@code origin}. */
    public static final int FAILED = 2;
    /** Reply to a process that is declared failed: it must end itself. */
    public static final int FENCED = 3;
    /** The sender finished MPI_Finalize and stops beating; not a failure. */
    public static final int BYE = 4;

    static DetectMessage heartbeat(int from, long procId, long seq, BitSet failed) {
        return new DetectMessage(HEARTBEAT, from, procId, seq, -1, 0, -1, "", failed);
    }

    static DetectMessage failed(int from, long procId, long seq, int subject, long subjectProcId,
                                int origin, String how) {
        return new DetectMessage(FAILED, from, procId, seq, subject, subjectProcId, origin, how, new BitSet());
    }

    static DetectMessage fenced(int from, long procId, long seq, int subject) {
        return new DetectMessage(FENCED, from, procId, seq, subject, 0, -1, "", new BitSet());
    }

    static DetectMessage bye(int from, long procId, long seq) {
        return new DetectMessage(BYE, from, procId, seq, -1, 0, -1, "", new BitSet());
    }
}
