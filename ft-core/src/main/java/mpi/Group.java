package mpi;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * An ordered set of processes (MPI_Group). Source compatible with Open MPI's Java bindings.
 *
 * <p>A group is a local object: it holds the world ranks of its members, in group-rank order,
 * and the world rank of the process that made it (so that {@link #getRank()} works when ranks
 * are threads of one JVM). Every operation is local.
 *
 * <p><b>Note:</b> immutable once made; {@link #free()} only marks this handle null.
 */
public final class Group implements Freeable {
    /** World ranks of the members, indexed by group rank; {@code null} once freed. */
    private int[] members;
    /** World rank of the calling process, or -1 when not known (the empty group). */
    private final int self;
    private final boolean predefined;

    Group(int[] members, int self) {
        this(members, self, false);
    }

    private Group(int[] members, int self, boolean predefined) {
        this.members = members;
        this.self = self;
        this.predefined = predefined;
    }

    static Group empty() {
        return new Group(new int[0], -1, true);
    }

    /** MPI_GROUP_SIZE. */
    public int getSize() throws MPIException {
        return live("getSize").length;
    }

    /** MPI_GROUP_RANK: the caller's rank in this group, or {@link MPI#UNDEFINED} if it is not a member. */
    public int getRank() throws MPIException {
        int[] m = live("getRank");
        for (int i = 0; i < m.length; i++) if (m[i] == self) return i;
        return MPI.UNDEFINED;
    }

    /** MPI_GROUP_FREE: this handle becomes null; communicators made from it are not affected. */
    @Override
    public void free() throws MPIException {
        live("free");
        if (predefined) throw MPIException.of(MPI.ERR_GROUP, "free: cannot free the predefined group MPI.GROUP_EMPTY");
        members = null;
    }

    /** Whether this handle is null (freed). */
    public boolean isNull() {
        return members == null;
    }

    /**
     * MPI_GROUP_TRANSLATE_RANKS: the rank in {@code group2} of each process of {@code ranks1}
     * (ranks in {@code group1}); {@link MPI#UNDEFINED} where it is not a member of group2.
     * {@link MPI#PROC_NULL} translates to itself.
     */
    public static int[] translateRanks(Group group1, int[] ranks1, Group group2) throws MPIException {
        int[] a = arg(group1, "translateRanks", "group1");
        int[] b = arg(group2, "translateRanks", "group2");
        if (ranks1 == null) throw MPIException.of(MPI.ERR_ARG, "translateRanks: ranks1 is null");
        Map<Integer, Integer> where = index(b);
        int[] out = new int[ranks1.length];
        for (int i = 0; i < ranks1.length; i++) {
            int r = ranks1[i];
            if (r == MPI.PROC_NULL) {
                out[i] = MPI.PROC_NULL;
                continue;
            }
            if (r < 0 || r >= a.length) {
                throw MPIException.of(MPI.ERR_RANK, "translateRanks: ranks1[" + i + "] = " + r
                        + " is not a rank of group1 (size " + a.length + ")");
            }
            Integer t = where.get(a[r]);
            out[i] = t == null ? MPI.UNDEFINED : t;
        }
        return out;
    }

    /** MPI_GROUP_COMPARE: {@link MPI#IDENT}, {@link MPI#SIMILAR} or {@link MPI#UNEQUAL}. */
    public static int compare(Group group1, Group group2) throws MPIException {
        return compareMembers(arg(group1, "compare", "group1"), arg(group2, "compare", "group2"));
    }

    static int compareMembers(int[] a, int[] b) {
        if (Arrays.equals(a, b)) return MPI.IDENT;
        if (a.length != b.length) return MPI.UNEQUAL;
        int[] x = a.clone(), y = b.clone();
        Arrays.sort(x);
        Arrays.sort(y);
        return Arrays.equals(x, y) ? MPI.SIMILAR : MPI.UNEQUAL;
    }

    /** MPI_GROUP_UNION: the members of group1, then those of group2 not in group1. */
    public static Group union(Group group1, Group group2) throws MPIException {
        int[] a = arg(group1, "union", "group1");
        int[] b = arg(group2, "union", "group2");
        Map<Integer, Integer> inA = index(a);
        int[] out = Arrays.copyOf(a, a.length + b.length);
        int n = a.length;
        for (int w : b) if (!inA.containsKey(w)) out[n++] = w;
        return new Group(Arrays.copyOf(out, n), self(group1, group2));
    }

    /** MPI_GROUP_INTERSECTION: the members of group1 that are in group2, in group1's order. */
    public static Group intersection(Group group1, Group group2) throws MPIException {
        int[] a = arg(group1, "intersection", "group1");
        Map<Integer, Integer> inB = index(arg(group2, "intersection", "group2"));
        return new Group(select(a, inB, true), self(group1, group2));
    }

    /** MPI_GROUP_DIFFERENCE: the members of group1 that are not in group2, in group1's order. */
    public static Group difference(Group group1, Group group2) throws MPIException {
        int[] a = arg(group1, "difference", "group1");
        Map<Integer, Integer> inB = index(arg(group2, "difference", "group2"));
        return new Group(select(a, inB, false), self(group1, group2));
    }

    /**
     * The members of {@code a}, in order, that are ({@code in}) or are not in {@code b}. A loop,
     * not a stream with a lambda: ULFM programs call {@link #difference} with {@code getFailed()}
     * right after a failure, where a first stream loads classes and spins a hidden class.
     */
    private static int[] select(int[] a, Map<Integer, Integer> b, boolean in) {
        int[] out = new int[a.length];
        int n = 0;
        for (int w : a) if (b.containsKey(w) == in) out[n++] = w;
        return Arrays.copyOf(out, n);
    }

    /** MPI_GROUP_INCL: the processes of ranks {@code ranks} (distinct), in that order. */
    public Group incl(int[] ranks) throws MPIException {
        int[] m = live("incl");
        checkRanks(m, ranks, "incl");
        int[] out = new int[ranks.length];
        for (int i = 0; i < ranks.length; i++) out[i] = m[ranks[i]];
        return new Group(out, self);
    }

    /** MPI_GROUP_EXCL: this group without the processes of ranks {@code ranks} (distinct). */
    public Group excl(int[] ranks) throws MPIException {
        int[] m = live("excl");
        boolean[] drop = checkRanks(m, ranks, "excl");
        return keep(m, drop, false);
    }

    /** MPI_GROUP_RANGE_INCL: ranks given as (first, last, stride) triplets, in triplet order. */
    public Group rangeIncl(int[][] ranges) throws MPIException {
        int[] m = live("rangeIncl");
        int[] ranks = expand(m.length, ranges, "rangeIncl");
        checkRanks(m, ranks, "rangeIncl");
        int[] out = new int[ranks.length];
        for (int i = 0; i < ranks.length; i++) out[i] = m[ranks[i]];
        return new Group(out, self);
    }

    /** MPI_GROUP_RANGE_EXCL: this group without the ranks of the (first, last, stride) triplets. */
    public Group rangeExcl(int[][] ranges) throws MPIException {
        int[] m = live("rangeExcl");
        int[] ranks = expand(m.length, ranges, "rangeExcl");
        return keep(m, checkRanks(m, ranks, "rangeExcl"), false);
    }

    // ------------------------------------------------------------------ internals

    /** World ranks of the members (not copied; callers must not modify). */
    int[] worldRanks(String op) throws MPIException {
        return live(op);
    }

    int self() {
        return self;
    }

    private Group keep(int[] m, boolean[] mark, boolean markedIn) {
        int n = 0;
        int[] out = new int[m.length];
        for (int i = 0; i < m.length; i++) if (mark[i] == markedIn) out[n++] = m[i];
        return new Group(Arrays.copyOf(out, n), self);
    }

    /** Checks that ranks are valid and distinct; returns the set of them. */
    private static boolean[] checkRanks(int[] m, int[] ranks, String op) throws MPIException {
        if (ranks == null) throw MPIException.of(MPI.ERR_ARG, op + ": ranks is null");
        boolean[] seen = new boolean[m.length];
        for (int i = 0; i < ranks.length; i++) {
            int r = ranks[i];
            if (r < 0 || r >= m.length) {
                throw MPIException.of(MPI.ERR_RANK, op + ": ranks[" + i + "] = " + r
                        + " is not a rank of the group (size " + m.length + ")");
            }
            if (seen[r]) throw MPIException.of(MPI.ERR_RANK, op + ": rank " + r + " appears twice in ranks");
            seen[r] = true;
        }
        return seen;
    }

    private static int[] expand(int size, int[][] ranges, String op) throws MPIException {
        if (ranges == null) throw MPIException.of(MPI.ERR_ARG, op + ": ranges is null");
        int[] out = new int[16];
        int n = 0;
        for (int t = 0; t < ranges.length; t++) {
            int[] r = ranges[t];
            if (r == null || r.length < 3) {
                throw MPIException.of(MPI.ERR_ARG, op + ": ranges[" + t + "] is not a (first, last, stride) triplet");
            }
            int first = r[0], last = r[1], stride = r[2];
            if (stride == 0) throw MPIException.of(MPI.ERR_ARG, op + ": ranges[" + t + "] has stride 0");
            if (first < 0 || first >= size || last < 0 || last >= size) {
                throw MPIException.of(MPI.ERR_RANK, op + ": ranges[" + t + "] = (" + first + ", " + last + ", "
                        + stride + ") names a rank outside 0.." + (size - 1));
            }
            if ((stride > 0 && first > last) || (stride < 0 && first < last)) {
                throw MPIException.of(MPI.ERR_ARG, op + ": ranges[" + t + "] = (" + first + ", " + last + ", "
                        + stride + ") is empty (the stride goes away from last)");
            }
            for (long x = first; stride > 0 ? x <= last : x >= last; x += stride) {
                if (n == out.length) out = Arrays.copyOf(out, n * 2);
                out[n++] = (int) x;
                if (n > size) break; // duplicates; checkRanks reports them
            }
        }
        return Arrays.copyOf(out, n);
    }

    private static Map<Integer, Integer> index(int[] m) {
        Map<Integer, Integer> where = new HashMap<>(m.length * 2);
        for (int i = 0; i < m.length; i++) where.put(m[i], i);
        return where;
    }

    private static int self(Group a, Group b) {
        return a.self >= 0 ? a.self : b.self;
    }

    private int[] live(String op) throws MPIException {
        int[] m = members;
        if (m == null) throw MPIException.of(MPI.ERR_GROUP, op + ": the group has been freed");
        return m;
    }

    private static int[] arg(Group g, String op, String name) throws MPIException {
        if (g == null) throw MPIException.of(MPI.ERR_GROUP, op + ": " + name + " is null");
        if (g.members == null) throw MPIException.of(MPI.ERR_GROUP, op + ": " + name + " has been freed");
        return g.members;
    }

    @Override
    public String toString() {
        return members == null ? "Group(freed)" : "Group" + Arrays.toString(members);
    }
}
