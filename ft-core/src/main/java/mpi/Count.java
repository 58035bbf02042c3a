package mpi;

/**
 * {@code MPI_Count}: a (possibly large) count, as Open MPI's Java bindings pass it to and from
 * {@link Status#getElementsX} and {@link Status#setElementsX}. A mutable holder of a
 * {@code long}; equal when the values are equal, ordered by value.
 */
@SuppressWarnings("rawtypes") // Open MPI's class implements the raw Comparable; kept for source compatibility
public final class Count implements Comparable {
    private long count;

    public Count(long count) {
        this.count = count;
    }

    /** The value. */
    public long getCount() {
        return count;
    }

    /** Sets the value. */
    public void setCount(long count) {
        this.count = count;
    }

    @Override
    public boolean equals(Object obj) {
        return obj instanceof Count c && c.count == count;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(count);
    }

    /** Compares by value; any object that is not a {@code Count} orders before this one. */
    @Override
    public int compareTo(Object obj) {
        return obj instanceof Count c ? Long.compare(count, c.count) : 1;
    }

    @Override
    public String toString() {
        return Long.toString(count);
    }
}
