package org.ftmpi;

/** Library version, wire version. */
public final class Version {
    public static final String LIBRARY = "FT-MPI/J 0.1.0";
    /** Version byte carried by every control and data frame. */
    public static final int WIRE = 1;
    private Version() {}
}
