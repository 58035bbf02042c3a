package mpi;

/** {@code MPI_Status}: source, tag, error, cancellation and size of a completed operation. */
public final class Status {
    final int source;
    final int tag;
    final int error;
    final boolean cancelled;
    final long bytes;
    int index = MPI.UNDEFINED;

    Status(int source, int tag, int error, boolean cancelled, long bytes) {
        this.source = source;
        this.tag = tag;
        this.error = error;
        this.cancelled = cancelled;
        this.bytes = bytes;
    }

    /** Number of received entries of {@code datatype}, or {@code MPI.UNDEFINED} if not whole. */
    public int getCount(Datatype datatype) throws MPIException {
        if (datatype == null) throw MPIException.of(MPI.ERR_TYPE, "getCount: datatype is null");
        datatype.checkComm("getCount");
        if (datatype.sizeBytes == 0) return bytes == 0 ? 0 : MPI.UNDEFINED;
        if (bytes % datatype.sizeBytes != 0) return MPI.UNDEFINED;
        long n = bytes / datatype.sizeBytes;
        return n > Integer.MAX_VALUE ? MPI.UNDEFINED : (int) n;
    }

    /** Number of received basic elements of {@code datatype}. */
    public int getElements(Datatype datatype) throws MPIException {
        if (datatype == null) throw MPIException.of(MPI.ERR_TYPE, "getElements: datatype is null");
        datatype.checkComm("getElements");
        if (datatype.derived || datatype.pairKind != 0) return datatype.elements(bytes);
        if (datatype.baseBytes == 0) return bytes == 0 ? 0 : MPI.UNDEFINED;
        if (bytes % datatype.baseBytes != 0) return MPI.UNDEFINED;
        return (int) (bytes / datatype.baseBytes);
    }

    /** Whether the operation was cancelled. */
    public boolean isCancelled() throws MPIException {
        return cancelled;
    }

    public int getSource() { return source; }

    public int getTag() { return tag; }

    public int getError() { return error; }

    public int getIndex() { return index; }

    @Override
    public String toString() {
        return "Status[source=" + source + ", tag=" + tag + ", error=" + error + ", bytes=" + bytes
                + (cancelled ? ", cancelled" : "") + "]";
    }
}
