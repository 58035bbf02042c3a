package mpi;

import java.nio.ByteBuffer;

/**
 * A user-defined reduction function (MPI_User_function) for {@link Op#Op(UserFunction, boolean)}.
 * Override one of the two {@code call} methods; both compute {@code inOut[i] = in[i] op inOut[i]}
 * for {@code count} elements, where {@code in} holds the contribution of lower ranks.
 *
 * <p>The library calls {@link #call(ByteBuffer, ByteBuffer, int, Datatype)} with direct byte
 * buffers in native byte order. Its default copies them into Java arrays of the datatype's
 * base type ({@code boolean[]} for {@link MPI#BOOLEAN}, two elements per complex value) and
 * calls {@link #call(Object, Object, int, Datatype)}, then copies {@code inOut} back.
 */
public abstract class UserFunction {
    /**
     * Array form of the function.
     *
     * @param inVec    array of values to combine with {@code inOutVec}
     * @param inOutVec accumulator array, updated in place
     * @param count    number of elements of {@code datatype}
     * @param datatype type of each element
     */
    public void call(Object inVec, Object inOutVec, int count, Datatype datatype) throws MPIException {
        throw MPIException.of(MPI.ERR_OP, "user function " + getClass().getName()
                + " overrides neither call(Object, Object, int, Datatype) nor call(ByteBuffer, ByteBuffer, int, Datatype)");
    }

    /**
     * Buffer form of the function.
     *
     * @param in       direct buffer of values to combine with {@code inOut}
     * @param inOut    direct accumulator buffer, updated in place
     * @param count    number of elements of {@code datatype}
     * @param datatype type of each element
     */
    public void call(ByteBuffer in, ByteBuffer inOut, int count, Datatype datatype) throws MPIException {
        int n = count * datatype.baseCount();
        ByteBuffer a = in.duplicate().order(in.order()).clear();
        ByteBuffer b = inOut.duplicate().order(inOut.order()).clear();
        switch (datatype.kind) {
            case Datatype.K_BYTE, Datatype.K_PACKED -> {
                byte[] x = new byte[n], y = new byte[n];
                a.get(x);
                b.get(y);
                call(x, y, count, datatype);
                b.clear().put(y);
            }
            case Datatype.K_BOOLEAN -> {
                boolean[] x = new boolean[n], y = new boolean[n];
                for (int i = 0; i < n; i++) {
                    x[i] = a.get(i) != 0;
                    y[i] = b.get(i) != 0;
                }
                call(x, y, count, datatype);
                for (int i = 0; i < n; i++) b.put(i, (byte) (y[i] ? 1 : 0));
            }
            case Datatype.K_CHAR -> {
                char[] x = new char[n], y = new char[n];
                a.asCharBuffer().get(x);
                b.asCharBuffer().get(y);
                call(x, y, count, datatype);
                b.asCharBuffer().put(y);
            }
            case Datatype.K_SHORT -> {
                short[] x = new short[n], y = new short[n];
                a.asShortBuffer().get(x);
                b.asShortBuffer().get(y);
                call(x, y, count, datatype);
                b.asShortBuffer().put(y);
            }
            case Datatype.K_INT -> {
                int[] x = new int[n], y = new int[n];
                a.asIntBuffer().get(x);
                b.asIntBuffer().get(y);
                call(x, y, count, datatype);
                b.asIntBuffer().put(y);
            }
            case Datatype.K_LONG -> {
                long[] x = new long[n], y = new long[n];
                a.asLongBuffer().get(x);
                b.asLongBuffer().get(y);
                call(x, y, count, datatype);
                b.asLongBuffer().put(y);
            }
            case Datatype.K_FLOAT -> {
                float[] x = new float[n], y = new float[n];
                a.asFloatBuffer().get(x);
                b.asFloatBuffer().get(y);
                call(x, y, count, datatype);
                b.asFloatBuffer().put(y);
            }
            case Datatype.K_DOUBLE -> {
                double[] x = new double[n], y = new double[n];
                a.asDoubleBuffer().get(x);
                b.asDoubleBuffer().get(y);
                call(x, y, count, datatype);
                b.asDoubleBuffer().put(y);
            }
            default -> throw MPIException.of(MPI.ERR_TYPE, "user function: unsupported datatype " + datatype);
        }
    }
}
