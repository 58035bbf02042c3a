package org.ftmpi.ckpt.rs;

import java.util.Optional;

/**
 * Chooses the kernel. The vector kernel is referenced only by name and loaded reflectively after
 * {@code ModuleLayer.boot().findModule("jdk.incubator.vector")} says the module is present, so this
 * package links and runs in a JVM started without {@code --add-modules jdk.incubator.vector}.
 *
 * <p>System properties: {@code ftmpi.rs.kernel=auto|vector|scalar} (default auto) and
 * {@code ftmpi.rs.vectorBits=0|128|256|512} (default 0 = the platform's preferred species).
 */
final class Kernels {
    private static final String VECTOR_CLASS = "org.ftmpi.ckpt.rs.VectorKernel";
    private static volatile Optional<Kernel> vector;

    private Kernels() {}

    static boolean vectorModulePresent() {
        return ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent();
    }

    /** The vector kernel with the configured width, or empty if the module is absent or unusable. */
    static Optional<Kernel> vector() {
        Optional<Kernel> v = vector;
        if (v == null) {
            v = Optional.ofNullable(loadVector());
            vector = v;
        }
        return v;
    }

    /** Loads the vector kernel, or null if not possible. */
    static Kernel loadVector() {
        if (!vectorModulePresent()) return null;
        try {
            Class<?> c = Class.forName(VECTOR_CLASS, true, Kernels.class.getClassLoader());
            return (Kernel) c.getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException | LinkageError | IllegalStateException e) {
            return null;
        }
    }

    static Kernel select(ReedSolomon.Backend backend) {
        return switch (backend) {
            case SCALAR -> ScalarKernel.INSTANCE;
            case VECTOR -> vector().orElseThrow(() -> new ErasureCodeException(
                    "backend: VECTOR requested but jdk.incubator.vector is not available "
                            + "(start the JVM with --add-modules jdk.incubator.vector)"));
            case AUTO -> {
                String p = System.getProperty("ftmpi.rs.kernel", "auto");
                if (p.equalsIgnoreCase("scalar")) yield ScalarKernel.INSTANCE;
                yield vector().orElse(ScalarKernel.INSTANCE);
            }
        };
    }
}
