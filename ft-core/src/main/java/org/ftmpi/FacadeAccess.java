package org.ftmpi;

import java.util.function.Function;
import mpi.Intracomm;
import org.ftmpi.p2p.Engine;

/**
 * Lets code outside package {@code mpi} (the threads-as-ranks {@link LocalJob}) create
 * communicators bound to an engine, without widening the public {@code mpi} API.
 */
public final class FacadeAccess {
    private static volatile Function<Engine, Intracomm> worldFactory;

    private FacadeAccess() {}

    /** Called once by {@code mpi.MPI}'s static initialiser. */
    public static void install(Function<Engine, Intracomm> factory) {
        if (worldFactory == null) worldFactory = factory;
    }

    static Intracomm world(Engine e) {
        if (worldFactory == null) {
            // Initialising mpi.MPI installs the factory.
            mpi.MPI.COMM_WORLD.hashCode();
        }
        return worldFactory.apply(e);
    }
}
