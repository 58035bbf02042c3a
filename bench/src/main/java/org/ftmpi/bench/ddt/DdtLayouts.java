package org.ftmpi.bench.ddt;

import java.nio.ByteBuffer;
import java.util.function.IntFunction;
import org.ftmpi.ddt.Datatype;

/**
 * The benchmark layouts, identical to {@code bench/peers/ddt/layouts.h} and {@code pack_bench.c}:
 * matrix columns, long runs, an irregular indexed type and the 93-field struct of seed 004 Table 1.
 */
public final class DdtLayouts {
    /** One layout: committed type, count, user buffer (double[] or direct ByteBuffer) and packed bytes. */
    public record Layout(String name, Datatype type, int count, Object user, long bytes) {
    }

    public static final String[] NAMES = {"col64", "col256", "col1024", "longrun", "indexed", "struct93x21",
            "struct93x171"};

    private DdtLayouts() {
    }

    public static Layout create(String name) {
        return create(name, ByteBuffer::allocateDirect);
    }

    /** As {@link #create(String)}, the struct records in a direct buffer of {@code direct}'s making. */
    public static Layout create(String name, IntFunction<ByteBuffer> direct) {
        return switch (name) {
            case "col64", "col256", "col1024" -> {
                int n = Integer.parseInt(name.substring(3));
                yield of(name, Datatype.vector(n, 1, n, Datatype.DOUBLE), 1, new double[n * n]);
            }
            case "longrun" -> of(name, Datatype.vector(64, 1024, 2048, Datatype.DOUBLE), 1, new double[64 * 2048]);
            case "indexed" -> {
                int n = 200;
                int[] bl = new int[n], disp = new int[n];
                int at = 0;
                for (int i = 0; i < n; i++) {
                    at += 1 + (i * 5) % 11;
                    bl[i] = 1 + (i * 7) % 13;
                    disp[i] = at;
                    at += bl[i];
                }
                yield of(name, Datatype.indexed(bl, disp, Datatype.DOUBLE), 1, new double[at]);
            }
            case "struct93x21" -> struct(name, 21, direct);
            case "struct93x171" -> struct(name, 171, direct);
            default -> throw new IllegalArgumentException("unknown layout " + name);
        };
    }

    /** 93 fields of types {double, int, double, double, float, int}[i % 6] at C-aligned offsets. */
    public static Datatype struct93() {
        Datatype[] cycle = {Datatype.DOUBLE, Datatype.INT, Datatype.DOUBLE, Datatype.DOUBLE, Datatype.FLOAT,
                Datatype.INT};
        int n = 93;
        int[] bl = new int[n];
        long[] d = new long[n];
        Datatype[] t = new Datatype[n];
        long off = 0;
        for (int i = 0; i < n; i++) {
            t[i] = cycle[i % 6];
            long s = t[i].size();
            off = (off + s - 1) / s * s;
            bl[i] = 1;
            d[i] = off;
            off += s;
        }
        return Datatype.struct(bl, d, t);
    }

    private static Layout struct(String name, int count, IntFunction<ByteBuffer> direct) {
        Datatype t = struct93();
        // Records live in a direct ByteBuffer, as Open MPI's Java bindings require for structs.
        return of(name, t, count, direct.apply((int) (t.extent() * count)));
    }

    private static Layout of(String name, Datatype t, int count, Object user) {
        t.commit();
        if (user instanceof double[] a) {
            for (int i = 0; i < a.length; i++) {
                a[i] = i;
            }
        } else if (user instanceof ByteBuffer a) {
            for (int i = 0; i < a.capacity(); i++) {
                a.put(i, (byte) i);
            }
        }
        return new Layout(name, t, count, user, t.packSize(count));
    }
}
