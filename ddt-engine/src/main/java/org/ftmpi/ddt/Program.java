package org.ftmpi.ddt;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Flat, compacted representation of one instance of a committed type: a list of ops, each a
 * two-level strided loop of equal blocks.
 *
 * <pre>
 *   op j:  for o in [0, ocount[j]):
 *            for i in [0, count[j]):
 *              block of len[j] bytes at off[j] + o * ostride[j] + i * stride[j]
 *   typed programs also carry type[j]: every block holds len[j] / type[j].size() elements.
 * </pre>
 *
 * Blocks are visited in type-map order. Immutable; thread-safe.
 */
final class Program {
    final int n;
    final long[] off;
    final long[] len;
    final long[] stride;
    final long[] count;
    final long[] ostride;
    final long[] ocount;
    /** Element type of each op, or null for an untyped (byte) program. */
    final BasicType[] type;
    /** Number of data bytes in one instance. */
    final long bytes;
    /** Number of blocks in one instance. */
    final long blocks;
    private final boolean words8;
    /** Every op is one block (count 1, one outer iteration): irregular layouts such as indexed types and structs. */
    final boolean singles;
    /** Some op is a strided run of 8-byte blocks at a stride of at least {@link Spacer#MIN_STRIDE}. */
    private final boolean farStrided;

    Program(int n, long[] off, long[] len, long[] stride, long[] count, long[] ostride, long[] ocount,
            BasicType[] type) {
        this.n = n;
        this.off = off;
        this.len = len;
        this.stride = stride;
        this.count = count;
        this.ostride = ostride;
        this.ocount = ocount;
        this.type = type;
        long b = 0;
        long k = 0;
        for (int j = 0; j < n; j++) {
            b += len[j] * count[j] * ocount[j];
            k += count[j] * ocount[j];
        }
        this.bytes = b;
        this.blocks = k;
        this.words8 = computeWords8();
        boolean one = true;
        for (int j = 0; j < n; j++) {
            one &= count[j] == 1 && ocount[j] == 1;
        }
        this.singles = one;
        boolean far = false;
        for (int j = 0; j < n; j++) {
            far |= count[j] > 1 && len[j] == 8 && stride[j] >= Spacer.MIN_STRIDE;
        }
        this.farStrided = far;
    }

    /** Built on first use by {@link #wordIndex()}; NONE when the program does not qualify. */
    private volatile Object wordIndex;
    private static final Object NONE = new Object();

    /** The flat word index of this program ({@link WordIndex}), or null if it does not qualify. */
    WordIndex wordIndex() {
        Object w = wordIndex;
        if (w == null) {
            WordIndex x = WordIndex.of(this);
            wordIndex = w = x == null ? NONE : x;
        }
        return w == NONE ? null : (WordIndex) w;
    }

    /** Whether this program moves 8-byte blocks far apart (see {@link Spacer}). */
    boolean farStrided() {
        return farStrided;
    }

    /** The ops of this typed program whose type is {@code t}, in order. */
    Program filter(BasicType t) {
        int m = 0;
        for (int j = 0; j < n; j++) {
            if (type[j] == t) {
                m++;
            }
        }
        long[] o = new long[m], l = new long[m], s = new long[m], c = new long[m], os = new long[m], oc = new long[m];
        BasicType[] ty = new BasicType[m];
        int q = 0;
        for (int j = 0; j < n; j++) {
            if (type[j] == t) {
                o[q] = off[j]; l[q] = len[j]; s[q] = stride[j]; c[q] = count[j];
                os[q] = ostride[j]; oc[q] = ocount[j]; ty[q] = t;
                q++;
            }
        }
        return new Program(m, o, l, s, c, os, oc, ty);
    }

    /**
     * This program repeated {@code instances} times at {@code extent} spacing folded into one
     * program when that is possible without growing it (single op with one outer iteration);
     * otherwise null.
     */
    Program foldInstances(long instances, long extent) {
        if (n != 1 || ocount[0] != 1 || instances <= 1) {
            return null;
        }
        long l = len[0], c = count[0], s = stride[0];
        long oc = instances, os = extent;
        if (c > 1 && s == l) { // contiguous inner loop: one block
            l *= c;
            c = 1;
            s = 0;
        }
        if (c == 1) { // outer loop becomes the inner loop
            if (os == l) {
                return single(off[0], l * oc, 0, 1, 0, 1);
            }
            return single(off[0], l, os, oc, 0, 1);
        }
        return single(off[0], l, s, c, os, oc);
    }

    private Program single(long o, long l, long s, long c, long os, long oc) {
        return new Program(1, new long[] {o}, new long[] {l}, new long[] {s}, new long[] {c},
                new long[] {os}, new long[] {oc}, type == null ? null : new BasicType[] {type[0]});
    }

    /** True if every offset, length and stride is a multiple of 8 (computed once). */
    boolean allMultiplesOf8() {
        return words8;
    }

    private boolean computeWords8() {
        for (int j = 0; j < n; j++) {
            if (((off[j] | len[j] | stride[j] | ostride[j]) & 7) != 0) {
                return false;
            }
        }
        return true;
    }

    /** All blocks as {offset, length} pairs sorted by offset (for overlap checks). */
    long[][] sortedBlocks() {
        int total = Math.toIntExact(blocks);
        long[][] r = new long[total][];
        int q = 0;
        for (int j = 0; j < n; j++) {
            for (long o = 0; o < ocount[j]; o++) {
                for (long i = 0; i < count[j]; i++) {
                    r[q++] = new long[] {off[j] + o * ostride[j] + i * stride[j], len[j]};
                }
            }
        }
        Arrays.sort(r, (a, b) -> Long.compare(a[0], b[0]));
        return r;
    }

    /** Human-readable ops, one per line (for tests and {@code Datatype.describe()}). */
    List<String> describe() {
        List<String> out = new ArrayList<>(n);
        for (int j = 0; j < n; j++) {
            StringBuilder sb = new StringBuilder();
            sb.append("{off=").append(off[j]).append(", len=").append(len[j]);
            if (count[j] > 1) {
                sb.append(", stride=").append(stride[j]).append(", count=").append(count[j]);
            }
            if (ocount[j] > 1) {
                sb.append(", ostride=").append(ostride[j]).append(", ocount=").append(ocount[j]);
            }
            if (type != null) {
                sb.append(", type=").append(type[j]);
            }
            out.add(sb.append('}').toString());
        }
        return out;
    }
}
