package mpi;

/** The MPI standard version implemented, returned by {@link MPI#getVersion()} (as in Open MPI's bindings). */
public final class Version {
    private final int version;
    private final int subVersion;

    Version(int version, int subVersion) {
        this.version = version;
        this.subVersion = subVersion;
    }

    /** The major version (MPI_VERSION). */
    public int getVersion() {
        return version;
    }

    /** The minor version (MPI_SUBVERSION). */
    public int getSubVersion() {
        return subVersion;
    }
}
