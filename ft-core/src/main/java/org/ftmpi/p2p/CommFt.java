package org.ftmpi.p2p;

import java.util.ArrayList;
import java.util.TreeMap;

/**
 * What the engine knows, for fault tolerance, about one communicator of this process: its
 * members (world ranks), whether it is revoked, which members are known to have failed (in the
 * order the failures became known) and its agreements. Made by {@link Engine#registerComm}.
 *
 * <p><b>Note:</b> the volatile flags may be read without the engine's progress lock; everything
 * else is guarded by it.
 */
public final class CommFt {
    final int context;
    /** World rank of each member; null while the communicator is known only from FT traffic. */
    int[] world;
    /** World rank -> rank in this communicator, or -1. */
    int[] rankOf;
    volatile boolean revoked;
    /** Some member is known failed: collective traffic of this communicator fails. */
    volatile boolean collBroken;
    volatile int failedCount;
    /** Comm ranks of the members known failed, in the order the failures became known. */
    final ArrayList<Integer> failed = new ArrayList<>();
    /** Agreements by instance number (older ones are pruned). */
    final TreeMap<Integer, Agreement> agreements = new TreeMap<>();

    /**
     * A union agreement ({@link FtProtocol#joinUnion}): the context each member receives its
     * messages on (its own group's), by comm rank; null for a communicator's own agreements.
     */
    int[] unionContext;
    /** A union agreement: the token of each member's group's call, by comm rank. */
    long[] unionToken;
    /** A union agreement: the receive context and token of this process's group. */
    int ownContext;
    long ownToken;

    /** FT messages that arrived before the communicator was registered here. */
    java.util.List<Object[]> pending;

    java.util.List<Object[]> pendingFrames() {
        if (pending == null) pending = new ArrayList<>();
        return pending;
    }

    CommFt(int context) {
        this.context = context;
    }

    public int context() { return context; }

    /** Whether this communicator has been revoked (locally or by a notice from a member). */
    public boolean isRevoked() { return revoked; }

    /** How many members are known to have failed. */
    public int failedCount() { return failedCount; }

    boolean contains(int worldRank) {
        return rankOf != null && worldRank < rankOf.length && rankOf[worldRank] >= 0;
    }

    Agreement agreement(int k) {
        Agreement a = agreements.get(k);
        if (a == null) {
            a = new Agreement(k);
            agreements.put(k, a);
            while (agreements.size() > 16) agreements.pollFirstEntry();
        }
        return a;
    }
}
