package org.ftmpi.runtime;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;

/** Downcalls into the C library through the FFM API ({@link Signals}, {@link Binding}). */
final class Libc {
    private Libc() {}

    /**
     * The C library's function {@code name} with signature {@code descriptor}, or null when it is
     * absent or native access is not allowed (callers then fall back or do without).
     */
    static MethodHandle downcall(String name, FunctionDescriptor descriptor) {
        try {
            Linker linker = Linker.nativeLinker();
            return linker.defaultLookup().find(name).map(f -> linker.downcallHandle(f, descriptor)).orElse(null);
        } catch (RuntimeException | Error e) {
            return null;
        }
    }
}
