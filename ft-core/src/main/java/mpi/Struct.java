package mpi;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Base class of user-defined struct types, as in Open MPI's Java bindings: a subclass adds its
 * fields in its constructor ({@code addInt()}, {@code addDouble(3)}, {@code addStruct(s)}, ...;
 * each returns the field's byte offset, fields follow each other without padding unless
 * {@link #setOffset} moves the next one), implements {@link #newData()}, and reads and writes
 * structs stored in a {@link ByteBuffer} through its {@link Data} subclass. {@link #getType()}
 * is the committed {@code createStruct} datatype (base type {@code BYTE}, extent rounded up to
 * the largest field alignment, as MPI does) to use with byte buffers in any communication call.
 *
 * <p><b>Note:</b> define all fields before the first {@code getType}/{@code getExtent}/{@code
 * getData}; afterwards the layout is fixed and adding a field is an error.
 */
public abstract class Struct {
    private static final String TYPE_MISMATCH = "Type mismatch";

    private int extent;
    private final List<Field> fields = new ArrayList<>();
    private Datatype datatype;
    private Datatype[] types;
    private int[] offsets;
    private int[] lengths;

    private record Field(Object type, int offset, int length) {}

    private void commit() throws MPIException {
        if (datatype != null) return;
        int n = fields.size();
        types = new Datatype[n];
        offsets = new int[n];
        lengths = new int[n];
        for (int i = 0; i < n; i++) {
            Field f = fields.get(i);
            types[i] = f.type instanceof Struct s ? s.datatype : (Datatype) f.type;
            offsets[i] = f.offset;
            lengths[i] = f.length;
        }
        Datatype t = Datatype.createStruct(lengths, offsets, types);
        t.commit();
        extent = t.getExtent();
        datatype = t;
    }

    /** Extent of the struct type in bytes. */
    public final int getExtent() throws MPIException {
        commit();
        return extent;
    }

    /** The committed struct datatype. */
    public final Datatype getType() throws MPIException {
        commit();
        return datatype;
    }

    /** Creates the accessor object of the subclass. */
    protected abstract Data newData();

    @SuppressWarnings("unchecked")
    private <T extends Data> T newData(ByteBuffer buffer, int offset) {
        Data d = newData();
        d.buffer = buffer;
        d.offset = offset;
        return (T) d;
    }

    /** Accessor of the struct at the start of {@code buffer}. */
    public final <T extends Data> T getData(ByteBuffer buffer) throws MPIException {
        commit();
        return newData(buffer, 0);
    }

    /** Accessor of struct number {@code index} of an array of structs in {@code buffer}. */
    public final <T extends Data> T getData(ByteBuffer buffer, int index) throws MPIException {
        commit();
        return newData(buffer, index * extent);
    }

    /** Accessor of the struct at the start of {@code array} (native byte order). */
    public final <T extends Data> T getData(byte[] array) throws MPIException {
        return getData(ByteBuffer.wrap(array).order(ByteOrder.nativeOrder()));
    }

    /** Accessor of struct number {@code index} in {@code array} (native byte order). */
    public final <T extends Data> T getData(byte[] array, int index) throws MPIException {
        return getData(ByteBuffer.wrap(array).order(ByteOrder.nativeOrder()), index);
    }

    private int addField(Object type, int typeExtent, int length) {
        if (datatype != null) throw new AssertionError("The struct data type was committed.");
        int offset = extent;
        extent += typeExtent * length;
        fields.add(new Field(type, offset, length));
        return offset;
    }

    /** Places the next field at byte {@code offset} (not below the fields added so far). */
    public final Struct setOffset(int offset) {
        if (datatype != null) throw new AssertionError("The struct data type was committed.");
        if (offset < extent) {
            throw new IllegalArgumentException("The offset must be greater or equal to the accumulated extent.");
        }
        extent = offset;
        return this;
    }

    /** Adds a byte field; returns its byte offset. */
    public final int addByte() {
        return addByte(1);
    }

    /** Adds an array of {@code length} bytes; returns its byte offset. */
    public final int addByte(int length) {
        return addField(MPI.BYTE, 1, length);
    }

    /** Adds a char field; returns its byte offset. */
    public final int addChar() {
        return addChar(1);
    }

    /** Adds an array of {@code length} chars; returns its byte offset. */
    public final int addChar(int length) {
        return addField(MPI.CHAR, 2, length);
    }

    /** Adds a short field; returns its byte offset. */
    public final int addShort() {
        return addShort(1);
    }

    /** Adds an array of {@code length} shorts; returns its byte offset. */
    public final int addShort(int length) {
        return addField(MPI.SHORT, 2, length);
    }

    /** Adds a int field; returns its byte offset. */
    public final int addInt() {
        return addInt(1);
    }

    /** Adds an array of {@code length} ints; returns its byte offset. */
    public final int addInt(int length) {
        return addField(MPI.INT, 4, length);
    }

    /** Adds a long field; returns its byte offset. */
    public final int addLong() {
        return addLong(1);
    }

    /** Adds an array of {@code length} longs; returns its byte offset. */
    public final int addLong(int length) {
        return addField(MPI.LONG, 8, length);
    }

    /** Adds a float field; returns its byte offset. */
    public final int addFloat() {
        return addFloat(1);
    }

    /** Adds an array of {@code length} floats; returns its byte offset. */
    public final int addFloat(int length) {
        return addField(MPI.FLOAT, 4, length);
    }

    /** Adds a double field; returns its byte offset. */
    public final int addDouble() {
        return addDouble(1);
    }

    /** Adds an array of {@code length} doubles; returns its byte offset. */
    public final int addDouble(int length) {
        return addField(MPI.DOUBLE, 8, length);
    }

    /** Adds a boolean field *(ext: not in Open MPI's bindings)*; returns its byte offset. */
    public final int addBoolean() {
        return addBoolean(1);
    }

    /** Adds an array of {@code length} booleans *(ext: not in Open MPI's bindings)*; returns its byte offset. */
    public final int addBoolean(int length) {
        return addField(MPI.BOOLEAN, 1, length);
    }

    /** Adds a field holding one struct of type {@code struct}. */
    public final int addStruct(Struct struct) throws MPIException {
        return addStruct(struct, 1);
    }

    /** Adds an array of {@code length} structs of type {@code struct}. */
    public final int addStruct(Struct struct, int length) throws MPIException {
        struct.commit();
        return addField(struct, struct.extent, length);
    }

    /** Adds a field of datatype {@code type}. */
    public final int addData(Datatype type) throws MPIException {
        return addData(type, 1);
    }

    /** Adds an array of {@code length} elements of datatype {@code type}. */
    public final int addData(Datatype type, int length) throws MPIException {
        return addField(type, type.getExtent() * type.baseBytes, length);
    }

    private boolean valid(int field, int index, Datatype type) {
        int i = java.util.Arrays.binarySearch(offsets, field);
        return i >= 0 && index >= 0 && index < lengths[i] && type == types[i];
    }

    /** Reads and writes one struct stored in a byte buffer; subclasses add named accessors. */
    public abstract class Data {
        private ByteBuffer buffer;
        private int offset;

        /** The buffer holding this struct, starting at it: usable in send/recv with {@link #getType()}. */
        public final ByteBuffer getBuffer() {
            return offset == 0 ? buffer : MPI.slice(buffer, offset);
        }

        /** The byte field at byte offset {@code field}. */
        protected final byte getByte(int field) {
            assert valid(field, 0, MPI.BYTE) : TYPE_MISMATCH;
            return buffer.get(offset + field);
        }

        /** Element {@code index} of the byte array at byte offset {@code field}. */
        protected final byte getByte(int field, int index) {
            assert valid(field, index, MPI.BYTE) : TYPE_MISMATCH;
            return buffer.get(offset + field + index);
        }

        protected final void putByte(int field, byte v) {
            assert valid(field, 0, MPI.BYTE) : TYPE_MISMATCH;
            buffer.put(offset + field, v);
        }

        protected final void putByte(int field, int index, byte v) {
            assert valid(field, index, MPI.BYTE) : TYPE_MISMATCH;
            buffer.put(offset + field + index, v);
        }

        /** The char field at byte offset {@code field}. */
        protected final char getChar(int field) {
            assert valid(field, 0, MPI.CHAR) : TYPE_MISMATCH;
            return buffer.getChar(offset + field);
        }

        /** Element {@code index} of the char array at byte offset {@code field}. */
        protected final char getChar(int field, int index) {
            assert valid(field, index, MPI.CHAR) : TYPE_MISMATCH;
            return buffer.getChar(offset + field + index * 2);
        }

        protected final void putChar(int field, char v) {
            assert valid(field, 0, MPI.CHAR) : TYPE_MISMATCH;
            buffer.putChar(offset + field, v);
        }

        protected final void putChar(int field, int index, char v) {
            assert valid(field, index, MPI.CHAR) : TYPE_MISMATCH;
            buffer.putChar(offset + field + index * 2, v);
        }

        /** The short field at byte offset {@code field}. */
        protected final short getShort(int field) {
            assert valid(field, 0, MPI.SHORT) : TYPE_MISMATCH;
            return buffer.getShort(offset + field);
        }

        /** Element {@code index} of the short array at byte offset {@code field}. */
        protected final short getShort(int field, int index) {
            assert valid(field, index, MPI.SHORT) : TYPE_MISMATCH;
            return buffer.getShort(offset + field + index * 2);
        }

        protected final void putShort(int field, short v) {
            assert valid(field, 0, MPI.SHORT) : TYPE_MISMATCH;
            buffer.putShort(offset + field, v);
        }

        protected final void putShort(int field, int index, short v) {
            assert valid(field, index, MPI.SHORT) : TYPE_MISMATCH;
            buffer.putShort(offset + field + index * 2, v);
        }

        /** The int field at byte offset {@code field}. */
        protected final int getInt(int field) {
            assert valid(field, 0, MPI.INT) : TYPE_MISMATCH;
            return buffer.getInt(offset + field);
        }

        /** Element {@code index} of the int array at byte offset {@code field}. */
        protected final int getInt(int field, int index) {
            assert valid(field, index, MPI.INT) : TYPE_MISMATCH;
            return buffer.getInt(offset + field + index * 4);
        }

        protected final void putInt(int field, int v) {
            assert valid(field, 0, MPI.INT) : TYPE_MISMATCH;
            buffer.putInt(offset + field, v);
        }

        protected final void putInt(int field, int index, int v) {
            assert valid(field, index, MPI.INT) : TYPE_MISMATCH;
            buffer.putInt(offset + field + index * 4, v);
        }

        /** The long field at byte offset {@code field}. */
        protected final long getLong(int field) {
            assert valid(field, 0, MPI.LONG) : TYPE_MISMATCH;
            return buffer.getLong(offset + field);
        }

        /** Element {@code index} of the long array at byte offset {@code field}. */
        protected final long getLong(int field, int index) {
            assert valid(field, index, MPI.LONG) : TYPE_MISMATCH;
            return buffer.getLong(offset + field + index * 8);
        }

        protected final void putLong(int field, long v) {
            assert valid(field, 0, MPI.LONG) : TYPE_MISMATCH;
            buffer.putLong(offset + field, v);
        }

        protected final void putLong(int field, int index, long v) {
            assert valid(field, index, MPI.LONG) : TYPE_MISMATCH;
            buffer.putLong(offset + field + index * 8, v);
        }

        /** The float field at byte offset {@code field}. */
        protected final float getFloat(int field) {
            assert valid(field, 0, MPI.FLOAT) : TYPE_MISMATCH;
            return buffer.getFloat(offset + field);
        }

        /** Element {@code index} of the float array at byte offset {@code field}. */
        protected final float getFloat(int field, int index) {
            assert valid(field, index, MPI.FLOAT) : TYPE_MISMATCH;
            return buffer.getFloat(offset + field + index * 4);
        }

        protected final void putFloat(int field, float v) {
            assert valid(field, 0, MPI.FLOAT) : TYPE_MISMATCH;
            buffer.putFloat(offset + field, v);
        }

        protected final void putFloat(int field, int index, float v) {
            assert valid(field, index, MPI.FLOAT) : TYPE_MISMATCH;
            buffer.putFloat(offset + field + index * 4, v);
        }

        /** The double field at byte offset {@code field}. */
        protected final double getDouble(int field) {
            assert valid(field, 0, MPI.DOUBLE) : TYPE_MISMATCH;
            return buffer.getDouble(offset + field);
        }

        /** Element {@code index} of the double array at byte offset {@code field}. */
        protected final double getDouble(int field, int index) {
            assert valid(field, index, MPI.DOUBLE) : TYPE_MISMATCH;
            return buffer.getDouble(offset + field + index * 8);
        }

        protected final void putDouble(int field, double v) {
            assert valid(field, 0, MPI.DOUBLE) : TYPE_MISMATCH;
            buffer.putDouble(offset + field, v);
        }

        protected final void putDouble(int field, int index, double v) {
            assert valid(field, index, MPI.DOUBLE) : TYPE_MISMATCH;
            buffer.putDouble(offset + field + index * 8, v);
        }

        /** The boolean field at byte offset {@code field} (a 0/1 byte) *(ext)*. */
        protected final boolean getBoolean(int field) {
            return getBoolean(field, 0);
        }

        /** Element {@code index} of the boolean array at byte offset {@code field} *(ext)*. */
        protected final boolean getBoolean(int field, int index) {
            assert valid(field, index, MPI.BOOLEAN) : TYPE_MISMATCH;
            return buffer.get(offset + field + index) != 0;
        }

        protected final void putBoolean(int field, boolean v) {
            putBoolean(field, 0, v);
        }

        protected final void putBoolean(int field, int index, boolean v) {
            assert valid(field, index, MPI.BOOLEAN) : TYPE_MISMATCH;
            buffer.put(offset + field + index, (byte) (v ? 1 : 0));
        }

        /** Accessor of the struct field of type {@code struct} at byte offset {@code field}. */
        protected final <S extends Struct, D extends Struct.Data> D getData(S struct, int field) {
            Struct s = struct;
            assert valid(field, 0, s.datatype) : TYPE_MISMATCH;
            return s.newData(buffer, offset + field);
        }

        /** Accessor of element {@code index} of the struct array at byte offset {@code field}. */
        protected final <S extends Struct, D extends Struct.Data> D getData(S struct, int field, int index) {
            Struct s = struct;
            assert valid(field, index, s.datatype) : TYPE_MISMATCH;
            return s.newData(buffer, offset + field + index * s.extent);
        }

        /** The buffer starting at the field at byte offset {@code field}. */
        protected final ByteBuffer getBuffer(Datatype type, int field) {
            assert valid(field, 0, type) : TYPE_MISMATCH;
            int position = offset + field;
            return position == 0 ? buffer : MPI.slice(buffer, position);
        }

        /** The buffer starting at element {@code index} of the array field at byte offset {@code field}. */
        protected final ByteBuffer getBuffer(Datatype type, int field, int index) throws MPIException {
            assert valid(field, index, type) : TYPE_MISMATCH;
            int position = offset + field + index * type.getExtent() * type.baseBytes;
            return position == 0 ? buffer : MPI.slice(buffer, position);
        }
    }
}
