package org.ftmpi.p2p;

import java.util.ArrayList;

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
    /**
     * The latest {@link #KEPT_AGREEMENTS} agreements, in increasing instance number (older ones
     * are dropped), the first {@link #agreementCount} slots used. An array, not a sorted map: an
     * agree at np 4 looks an instance up once per message, and the map boxed each number and
     * made an entry per instance (with the agreement's other objects, 3.6 KB per agree, and a
     * young collection every ~60 000 agrees that stopped the whole oversubscribed job for 8-21
     * ms: docs/benchmarks.md, "Session 19").
     */
    private final Agreement[] agreements = new Agreement[KEPT_AGREEMENTS];
    private int agreementCount;
    /** Agreements kept per communicator: members are at most one instance apart, a union keeps one. */
    static final int KEPT_AGREEMENTS = 16;

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

    /** Agreement instance {@code k}, made if it is not kept (the oldest kept one then goes if all slots are used). */
    Agreement agreement(int k) {
        int i = agreementCount - 1;
        while (i >= 0 && agreements[i].k > k) i--; // the newest first: the usual hit
        if (i >= 0 && agreements[i].k == k) return agreements[i];
        Agreement a = new Agreement(k);
        int at = i + 1; // its place in increasing order
        if (agreementCount == KEPT_AGREEMENTS) {
            if (at == 0) return a; // older than every kept one: kept nowhere, as the map pruned it at once
            System.arraycopy(agreements, 1, agreements, 0, at - 1); // the oldest goes
            at--;
        } else {
            System.arraycopy(agreements, at, agreements, at + 1, agreementCount - at);
            agreementCount++;
        }
        agreements[at] = a;
        return a;
    }

    /** Agreement instance {@code k} if it is kept, else null. */
    Agreement agreementIfKept(int k) {
        for (int i = agreementCount - 1; i >= 0; i--) {
            if (agreements[i].k == k) return agreements[i];
        }
        return null;
    }

    /** The kept agreements, oldest first (a copy: running one may make or drop others). */
    Agreement[] keptAgreements() {
        return java.util.Arrays.copyOf(agreements, agreementCount);
    }
}
