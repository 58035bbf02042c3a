package org.ftmpi.p2p;

import java.util.ArrayList;

/**
 * The engine's requests that wait for a protocol frame (a CTS, DATA, a SYNC_ACK), by request id:
 * an open-addressing table of primitive {@code long} keys with linear probing and backward-shift
 * deletion (no tombstones), at most half full.
 *
 * <p>Why not a {@code HashMap<Long, Request>}: every rendezvous message put one request in and
 * took it out on each side, which allocated a {@code Long} key (ids pass the boxing cache after
 * 127 requests) and a map node per put and another {@code Long} per lookup; a 64 KiB {@code bw}
 * window of 64 messages made ~6 KB of garbage for this map alone, and on a VM that backs a fresh
 * heap page at ~10 us per 4 KiB the allocation itself showed up in the timed loop (session 29).
 *
 * <p><b>Note:</b> not thread-safe; the engine uses it under its progress lock.
 */
final class RequestTable {
    private static final int MIN_CAPACITY = 64;

    private long[] keys = new long[MIN_CAPACITY];
    private Request[] values = new Request[MIN_CAPACITY];
    private int size;

    /** The slot where {@code id}'s probe starts (Fibonacci hashing: ids are mostly consecutive). */
    private static int home(long id, int mask) {
        return (int) ((id * 0x9E3779B97F4A7C15L) >>> 32) & mask;
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** The request with this id, or null. */
    Request get(long id) {
        int mask = values.length - 1;
        for (int i = home(id, mask); ; i = (i + 1) & mask) {
            Request r = values[i];
            if (r == null) return null;
            if (keys[i] == id) return r;
        }
    }

    /** Maps {@code id} to {@code r} (non-null), replacing any request that had that id. */
    void put(long id, Request r) {
        if (r == null) throw new IllegalArgumentException("RequestTable.put: null request for id " + id);
        if ((size + 1) * 2 > values.length) grow();
        int mask = values.length - 1;
        for (int i = home(id, mask); ; i = (i + 1) & mask) {
            if (values[i] == null) {
                keys[i] = id;
                values[i] = r;
                size++;
                return;
            }
            if (keys[i] == id) {
                values[i] = r;
                return;
            }
        }
    }

    /** Removes and returns the request with this id, or null. */
    Request remove(long id) {
        int mask = values.length - 1;
        for (int i = home(id, mask); ; i = (i + 1) & mask) {
            Request r = values[i];
            if (r == null) return null;
            if (keys[i] == id) {
                deleteSlot(i, mask);
                return r;
            }
        }
    }

    /**
     * The requests in the table, in no particular order, as a new list: the failure paths walk
     * it and {@link #remove} what they fail. (Not a predicate: a lambda's first call in a
     * failure path spins its class then, and a warm-spare REBUILD at np 16 took 40-58 ms instead
     * of 26-32 with three of them, session 29.)
     */
    ArrayList<Request> requests() {
        ArrayList<Request> all = new ArrayList<>(size);
        for (Request r : values) {
            if (r != null) all.add(r);
        }
        return all;
    }

    void clear() {
        java.util.Arrays.fill(values, null);
        size = 0;
    }

    /** Empties slot {@code i} and shifts back the entries of its probe run that may not stay behind a hole. */
    private void deleteSlot(int i, int mask) {
        values[i] = null;
        size--;
        int hole = i;
        for (int j = (i + 1) & mask; values[j] != null; j = (j + 1) & mask) {
            int h = home(keys[j], mask);
            // entry j may move into the hole unless its home lies cyclically in (hole, j]
            boolean stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
            if (!stays) {
                keys[hole] = keys[j];
                values[hole] = values[j];
                values[j] = null;
                hole = j;
            }
        }
    }

    private void grow() {
        long[] oldKeys = keys;
        Request[] oldValues = values;
        keys = new long[oldValues.length * 2];
        values = new Request[oldValues.length * 2];
        size = 0;
        for (int i = 0; i < oldValues.length; i++) {
            if (oldValues[i] != null) put(oldKeys[i], oldValues[i]);
        }
    }
}
