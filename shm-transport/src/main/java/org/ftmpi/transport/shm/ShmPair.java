package org.ftmpi.transport.shm;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;

/**
 * This rank's state for one peer on the same host: the mapped pair file, the producer view of
 * the outgoing ring, the consumer view of the incoming one, and frames waiting for room.
 *
 * <p><b>Note:</b> not thread-safe; owned by the transport (engine progress lock).
 */
final class ShmPair {
    /** A frame that did not fit in the ring yet, kept in send order. */
    record Pending(byte[] frame, long pinnedAddress, int pinnedLength) {
        boolean pinned() { return pinnedAddress != 0; }
    }

    final int peer;
    final int side;
    final MappedRegion region;
    final SpscRing out;
    final SpscRing in;
    final long peerPid;
    final boolean sameProcess;
    /**
     * Whether the peer can read this process's memory with process_vm_readv (its probe result).
     * Volatile: a pair re-made after REBUILD learns it on the transport's worker thread ({@link
     * ShmTransport}'s {@code Settle}), while the progress thread sends.
     */
    volatile boolean peerReadsUs;
    final ArrayDeque<Pending> backlog = new ArrayDeque<>();
    long backlogBytes;
    long pinnedIssued;
    boolean lost;
    String lostCause;
    int idlePolls;
    long lastLivenessCheckNs;
    /** The file this side created for a re-made pair (the replacement unlinks it; removed here if it did not). */
    java.nio.file.Path file;
    /** Fragment-sized native memory for single-copy reads whose target is on the Java heap. */
    MemorySegment bounce;

    ShmPair(int peer, int side, MappedRegion region, int capacity, int salt, long peerPid, long myPid) {
        this.peer = peer;
        this.side = side;
        this.region = region;
        this.out = new SpscRing(region, PairDescriptor.ring(side, capacity), capacity, salt);
        this.in = new SpscRing(region, PairDescriptor.ring(1 - side, capacity), capacity, salt);
        this.peerPid = peerPid;
        this.sameProcess = peerPid == myPid;
    }

    long mySide() { return PairDescriptor.side(side); }

    long peerSide() { return PairDescriptor.side(1 - side); }
}
