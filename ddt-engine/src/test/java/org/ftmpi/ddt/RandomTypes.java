package org.ftmpi.ddt;

import java.util.Random;

/** Random nested datatypes (depth up to 4, every constructor) for property tests. */
final class RandomTypes {
    private static final Datatype[] LEAVES = {Datatype.BYTE, Datatype.CHAR, Datatype.SHORT, Datatype.BOOLEAN,
            Datatype.INT, Datatype.LONG, Datatype.FLOAT, Datatype.DOUBLE, Datatype.INT2, Datatype.SHORT_INT,
            Datatype.LONG_INT, Datatype.FLOAT_INT, Datatype.DOUBLE_INT};

    private final Random r;

    RandomTypes(long seed) {
        r = new Random(seed);
    }

    Datatype gen(int depth) {
        if (depth == 0 || r.nextInt(6) == 0) {
            return LEAVES[r.nextInt(LEAVES.length)];
        }
        Datatype old = gen(depth - 1);
        int pick = r.nextInt(13);
        return switch (pick) {
            case 0 -> Datatype.contiguous(1 + r.nextInt(4), old);
            case 1 -> Datatype.vector(1 + r.nextInt(4), r.nextInt(4), r.nextInt(9) - 2, old);
            case 2 -> Datatype.hvector(1 + r.nextInt(4), r.nextInt(3), r.nextInt(120) - 20, old);
            case 3 -> {
                int n = 1 + r.nextInt(4);
                int[] bl = new int[n], d = new int[n];
                for (int i = 0; i < n; i++) {
                    bl[i] = r.nextInt(4);
                    d[i] = r.nextInt(12) - 2;
                }
                yield Datatype.indexed(bl, d, old);
            }
            case 4 -> {
                int n = 1 + r.nextInt(4);
                int[] bl = new int[n];
                long[] d = new long[n];
                for (int i = 0; i < n; i++) {
                    bl[i] = r.nextInt(3);
                    d[i] = r.nextInt(200) - 30;
                }
                yield Datatype.hindexed(bl, d, old);
            }
            case 5 -> {
                int n = 1 + r.nextInt(4);
                int[] d = new int[n];
                for (int i = 0; i < n; i++) {
                    d[i] = i * 3 + r.nextInt(3);
                }
                yield Datatype.indexedBlock(1 + r.nextInt(2), d, old);
            }
            case 6 -> {
                int n = 1 + r.nextInt(4);
                long[] d = new long[n];
                for (int i = 0; i < n; i++) {
                    d[i] = r.nextInt(150);
                }
                yield Datatype.hindexedBlock(1 + r.nextInt(2), d, old);
            }
            case 7 -> {
                int n = 1 + r.nextInt(4);
                int[] bl = new int[n];
                long[] d = new long[n];
                Datatype[] ts = new Datatype[n];
                long at = 0;
                for (int i = 0; i < n; i++) {
                    ts[i] = i == 0 ? old : gen(depth - 1);
                    bl[i] = r.nextInt(3);
                    d[i] = r.nextBoolean() ? at : r.nextInt(100) - 10; // often adjacent, sometimes anywhere
                    at = d[i] + bl[i] * ts[i].extent();
                }
                yield Datatype.struct(bl, d, ts);
            }
            case 8 -> {
                int n = 1 + r.nextInt(3);
                int[] sz = new int[n], sub = new int[n], st = new int[n];
                for (int i = 0; i < n; i++) {
                    sz[i] = 1 + r.nextInt(4);
                    sub[i] = 1 + r.nextInt(sz[i]);
                    st[i] = r.nextInt(sz[i] - sub[i] + 1);
                }
                yield Datatype.subarray(sz, sub, st, r.nextBoolean() ? Datatype.Order.C : Datatype.Order.FORTRAN, old);
            }
            case 9 -> {
                int n = 1 + r.nextInt(3);
                int[] g = new int[n], darg = new int[n], ps = new int[n];
                Datatype.Distribution[] dist = new Datatype.Distribution[n];
                int size = 1;
                for (int i = 0; i < n; i++) {
                    g[i] = 1 + r.nextInt(6);
                    dist[i] = Datatype.Distribution.values()[r.nextInt(3)];
                    ps[i] = dist[i] == Datatype.Distribution.NONE ? 1 : 1 + r.nextInt(3);
                    darg[i] = Datatype.DFLT_DARG;
                    if (dist[i] == Datatype.Distribution.CYCLIC && r.nextBoolean()) {
                        darg[i] = 1 + r.nextInt(3);
                    }
                    if (dist[i] == Datatype.Distribution.BLOCK && r.nextBoolean()) {
                        darg[i] = (g[i] + ps[i] - 1) / ps[i] + r.nextInt(2);
                    }
                    size *= ps[i];
                }
                yield Datatype.darray(size, r.nextInt(size), g, dist, darg, ps,
                        r.nextBoolean() ? Datatype.Order.C : Datatype.Order.FORTRAN, old);
            }
            case 10 -> Datatype.resized(old, r.nextInt(16) - 8, Math.max(1, old.extent() + r.nextInt(24) - 8));
            case 11 -> old.dup();
            default -> Datatype.contiguous(1 + r.nextInt(3), old);
        };
    }
}
