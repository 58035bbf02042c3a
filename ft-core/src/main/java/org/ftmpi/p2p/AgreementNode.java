package org.ftmpi.p2p;

import java.lang.foreign.MemorySegment;
import java.util.HashMap;

/**
 * One member of an agreement, driven from outside: the agreement state machine every engine
 * runs ({@link FtProtocol}, {@link Agreement}), with its messages handed to an {@link Io} instead
 * of a transport and its failure knowledge set by {@link #failed}. The communicator is the world
 * of {@code n} members, context 0. Used by the agreement simulation (bench {@code ft-agree-sim},
 * thousands of members in one thread) and by unit tests that step the protocol message by message.
 *
 * <p><b>Note:</b> not thread-safe; one thread drives all the nodes of a simulation.
 */
public final class AgreementNode {
    /** Where the node's messages go: {@code payload} is to be delivered to member {@code to} as is. */
    public interface Io {
        void send(int from, int to, int kind, byte[] payload);
    }

    private static final int CONTEXT = 0;

    private final int rank;
    private final boolean[] failed;
    private final FtProtocol protocol;
    private final CommFt comm;

    /**
     * Member {@code rank} of {@code n}; communicators of {@code fastMin} to {@code fastMax} members
     * try the fast path first (job option {@code agree-fast}: auto is 17 to
     * {@code Integer.MAX_VALUE}, N is 2 to N; min > max: the coordinator protocol only).
     */
    public AgreementNode(int rank, int n, int fastMin, int fastMax, Io io) {
        if (n < 1) throw new IllegalArgumentException("n: " + n + " (at least 1 member)");
        if (rank < 0 || rank >= n) throw new IllegalArgumentException("rank: " + rank + " of " + n);
        this.rank = rank;
        this.failed = new boolean[n];
        protocol = new FtProtocol(new FtProtocol.Host() {
            @Override
            public int rank() {
                return AgreementNode.this.rank;
            }

            @Override
            public boolean isFailed(int worldRank) {
                return failed[worldRank];
            }

            @Override
            public void ftSend(int worldRank, int context, int kind, byte[] payload, int length) {
                if (!failed[worldRank]) io.send(AgreementNode.this.rank, worldRank, kind, java.util.Arrays.copyOf(payload, length));
            }

            @Override
            public void revoked(int context, String why) {
                // no operations to fail here
            }
        }, new HashMap<>());
        protocol.fastRange(fastMin, fastMax);
        comm = protocol.state(CONTEXT);
        comm.world = new int[n];
        comm.rankOf = new int[n];
        for (int i = 0; i < n; i++) {
            comm.world[i] = i;
            comm.rankOf[i] = i;
        }
    }

    /** This member calls {@code agree(value)} for instance {@code k}. */
    public void start(int k, int value) {
        protocol.start(comm, k, value);
    }

    /** A message of {@code kind} from member {@code from} arrived (dropped when {@code from} is known failed, as the engine fences). */
    public void receive(int from, int kind, byte[] payload) {
        if (failed[from]) return;
        protocol.onFrame(from, CONTEXT, kind, MemorySegment.ofArray(payload));
    }

    /** This member learns that {@code member} failed (once; later calls do nothing). */
    public void failed(int member) {
        if (failed[member]) return;
        failed[member] = true;
        protocol.memberFailed(comm);
    }

    /** Whether instance {@code k} is decided here. */
    public boolean decided(int k) {
        Agreement g = comm.agreementIfKept(k);
        return g != null && g.decided;
    }

    /** The decided value of instance {@code k} (after {@link #decided}). */
    public int value(int k) {
        return decidedInstance(k).dValue;
    }

    /** The decided failed set of instance {@code k}, as member ranks in increasing order. */
    public int[] failedSet(int k) {
        return decidedInstance(k).dFailed.stream().toArray();
    }

    private Agreement decidedInstance(int k) {
        Agreement g = comm.agreementIfKept(k);
        if (g == null || !g.decided) throw new IllegalStateException("instance " + k + " is not decided at member " + rank);
        return g;
    }

    /** Name of a message kind, for tables. */
    public static String kindName(int kind) {
        return switch (kind) {
            case FtProtocol.REVOKE -> "REVOKE";
            case FtProtocol.CONTRIB -> "CONTRIB";
            case FtProtocol.PROPOSE -> "PROPOSE";
            case FtProtocol.ACK -> "ACK";
            case FtProtocol.COMMIT -> "COMMIT";
            case FtProtocol.FAST -> "FAST";
            default -> "kind " + kind;
        };
    }
}
