package org.ftmpi.ft.detect;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The heartbeat ring of one job: a permutation of the ranks, the same in every process because
 * it is computed from the job id and the host table only.
 *
 * <p>Ranks are grouped by host; each group and the order of the hosts are shuffled with a
 * generator seeded from the job id, then the ring is dealt from the hosts, always taking the host
 * with most ranks left that is not the host just dealt. With several hosts, consecutive ring
 * positions therefore lie on different hosts whenever no host holds more than half the ranks, so
 * the loss of a whole host is seen by observers elsewhere. On one host the ring is a plain
 * seeded shuffle.
 *
 * <p>Each rank observes its nearest live predecessor and emits heartbeats to its nearest live
 * successor; failed (or departed) ranks are skipped, which re-closes the ring.
 *
 * <p><b>Note:</b> immutable, thread-safe.
 */
public final class RingPlan {
    private final int[] order;    // ring position -> rank
    private final int[] position; // rank -> ring position

    private RingPlan(int[] order) {
        this.order = order;
        this.position = new int[order.length];
        for (int p = 0; p < order.length; p++) {
            position[order[p]] = p;
        }
    }

    /** The ring of a job of {@code hosts.length} ranks ({@code hosts[r]} = host of rank r). */
    public static RingPlan of(long jobId, String[] hosts) {
        int n = hosts.length;
        SplittableRandom rnd = new SplittableRandom(jobId ^ 0x5DEECE66DL);
        Map<String, List<Integer>> byHost = new LinkedHashMap<>();
        for (int r = 0; r < n; r++) {
            byHost.computeIfAbsent(hosts[r] == null ? "" : hosts[r], k -> new ArrayList<>()).add(r);
        }
        List<List<Integer>> groups = new ArrayList<>(byHost.values());
        for (List<Integer> g : groups) {
            shuffle(g, rnd);
        }
        shuffle(groups, rnd);
        int[] next = new int[groups.size()];
        int[] order = new int[n];
        int last = -1;
        for (int p = 0; p < n; p++) {
            int best = -1;
            for (int g = 0; g < groups.size(); g++) {
                int left = groups.get(g).size() - next[g];
                if (left == 0 || (g == last && groups.size() > 1)) continue;
                if (best < 0 || left > groups.get(best).size() - next[best]) best = g;
            }
            if (best < 0) best = last; // only the last host has ranks left
            order[p] = groups.get(best).get(next[best]++);
            last = best;
        }
        return new RingPlan(order);
    }

    private static <T> void shuffle(List<T> l, SplittableRandom rnd) {
        for (int i = l.size() - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            T t = l.get(i);
            l.set(i, l.get(j));
            l.set(j, t);
        }
    }

    public int size() {
        return order.length;
    }

    public int rankAt(int pos) {
        return order[Math.floorMod(pos, order.length)];
    }

    public int positionOf(int rank) {
        return position[rank];
    }

    /** The nearest predecessor of {@code rank} on the ring that is not in {@code gone}; -1 if none. */
    public int predecessor(int rank, BitSet gone) {
        return walk(rank, gone, -1);
    }

    /** The nearest successor of {@code rank} on the ring that is not in {@code gone}; -1 if none. */
    public int successor(int rank, BitSet gone) {
        return walk(rank, gone, 1);
    }

    private int walk(int rank, BitSet gone, int step) {
        int p = position[rank];
        for (int k = 1; k < order.length; k++) {
            int r = order[Math.floorMod(p + k * step, order.length)];
            if (!gone.get(r)) return r;
        }
        return -1;
    }

    /**
     * The chord fingers of {@code rank} for the failure broadcast: the live ranks at distance
     * 1, 2, 4, ... along the ring of live ranks (excluding {@code gone}). Every process forwards
     * a notice once to its fingers, so a notice reaches every live process in at most
     * ceil(log2 n) rounds, over several disjoint paths.
     */
    public int[] fingers(int rank, BitSet gone) {
        int[] live = new int[order.length];
        int m = 0;
        int p = position[rank];
        for (int k = 1; k < order.length; k++) {
            int r = order[(p + k) % order.length];
            if (!gone.get(r)) live[m++] = r;
        }
        // live[d - 1] is the live rank at distance d
        int count = 0;
        for (int d = 1; d <= m; d <<= 1) count++;
        int[] out = new int[count];
        int i = 0;
        for (int d = 1; d <= m; d <<= 1) out[i++] = live[d - 1];
        return out;
    }
}
