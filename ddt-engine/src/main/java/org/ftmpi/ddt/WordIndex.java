package org.ftmpi.ddt;

/**
 * The packed stream of one instance of an irregular program of 8-byte words, as a flat list: the
 * user-side word offset of every packed word. Packing is then one branch-free gather
 * {@code out[i] = user[at + word[i]]} and unpacking the matching scatter, with no per-block
 * length dispatch; measured on the {@code indexed} benchmark layout (200 blocks of 1-13 doubles)
 * about 3x the per-block loop (docs/datatypes.md, session 5 results).
 *
 * <pre>
 *   word[i]      : offset (in 8-byte words, relative to the instance start) of packed word i
 *   first[j]     : index in word[] of the first word of op j; first[n] = words per instance
 *   blockOf(w)   : the op holding packed word w (first[j] &lt;= w &lt; first[j + 1]); n at the end
 * </pre>
 *
 * Built only for programs whose ops are all single blocks with offsets and lengths multiples of
 * 8, short on average (at most {@link #MAX_AVG_BLOCK} bytes: longer blocks are faster as bulk
 * copies) and at most {@link #MAX_WORDS} words per instance (the index costs 4 bytes per 8-byte
 * word). Immutable; thread-safe.
 */
final class WordIndex {
    static final long MAX_WORDS = 1 << 16;
    static final long MAX_AVG_BLOCK = 128;

    final int[] word;
    final int[] first;

    private WordIndex(int[] word, int[] first) {
        this.word = word;
        this.first = first;
    }

    /** The index of {@code p}, or null when {@code p} does not qualify (see the class comment). */
    static WordIndex of(Program p) {
        if (!p.singles || !p.allMultiplesOf8() || p.blocks == 0 || p.bytes / 8 > MAX_WORDS
                || p.bytes / p.blocks > MAX_AVG_BLOCK) {
            return null;
        }
        int[] word = new int[(int) (p.bytes / 8)];
        int[] first = new int[p.n + 1];
        int q = 0;
        for (int j = 0; j < p.n; j++) {
            long w0 = p.off[j] / 8;
            if (w0 < Integer.MIN_VALUE / 2 || w0 > Integer.MAX_VALUE / 2) {
                return null;
            }
            first[j] = q;
            for (long k = 0; k < p.len[j] / 8; k++) {
                word[q++] = (int) (w0 + k);
            }
        }
        first[p.n] = q;
        return new WordIndex(word, first);
    }

    /** The op holding packed word {@code w} (0 &lt;= w &lt;= words per instance; the end is op n). */
    int blockOf(int w) {
        if (w == word.length) {
            return first.length - 1;
        }
        int lo = 0, hi = first.length - 2; // largest j with first[j] <= w
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (first[mid] <= w) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }
}
