package org.ftmpi.coll;

import java.lang.foreign.MemorySegment;
import org.ftmpi.p2p.P2pException;
import org.ftmpi.p2p.Request;

/**
 * Reference algorithms, correct for every communicator size (including 1 and non-powers of
 * two), every root and zero counts: binomial-tree broadcast and reduction, recursive-doubling
 * allreduce, from 64 KiB reduce-scatter + allgather (Rabenseifner; reduce + broadcast for
 * non-commutative operations), linear gather(v) / scatter(v) at the root, ring allgather(v), pairwise-exchange
 * all-to-all(v), reduce + scatterv reduce-scatter, and a linear chain for (exclusive) scan.
 *
 * <p>Non-commutative operations are always combined in rank order: their reduction tree is
 * rooted at rank 0 (whose subtrees are contiguous rank ranges) and the result forwarded to the
 * root.
 */
public class DefaultCollectives implements Collectives {
    static final int TAG_BCAST = 64, TAG_REDUCE = 65, TAG_GATHER = 66, TAG_SCATTER = 67, TAG_ALLGATHER = 68,
            TAG_ALLTOALL = 69, TAG_SCAN = 70, TAG_EXSCAN = 71, TAG_ALLREDUCE = 72;

    @Override
    public String name() {
        return "default";
    }

    @Override
    public void bcast(Channel c, MemorySegment buf, int root) throws P2pException {
        int n = c.size();
        if (n == 1) return;
        int rel = (c.rank() - root + n) % n;
        int mask = 1;
        while (mask < n) {
            if ((rel & mask) != 0) {
                c.waitFor(c.receive((rel - mask + root) % n, TAG_BCAST, buf));
                break;
            }
            mask <<= 1;
        }
        int children = 0;
        for (int m = mask >> 1; m > 0; m >>= 1) if (rel + m < n) children++;
        if (children == 0) return;
        Request[] sends = requests(children);
        int k = 0;
        for (mask >>= 1; mask > 0; mask >>= 1) {
            if (rel + mask < n) sends[k++] = c.send((rel + mask + root) % n, TAG_BCAST, buf);
        }
        c.waitAll(sends);
    }

    @Override
    public void reduce(Channel c, MemorySegment send, MemorySegment recv, int count, Reducer op, int root)
            throws P2pException {
        int n = c.size();
        int rank = c.rank();
        // Commutative: tree rooted at the root. Otherwise rooted at 0, so that every subtree is a
        // contiguous range of ranks and partial results combine in rank order.
        int top = op.commutative() ? root : 0;
        int rel = (rank - top + n) % n;
        long bytes = send.byteSize();
        Scratch.Kept kept = Scratch.kept();
        MemorySegment acc = kept.take(bytes);
        MemorySegment.copy(send, 0, acc, 0, bytes);
        MemorySegment tmp = bytes == 0 ? acc : kept.take(bytes);
        for (int mask = 1; mask < n; mask <<= 1) {
            if ((rel & mask) != 0) {
                c.waitFor(c.send((rel - mask + top) % n, TAG_REDUCE, acc));
                break;
            }
            int child = rel | mask;
            if (child < n) {
                c.waitFor(c.receive((child + top) % n, TAG_REDUCE, tmp));
                // acc holds ranks [rel, child), tmp holds [child, ...): tmp = acc op tmp
                op.applyScratch(acc, tmp, count);
                MemorySegment t = acc;
                acc = tmp;
                tmp = t;
            }
        }
        if (rank == top && rank == root) {
            MemorySegment.copy(acc, 0, recv, 0, bytes);
        } else if (rank == top) {
            c.waitFor(c.send(root, TAG_REDUCE, acc));
        } else if (rank == root) {
            c.waitFor(c.receive(top, TAG_REDUCE, recv));
        }
        kept.giveBack(acc);
        kept.giveBack(tmp);
    }

    /**
     * Commutative operations: recursive doubling (log2 rounds; with a non-power-of-two size the
     * first {@code 2 * rem} ranks pair up first, and the odd one of each pair works for both).
     * Partners combine the same two partial results, so every rank ends with the same bits.
     * Non-commutative operations: reduce to rank 0 in rank order, then broadcast.
     */
    @Override
    public void allReduce(Channel c, MemorySegment send, MemorySegment recv, int count, Reducer op)
            throws P2pException {
        int n = c.size();
        if (!op.commutative() || n == 1) {
            reduce(c, send, recv, count, op, 0);
            bcast(c, recv, 0);
            return;
        }
        int pof2 = Integer.highestOneBit(n);
        int rem = n - pof2;
        // two methods, so that the small vectors' path is compiled from its own profiles
        if (send.byteSize() >= RSAG_MIN_BYTES && count >= pof2) rabenseifner(c, send, recv, count, op, pof2, rem);
        else recursiveDoubling(c, send, recv, count, op, pof2, rem);
    }

    /**
     * Recursive doubling among the {@code pof2} members left after the fold: partners {@code
     * newRank ^ mask} exchange their whole partial results. The partial result and the
     * partner's are scratch regions, so the combination is {@link Reducer#applyScratch}.
     */
    private static void recursiveDoubling(Channel c, MemorySegment send, MemorySegment recv, int count, Reducer op,
                                          int pof2, int rem) throws P2pException {
        long bytes = send.byteSize();
        Scratch.Kept kept = Scratch.kept();
        MemorySegment acc = kept.take(bytes), tmp = kept.take(bytes);
        MemorySegment.copy(send, 0, acc, 0, bytes);
        int newRank = foldIn(c, acc, tmp, count, op, rem, true);
        if (newRank >= 0) {
            for (int mask = 1; mask < pof2; mask <<= 1) {
                int dest = real(newRank ^ mask, rem);
                c.sendReceive(dest, acc, dest, tmp, TAG_ALLREDUCE);
                op.applyScratch(tmp, acc, count);
            }
        }
        if (foldOut(c, acc, recv, rem)) MemorySegment.copy(acc, 0, recv, 0, bytes);
        kept.giveBack(acc);
        kept.giveBack(tmp);
    }

    /** Rabenseifner's algorithm ({@link #reduceScatterAllgather}) in {@code recv}, after the fold. */
    private static void rabenseifner(Channel c, MemorySegment send, MemorySegment recv, int count, Reducer op,
                                     int pof2, int rem) throws P2pException {
        long bytes = send.byteSize();
        MemorySegment.copy(send, 0, recv, 0, bytes);
        MemorySegment tmp = Scratch.take(bytes);
        int newRank = foldIn(c, recv, tmp, count, op, rem, false);
        if (newRank >= 0) reduceScatterAllgather(c, recv, tmp, count, op, newRank, pof2, rem);
        foldOut(c, recv, recv, rem);
        Scratch.giveBack(tmp);
    }

    /**
     * A size that is not a power of two: the first {@code 2 * rem} ranks pair up, the even one
     * of each pair sends its vector {@code acc} to the odd one, which combines it into its own
     * and goes on for both. Returns this rank's place among the {@code pof2} that go on, or -1.
     * {@code scratch}: {@code acc} and {@code tmp} are both scratch regions.
     */
    private static int foldIn(Channel c, MemorySegment acc, MemorySegment tmp, int count, Reducer op, int rem,
                              boolean scratch) throws P2pException {
        int rank = c.rank();
        if (rank >= 2 * rem) return rank - rem;
        if (rank % 2 == 0) {
            c.waitFor(c.send(rank + 1, TAG_ALLREDUCE, acc));
            return -1;
        }
        c.waitFor(c.receive(rank - 1, TAG_ALLREDUCE, tmp));
        if (scratch) op.applyScratch(tmp, acc, count);
        else op.apply(tmp, acc, count);
        return rank / 2;
    }

    /**
     * The end of the fold: the odd rank of each pair sends the result {@code acc} to the even
     * one, which receives it straight into {@code recv}. Returns whether {@code acc} holds this
     * rank's result (false: it is already in {@code recv}).
     */
    private static boolean foldOut(Channel c, MemorySegment acc, MemorySegment recv, int rem) throws P2pException {
        int rank = c.rank();
        if (rank >= 2 * rem) return true;
        if (rank % 2 == 1) {
            c.waitFor(c.send(rank - 1, TAG_ALLREDUCE, acc));
            return true;
        }
        c.waitFor(c.receive(rank + 1, TAG_ALLREDUCE, recv));
        return false;
    }

    /**
     * Vectors of at least this many bytes are all-reduced by {@link #reduceScatterAllgather}
     * (Rabenseifner's algorithm) instead of recursive doubling: each member then moves and
     * combines about twice its vector in all, where recursive doubling moves and combines the
     * whole vector log2(n) times. np 4 on 2 cores, 64 KiB to 4 MiB: 0.45-0.65x recursive
     * doubling's time (docs/benchmarks.md, "Session 30"); at 32 KiB and below no gain.
     */
    static final long RSAG_MIN_BYTES = 64 * 1024;

    /**
     * Rabenseifner's allreduce among the {@code pof2} members that recursive doubling would use
     * (ranks {@code newRank}, the others folded in by the caller): the vector is cut into
     * {@code pof2} blocks (block {@code i}: elements {@code [i * count / pof2, (i + 1) * count /
     * pof2)}). Reduce-scatter by recursive halving: partners {@code newRank ^ mask}, mask from
     * {@code pof2 / 2} down to 1, exchange the halves of their current block range that the
     * other keeps and combine the half they keep, so that member {@code newRank} ends with block
     * {@code newRank} fully combined. Then an allgather by recursive doubling, mask from 1 up,
     * exchanges whole ranges straight into {@code recv}. Every member ends with the same bits:
     * each block is combined at one member only. {@code tmp} holds at least half the vector.
     */
    private static void reduceScatterAllgather(Channel c, MemorySegment recv, MemorySegment tmp, int count,
                                               Reducer op, int newRank, int pof2, int rem) throws P2pException {
        long esize = recv.byteSize() / count;
        int lo = 0, hi = pof2;
        for (int mask = pof2 >> 1; mask > 0; mask >>= 1) {
            int dest = real(newRank ^ mask, rem);
            int mid = lo + mask;
            boolean lower = (newRank & mask) == 0;
            int keepLo = lower ? lo : mid, keepHi = lower ? mid : hi;
            int sendLo = lower ? mid : lo, sendHi = lower ? hi : mid;
            long keepAt = first(keepLo, count, pof2) * esize, keepBytes = first(keepHi, count, pof2) * esize - keepAt;
            long sendAt = first(sendLo, count, pof2) * esize, sendBytes = first(sendHi, count, pof2) * esize - sendAt;
            MemorySegment into = tmp.asSlice(0, keepBytes);
            c.sendReceive(dest, recv.asSlice(sendAt, sendBytes), dest, into, TAG_ALLREDUCE);
            op.apply(into, recv.asSlice(keepAt, keepBytes), (int) (keepBytes / esize));
            lo = keepLo;
            hi = keepHi;
        }
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int dest = real(newRank ^ mask, rem);
            int mine = newRank & -mask, theirs = (newRank ^ mask) & -mask;
            long at = first(mine, count, pof2) * esize, end = first(mine + mask, count, pof2) * esize;
            long pAt = first(theirs, count, pof2) * esize, pEnd = first(theirs + mask, count, pof2) * esize;
            c.sendReceive(dest, recv.asSlice(at, end - at), dest, recv.asSlice(pAt, pEnd - pAt), TAG_ALLREDUCE);
        }
    }

    /** The first element of block {@code b} of {@code blocks} over {@code count} elements. */
    private static long first(int b, int count, int blocks) {
        return (long) b * count / blocks;
    }

    /** The rank of recursive-doubling member {@code r} when the first {@code 2 * rem} ranks were folded in pairs. */
    private static int real(int r, int rem) {
        return r < rem ? r * 2 + 1 : r + rem;
    }

    @Override
    public void gatherv(Channel c, MemorySegment send, MemorySegment[] recv, int root) throws P2pException {
        int rank = c.rank();
        if (rank != root) {
            c.waitFor(c.send(root, TAG_GATHER, send));
            return;
        }
        Request[] rs = requests(c.size() - 1);
        for (int i = 0, k = 0; i < c.size(); i++) {
            if (i != root) rs[k++] = c.receive(i, TAG_GATHER, recv[i]);
        }
        if (send != null) MemorySegment.copy(send, 0, recv[root], 0, recv[root].byteSize());
        c.waitAll(rs);
    }

    /**
     * An array of {@code n} for requests posted together and awaited together (a root's, a
     * broadcast's sends to its children), this thread's own, made again only when {@code n}
     * changes: between the posts and the wait that fill and read it no other code runs on the
     * thread, and a non-blocking collective runs on a thread of its own.
     */
    private static Request[] requests(int n) {
        Request[] rs = REQUESTS.get();
        if (rs == null || rs.length != n) REQUESTS.set(rs = new Request[n]);
        return rs;
    }

    private static final ThreadLocal<Request[]> REQUESTS = new ThreadLocal<>();

    @Override
    public void scatterv(Channel c, MemorySegment[] send, MemorySegment recv, int root) throws P2pException {
        int rank = c.rank();
        if (rank != root) {
            c.waitFor(c.receive(root, TAG_SCATTER, recv));
            return;
        }
        Request[] rs = requests(c.size() - 1);
        for (int i = 0, k = 0; i < c.size(); i++) {
            if (i != root) rs[k++] = c.send(i, TAG_SCATTER, send[i]);
        }
        if (recv != null) MemorySegment.copy(send[root], 0, recv, 0, send[root].byteSize());
        c.waitAll(rs);
    }

    @Override
    public void allGatherv(Channel c, MemorySegment send, MemorySegment[] recv) throws P2pException {
        int n = c.size();
        int rank = c.rank();
        if (send != null) MemorySegment.copy(send, 0, recv[rank], 0, recv[rank].byteSize());
        int right = (rank + 1) % n, left = (rank - 1 + n) % n;
        // Ring: in step s, pass on the block that came from s ranks to the left.
        for (int s = 0; s < n - 1; s++) {
            int out = (rank - s + n) % n, in = (rank - s - 1 + n) % n;
            c.sendReceive(right, recv[out], left, recv[in], TAG_ALLGATHER);
        }
    }

    @Override
    public void allToAllv(Channel c, MemorySegment[] send, MemorySegment[] recv) throws P2pException {
        int n = c.size();
        int rank = c.rank();
        MemorySegment.copy(send[rank], 0, recv[rank], 0, send[rank].byteSize());
        for (int k = 1; k < n; k++) {
            int dest = (rank + k) % n, source = (rank - k + n) % n;
            c.sendReceive(dest, send[dest], source, recv[source], TAG_ALLTOALL);
        }
    }

    @Override
    public void reduceScatter(Channel c, MemorySegment send, MemorySegment recv, int[] counts, Reducer op)
            throws P2pException {
        int n = c.size();
        long total = 0;
        for (int k : counts) total += k;
        long eb = op.elementBytes();
        MemorySegment all = c.rank() == 0 ? Scratch.take(total * eb) : null;
        reduce(c, send, all, (int) total, op, 0);
        MemorySegment[] blocks = null;
        if (c.rank() == 0) {
            blocks = new MemorySegment[n];
            long at = 0;
            for (int i = 0; i < n; i++) {
                blocks[i] = all.asSlice(at, counts[i] * eb);
                at += counts[i] * eb;
            }
        }
        scatterv(c, blocks, recv, 0);
        if (all != null) Scratch.giveBack(all);
    }

    @Override
    public void scan(Channel c, MemorySegment send, MemorySegment recv, int count, Reducer op) throws P2pException {
        int rank = c.rank();
        MemorySegment.copy(send, 0, recv, 0, send.byteSize());
        if (rank > 0) {
            MemorySegment prefix = Scratch.take(send.byteSize());
            c.waitFor(c.receive(rank - 1, TAG_SCAN, prefix));
            op.apply(prefix, recv, count);
            Scratch.giveBack(prefix);
        }
        if (rank < c.size() - 1) c.waitFor(c.send(rank + 1, TAG_SCAN, recv));
    }

    @Override
    public void exScan(Channel c, MemorySegment send, MemorySegment recv, int count, Reducer op)
            throws P2pException {
        int rank = c.rank();
        MemorySegment next;
        if (rank == 0) {
            next = send;
        } else {
            c.waitFor(c.receive(rank - 1, TAG_EXSCAN, recv));
            if (rank == c.size() - 1) return;
            next = Scratch.take(send.byteSize());
            MemorySegment.copy(send, 0, next, 0, send.byteSize());
            op.apply(recv, next, count);
        }
        if (rank < c.size() - 1) c.waitFor(c.send(rank + 1, TAG_EXSCAN, next));
        if (next != send) Scratch.giveBack(next);
    }
}
