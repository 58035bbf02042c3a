package org.ftmpi.ddt;

import java.util.Arrays;

/**
 * Sequence of basic types of one instance of a datatype, run-length encoded (adjacent equal types
 * merged): {@code types[i]} repeated {@code counts[i]} times. Used for type matching and to
 * describe what an encoding converts. Immutable.
 */
public final class TypeSignature {
    private final BasicType[] types;
    private final long[] counts;
    private final long elements;

    private TypeSignature(BasicType[] types, long[] counts) {
        this.types = types;
        this.counts = counts;
        long e = 0;
        for (long c : counts) {
            e += c;
        }
        this.elements = e;
    }

    public int runs() {
        return types.length;
    }

    public BasicType type(int run) {
        return types[run];
    }

    public long count(int run) {
        return counts[run];
    }

    /** Number of basic elements in one instance. */
    public long elements() {
        return elements;
    }

    /** Number of elements of basic type {@code t} in one instance. */
    public long elements(BasicType t) {
        long e = 0;
        for (int i = 0; i < types.length; i++) {
            if (types[i] == t) {
                e += counts[i];
            }
        }
        return e;
    }

    /**
     * MPI type matching: true if the signature of {@code sendCount} instances of {@code send} is a
     * prefix of (or equal to) that of {@code recvCount} instances of {@code recv}. Runs in time
     * proportional to the number of runs compared, not elements.
     */
    public static boolean matches(TypeSignature send, long sendCount, TypeSignature recv, long recvCount) {
        if (sendCount < 0 || recvCount < 0) {
            throw DatatypeException.count("counts must be >= 0, were " + sendCount + " and " + recvCount);
        }
        long sendTotal = Math.multiplyExact(send.elements, sendCount);
        if (sendTotal > Math.multiplyExact(recv.elements, recvCount)) {
            return false;
        }
        if (sendTotal == 0) {
            return true;
        }
        if (send.types.length == 1 && recv.types.length == 1) {
            return send.types[0] == recv.types[0];
        }
        Cursor a = new Cursor(send), b = new Cursor(recv);
        long left = sendTotal;
        while (left > 0) {
            if (a.type() != b.type()) {
                return false;
            }
            long step = Math.min(left, Math.min(a.rem, b.rem));
            a.skip(step);
            b.skip(step);
            left -= step;
        }
        return true;
    }

    private static final class Cursor {
        final TypeSignature s;
        int run;
        long rem;

        Cursor(TypeSignature s) {
            this.s = s;
            this.rem = s.counts.length == 0 ? 0 : s.counts[0];
        }

        BasicType type() {
            return s.types[run];
        }

        void skip(long k) {
            rem -= k;
            if (rem == 0) {
                run = (run + 1) % s.types.length;
                rem = s.counts[run];
            }
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TypeSignature t && Arrays.equals(types, t.types) && Arrays.equals(counts, t.counts);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(types) * 31 + Arrays.hashCode(counts);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < types.length; i++) {
            sb.append(i == 0 ? "" : ", ").append(types[i]).append('x').append(counts[i]);
        }
        return sb.append(']').toString();
    }

    static final class Builder {
        private BasicType[] t = new BasicType[4];
        private long[] c = new long[4];
        private int n;

        void add(BasicType type, long k) {
            if (k == 0) {
                return;
            }
            if (n > 0 && t[n - 1] == type) {
                c[n - 1] += k;
                return;
            }
            if (n == t.length) {
                t = Arrays.copyOf(t, n * 2);
                c = Arrays.copyOf(c, n * 2);
            }
            t[n] = type;
            c[n++] = k;
        }

        TypeSignature build() {
            return new TypeSignature(Arrays.copyOf(t, n), Arrays.copyOf(c, n));
        }
    }
}
