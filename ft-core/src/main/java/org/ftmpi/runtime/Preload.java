package org.ftmpi.runtime;

/**
 * Loads and initialises classes ahead of need, so that a path that runs first at a failure (a
 * survivor's recovery, the controller's handling of a death, a warm spare's takeover) does not
 * read them from a jar or the runtime image then (docs/fault-tolerance.md, "Cold failure path").
 */
public final class Preload {
    private Preload() {}

    /** Loads and initialises each class named that {@code loader} finds; a name it does not find is skipped (loaded on demand). */
    public static void classes(ClassLoader loader, String... names) {
        for (String c : names) {
            try {
                Class.forName(c, true, loader);
            } catch (ClassNotFoundException | LinkageError e) {
                // not on this class path (a test without the mpi facade, another JDK): loaded on demand
            }
        }
    }
}
