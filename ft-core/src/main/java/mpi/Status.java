package mpi;

/** {@code MPI_Status}: source, tag, error, cancellation and size of a completed operation. */
public final class Status {
    final int source;
    final int tag;
    final int error;
    boolean cancelled;
    /** Bytes received (or set by {@link #setElements}). */
    long bytes;
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

    /** Number of received basic elements of {@code datatype}, or {@code MPI.UNDEFINED}. */
    public int getElements(Datatype datatype) throws MPIException {
        long n = elements(datatype, "getElements");
        return n > Integer.MAX_VALUE ? MPI.UNDEFINED : (int) n;
    }

    /** MPI_GET_ELEMENTS_X: {@link #getElements} as a {@link Count} (not limited to an {@code int}). */
    public Count getElementsX(Datatype datatype) throws MPIException {
        return new Count(elements(datatype, "getElementsX"));
    }

    private long elements(Datatype datatype, String op) throws MPIException {
        if (datatype == null) throw MPIException.of(MPI.ERR_TYPE, op + ": datatype is null");
        datatype.checkComm(op);
        return datatype.elements(bytes);
    }

    /**
     * MPI_STATUS_SET_ELEMENTS: makes {@link #getElements getElements(datatype)} return
     * {@code count} (and {@link #getCount} the matching number of whole entries).
     */
    public void setElements(Datatype datatype, int count) throws MPIException {
        bytes = elementBytes(datatype, count, "setElements");
    }

    /** MPI_STATUS_SET_ELEMENTS_X: {@link #setElements} with a {@link Count}. */
    public void setElementsX(Datatype datatype, Count count) throws MPIException {
        if (count == null) throw MPIException.of(MPI.ERR_COUNT, "setElementsX: count is null");
        bytes = elementBytes(datatype, count.getCount(), "setElementsX");
    }

    private static long elementBytes(Datatype datatype, long count, String op) throws MPIException {
        if (datatype == null) throw MPIException.of(MPI.ERR_TYPE, op + ": datatype is null");
        datatype.checkComm(op);
        if (count < 0) throw MPIException.of(MPI.ERR_COUNT, op + ": count " + count + " is negative");
        return datatype.bytesOfElements(count);
    }

    /** Whether the operation was cancelled. */
    public boolean isCancelled() throws MPIException {
        return cancelled;
    }

    /** MPI_STATUS_SET_CANCELLED: sets what {@link #isCancelled} returns. */
    public void setCancelled(boolean flag) throws MPIException {
        cancelled = flag;
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
