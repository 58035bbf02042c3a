package org.ftmpi.transport.shm;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import org.ftmpi.runtime.JobInfo;
import org.ftmpi.runtime.SharedMemoryFiles;
import org.ftmpi.transport.Transport;
import org.ftmpi.transport.TransportContext;
import org.ftmpi.transport.TransportProvider;

/**
 * Shared memory between ranks of one host (Linux): the engine prefers it to TCP for every peer
 * it reaches (exclusivity 100 against TCP's 10). Unavailable, so that TCP carries everything,
 * when the platform, the directory or Chronicle Bytes (JVM flags in conf/rank-jvm.options)
 * are not usable; {@link #unavailabilityCause} says which.
 */
public final class ShmTransportProvider implements TransportProvider {

    @Override public String name() { return "shm"; }

    @Override
    public String unavailabilityCause(TransportContext context) {
        return unavailabilityCause(context.job(), "probe-" + context.job().rank());
    }

    /**
     * A warm spare's endpoint: the same bytes its transport publishes once open after the takeover
     * (the domain and the pid), so the ranks can re-make their pairs with it; null when shared
     * memory is not usable in this process.
     */
    @Override
    public byte[] spareEndpoint(JobInfo job) {
        long pid = ProcessHandle.current().pid();
        if (unavailabilityCause(job, "probe-spare-" + pid) != null) return null;
        boolean probed = Cma.WORKS; // now, not in the MPI_Init of the rank this spare takes over
        try {
            return ShmTransport.endpoint(hostKey(ShmConfig.from(job).dir()), pid);
        } catch (IOException e) {
            return null;
        }
    }

    private static String unavailabilityCause(JobInfo job, String probeName) {
        if (!System.getProperty("os.name", "").toLowerCase().contains("linux")) {
            return "shared-memory transport needs Linux (os.name " + System.getProperty("os.name") + ")";
        }
        if (Posix.UNAVAILABLE != null) return Posix.UNAVAILABLE;
        ShmConfig config;
        try {
            config = ShmConfig.from(job);
        } catch (IOException e) {
            return null; // open() reports the bad option as an error
        }
        Path dir = config.dir();
        if (!Files.isDirectory(dir) || !Files.isWritable(dir)) return dir + " is not a writable directory";
        return chronicleProbe(dir, job.jobId(), probeName, config.unsafeAccess());
    }

    /** Maps a small file with Chronicle Bytes once, to find missing JVM flags before use. */
    private static String chronicleProbe(Path dir, long jobId, String probeName, boolean unsafe) {
        Path p = dir.resolve(SharedMemoryFiles.prefix(jobId) + probeName);
        try {
            try (MappedRegion m = MappedRegion.create(p, 64 * 1024, unsafe)) {
                m.words().putLongRelease(0, 1);
                if (m.words().getLongAcquire(0) != 1) return "Chronicle Bytes probe read back a wrong value";
            } finally {
                Files.deleteIfExists(p);
            }
            return null;
        } catch (IOException | RuntimeException | LinkageError e) {
            return "Chronicle Bytes cannot map " + dir + " (JVM flags of conf/rank-jvm.options missing?): " + e;
        }
    }

    @Override
    public Transport open(TransportContext context) throws IOException {
        ShmConfig config = ShmConfig.from(context.job());
        return new ShmTransport(context.job(), context.sink(), config, hostKey(config.dir()), Cma.WORKS);
    }

    /**
     * {@link #cmaWorksHere}, probed once per process. A warm spare probes it ahead ({@link
     * #spareEndpoint}): the first call of the downcall spins its method-handle forms, which a
     * replacement's MPI_Init did after the takeover (session 25, {@code -XX:LogClassLoadingCauseFor}).
     */
    private static final class Cma {
        static final boolean WORKS = cmaWorksHere();
    }

    /**
     * Identifies the shared-memory domain: kernel boot id plus device and inode of the
     * directory, so that containers with their own /dev/shm are not taken for one host.
     */
    static String hostKey(Path dir) throws IOException {
        String boot;
        try {
            boot = Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim();
        } catch (IOException e) {
            boot = java.net.InetAddress.getLocalHost().getHostName();
        }
        Object dev = Files.getAttribute(dir, "unix:dev");
        Object ino = Files.getAttribute(dir, "unix:ino");
        return boot + ":" + dev + ":" + ino;
    }

    /**
     * Whether process_vm_readv works at all here (seccomp filters, kernels without CMA): reads
     * a token of this very process. Whether a peer may be read (ptrace scope, EPERM) is probed
     * per pair at connect.
     */
    static boolean cmaWorksHere() {
        if (Posix.UNAVAILABLE != null) return false;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment src = a.allocate(8, 8);
            MemorySegment dst = a.allocate(8, 8);
            src.set(ValueLayout.JAVA_LONG, 0, 0x5eed_f00d_cafeL);
            Posix.CmaScratch s = new Posix.CmaScratch(a);
            return Posix.processVmRead(s, ProcessHandle.current().pid(), dst, src.address(), 8) == 0
                    && dst.get(ValueLayout.JAVA_LONG, 0) == 0x5eed_f00d_cafeL;
        }
    }
}
