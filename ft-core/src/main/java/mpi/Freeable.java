package mpi;

/** An MPI object that can be freed. */
public interface Freeable {
    void free() throws MPIException;
}
