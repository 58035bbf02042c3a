package org.ftmpi.ddt;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Naive reference: expands a type tree element by element from its constructor arguments (not
 * from the engine's programs) and packs/unpacks one element at a time.
 */
final class ReferencePacker {
    /** One basic element of a type map. */
    record Elem(BasicType type, long offset) {
    }

    private ReferencePacker() {
    }

    static List<Elem> typeMap(Datatype t) {
        List<Elem> out = new ArrayList<>();
        walk(t, 0, out);
        return out;
    }

    private static void walk(Datatype t, long d, List<Elem> out) {
        int[] in = t.contentsIntegers();
        long[] ad = t.contentsAddresses();
        Datatype[] ty = t.contentsTypes();
        switch (t.combiner()) {
            case NAMED -> {
                if (t.basicType() != null) {
                    out.add(new Elem(t.basicType(), d));
                } else if (t == Datatype.INT2) {
                    out.add(new Elem(BasicType.INT, d));
                    out.add(new Elem(BasicType.INT, d + 4));
                } else if (t == Datatype.SHORT_INT) {
                    out.add(new Elem(BasicType.SHORT, d));
                    out.add(new Elem(BasicType.INT, d + 4));
                } else if (t == Datatype.LONG_INT) {
                    out.add(new Elem(BasicType.LONG, d));
                    out.add(new Elem(BasicType.INT, d + 8));
                } else if (t == Datatype.FLOAT_INT) {
                    out.add(new Elem(BasicType.FLOAT, d));
                    out.add(new Elem(BasicType.INT, d + 4));
                } else if (t == Datatype.DOUBLE_INT) {
                    out.add(new Elem(BasicType.DOUBLE, d));
                    out.add(new Elem(BasicType.INT, d + 8));
                } else {
                    throw new AssertionError(t);
                }
            }
            case DUP, RESIZED -> walk(ty[0], d, out);
            case CONTIGUOUS -> {
                for (int k = 0; k < in[0]; k++) {
                    walk(ty[0], d + k * ty[0].extent(), out);
                }
            }
            case VECTOR -> {
                for (int j = 0; j < in[0]; j++) {
                    for (int k = 0; k < in[1]; k++) {
                        walk(ty[0], d + ((long) j * in[2] + k) * ty[0].extent(), out);
                    }
                }
            }
            case HVECTOR -> {
                for (int j = 0; j < in[0]; j++) {
                    for (int k = 0; k < in[1]; k++) {
                        walk(ty[0], d + j * ad[0] + k * ty[0].extent(), out);
                    }
                }
            }
            case INDEXED -> {
                int n = in[0];
                for (int j = 0; j < n; j++) {
                    for (int k = 0; k < in[1 + j]; k++) {
                        walk(ty[0], d + ((long) in[1 + n + j] + k) * ty[0].extent(), out);
                    }
                }
            }
            case HINDEXED -> {
                int n = in[0];
                for (int j = 0; j < n; j++) {
                    for (int k = 0; k < in[1 + j]; k++) {
                        walk(ty[0], d + ad[j] + k * ty[0].extent(), out);
                    }
                }
            }
            case INDEXED_BLOCK -> {
                for (int j = 0; j < in[0]; j++) {
                    for (int k = 0; k < in[1]; k++) {
                        walk(ty[0], d + ((long) in[2 + j] + k) * ty[0].extent(), out);
                    }
                }
            }
            case HINDEXED_BLOCK -> {
                for (int j = 0; j < in[0]; j++) {
                    for (int k = 0; k < in[1]; k++) {
                        walk(ty[0], d + ad[j] + k * ty[0].extent(), out);
                    }
                }
            }
            case STRUCT -> {
                for (int j = 0; j < in[0]; j++) {
                    for (int k = 0; k < in[1 + j]; k++) {
                        walk(ty[j], d + ad[j] + k * ty[j].extent(), out);
                    }
                }
            }
            case SUBARRAY -> {
                int n = in[0];
                int[] sizes = slice(in, 1, n), sub = slice(in, 1 + n, n), st = slice(in, 1 + 2 * n, n);
                boolean c = in[1 + 3 * n] == Datatype.Order.C.ordinal();
                int[] idx = new int[n];
                forEachIndex(sub, c, i -> {
                    long lin = 0;
                    for (int q = 0; q < n; q++) {
                        int dim = c ? q : n - 1 - q; // slowest first
                        lin = lin * sizes[dim] + st[dim] + i[dim];
                    }
                    walk(ty[0], d + lin * ty[0].extent(), out);
                });
            }
            case DARRAY -> {
                int size = in[0], rank = in[1], n = in[2];
                int[] g = slice(in, 3, n), dist = slice(in, 3 + n, n), darg = slice(in, 3 + 2 * n, n),
                        ps = slice(in, 3 + 3 * n, n);
                boolean c = in[3 + 4 * n] == Datatype.Order.C.ordinal();
                int[] coords = new int[n];
                int r = rank;
                for (int q = n - 1; q >= 0; q--) {
                    coords[q] = r % ps[q];
                    r /= ps[q];
                }
                assert size > 0;
                forEachIndex(g, c, i -> {
                    for (int q = 0; q < n; q++) {
                        int owner;
                        Datatype.Distribution dd = Datatype.Distribution.values()[dist[q]];
                        if (dd == Datatype.Distribution.NONE) {
                            owner = 0;
                        } else if (dd == Datatype.Distribution.BLOCK) {
                            int blk = darg[q] == Datatype.DFLT_DARG ? (g[q] + ps[q] - 1) / ps[q] : darg[q];
                            owner = i[q] / blk;
                        } else {
                            int blk = darg[q] == Datatype.DFLT_DARG ? 1 : darg[q];
                            owner = (i[q] / blk) % ps[q];
                        }
                        if (owner != coords[q]) {
                            return;
                        }
                    }
                    long lin = 0;
                    for (int q = 0; q < n; q++) {
                        int dim = c ? q : n - 1 - q;
                        lin = lin * g[dim] + i[dim];
                    }
                    walk(ty[0], d + lin * ty[0].extent(), out);
                });
            }
        }
    }

    private static int[] slice(int[] a, int from, int n) {
        return java.util.Arrays.copyOfRange(a, from, from + n);
    }

    /** Visits all index tuples below {@code dims}, fastest-varying last (C) or first (Fortran). */
    private static void forEachIndex(int[] dims, boolean c, java.util.function.Consumer<int[]> f) {
        int n = dims.length;
        int[] i = new int[n];
        while (true) {
            f.accept(i);
            int q = 0;
            for (; q < n; q++) {
                int dim = c ? n - 1 - q : q;
                if (++i[dim] < dims[dim]) {
                    break;
                }
                i[dim] = 0;
            }
            if (q == n) {
                return;
            }
        }
    }

    /** Packs {@code count} instances at byte offset {@code base} of {@code mem}. */
    static byte[] pack(Datatype t, long count, byte[] mem, int base, PackOptions o) {
        List<Elem> map = typeMap(t);
        ByteBuffer src = ByteBuffer.wrap(mem).order(ByteOrder.nativeOrder());
        ByteBuffer out = ByteBuffer.allocate((int) t.packSize(count, o)).order(ByteOrder.nativeOrder());
        boolean swap = o.encoding().swaps();
        int maxAlign = 1;
        for (Elem e : map) {
            maxAlign = Math.max(maxAlign, e.type().alignment());
        }
        if (o.padding() == Padding.REORDERED) {
            for (BasicType bt : BasicType.REORDER_SEQUENCE) {
                for (long k = 0; k < count; k++) {
                    for (Elem e : map) {
                        if (e.type() == bt) {
                            put(out, src, (int) (base + k * t.extent() + e.offset()), bt.size(), swap);
                        }
                    }
                }
            }
        } else {
            for (long k = 0; k < count; k++) {
                for (Elem e : map) {
                    if (o.padding() == Padding.ALIGNED) {
                        out.position((int) Datatype.alignUp(out.position(), e.type().alignment()));
                    }
                    put(out, src, (int) (base + k * t.extent() + e.offset()), e.type().size(), swap);
                }
                if (o.padding() == Padding.ALIGNED) {
                    out.position((int) Datatype.alignUp(out.position(), maxAlign));
                }
            }
        }
        if (out.position() != out.capacity()) {
            throw new AssertionError("packSize " + out.capacity() + " != reference " + out.position());
        }
        return out.array();
    }

    private static void put(ByteBuffer out, ByteBuffer src, int at, int size, boolean swap) {
        for (int i = 0; i < size; i++) {
            out.put(src.get(at + (swap ? size - 1 - i : i)));
        }
    }

    /**
     * Unpacks {@code packed} into {@code mem}; returns false if some byte would be written twice
     * (an overlapping receive type).
     */
    static boolean unpack(Datatype t, long count, byte[] packed, byte[] mem, int base, PackOptions o) {
        // Re-use pack's element order by packing position indices.
        List<Elem> map = typeMap(t);
        boolean[] written = new boolean[mem.length];
        boolean swap = o.encoding().swaps();
        int[] pos = {0};
        int maxAlign = 1;
        for (Elem e : map) {
            maxAlign = Math.max(maxAlign, e.type().alignment());
        }
        boolean ok = true;
        List<long[]> order = new ArrayList<>(); // {memAt, size}
        if (o.padding() == Padding.REORDERED) {
            for (BasicType bt : BasicType.REORDER_SEQUENCE) {
                for (long k = 0; k < count; k++) {
                    for (Elem e : map) {
                        if (e.type() == bt) {
                            order.add(new long[] {base + k * t.extent() + e.offset(), bt.size(), 0});
                        }
                    }
                }
            }
        } else {
            for (long k = 0; k < count; k++) {
                for (Elem e : map) {
                    order.add(new long[] {base + k * t.extent() + e.offset(), e.type().size(),
                            o.padding() == Padding.ALIGNED ? e.type().alignment() : 1});
                }
                order.add(new long[] {-1, 0, o.padding() == Padding.ALIGNED ? maxAlign : 1});
            }
        }
        for (long[] x : order) {
            if (x[2] > 1) {
                pos[0] = (int) Datatype.alignUp(pos[0], x[2]);
            }
            if (x[0] < 0) {
                continue;
            }
            int at = (int) x[0], size = (int) x[1];
            for (int i = 0; i < size; i++) {
                if (written[at + i]) {
                    ok = false;
                }
                written[at + i] = true;
                mem[at + (swap ? size - 1 - i : i)] = packed[pos[0] + i];
            }
            pos[0] += size;
        }
        return ok;
    }
}
