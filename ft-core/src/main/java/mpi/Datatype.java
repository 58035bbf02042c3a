package mpi;

/**
 * An MPI datatype. This release provides the predefined types for contiguous data; derived
 * types (vector, indexed, struct, ...) come with the datatype engine.
 */
public class Datatype implements Freeable, Cloneable {
    // base-type kinds (which Java array a type goes with)
    static final int K_NULL = 0, K_BYTE = 1, K_CHAR = 2, K_SHORT = 3, K_BOOLEAN = 4, K_INT = 5,
            K_LONG = 6, K_FLOAT = 7, K_DOUBLE = 8, K_PACKED = 9;

    final int kind;
    /** Size in bytes of one element of this type. */
    final int sizeBytes;
    /** Size of one base element (the unit in which array offsets and extents count). */
    final int baseBytes;
    private String name;

    Datatype(int kind, int sizeBytes, int baseBytes, String name) {
        this.kind = kind;
        this.sizeBytes = sizeBytes;
        this.baseBytes = baseBytes;
        this.name = name;
    }

    /** Number of base elements in one element of this type (2 for complex types). */
    final int baseCount() { return baseBytes == 0 ? 0 : sizeBytes / baseBytes; }

    /** Size of the type in buffer units (bytes for buffers of bytes, elements for arrays). */
    public int getSize() throws MPIException {
        checkNotNull();
        return sizeBytes;
    }

    /** Extent in buffer units; equals the size for predefined types. */
    public int getExtent() throws MPIException {
        checkNotNull();
        return baseCount();
    }

    public int getLb() throws MPIException {
        checkNotNull();
        return 0;
    }

    public int getTrueExtent() throws MPIException {
        return getExtent();
    }

    public int getTrueLb() throws MPIException {
        return getLb();
    }

    /** Predefined types are always committed. */
    public void commit() throws MPIException {
        checkNotNull();
    }

    /** Predefined types cannot be freed; as in MPI, that is an error. */
    @Override
    public void free() throws MPIException {
        throw MPIException.of(MPI.ERR_TYPE, "free: cannot free the predefined datatype " + name);
    }

    public void setName(String name) throws MPIException {
        checkNotNull();
        this.name = name;
    }

    public String getName() throws MPIException {
        return name;
    }

    public boolean isNull() {
        return kind == K_NULL;
    }

    private void checkNotNull() throws MPIException {
        if (kind == K_NULL) throw MPIException.of(MPI.ERR_TYPE, "the datatype is MPI.DATATYPE_NULL");
    }

    @Override
    public Datatype clone() {
        return new Datatype(kind, sizeBytes, baseBytes, name);
    }

    @Override
    public String toString() {
        return name;
    }
}
