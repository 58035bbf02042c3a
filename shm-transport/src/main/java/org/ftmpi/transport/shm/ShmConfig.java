package org.ftmpi.transport.shm;

import java.io.IOException;
import java.nio.file.Path;
import org.ftmpi.runtime.JobInfo;
import org.ftmpi.runtime.SharedMemoryFiles;
import org.ftmpi.transport.FrameHeader;

/**
 * The shared-memory transport's settings, from job options ({@code bin/ftmpirun --opt K=V}):
 * {@code shm-dir} (default /dev/shm), {@code shm-ring-bytes} (per direction and pair; a power
 * of two; default 1 MiB up to 16 ranks, else 256 KiB), {@code shm-cma} ({@code auto} or
 * {@code off}), {@code shm-unsafe} ({@code true}: Chronicle control words; {@code false}: JDK
 * VarHandles only), {@code shm-cma-batch} (most PINNED records read with one process_vm_readv,
 * 1 to {@value Posix.CmaScratch#IOVECS}; default {@value Posix.CmaScratch#IOVECS}). Thresholds
 * follow from the ring size.
 *
 * @param eagerLimitBytes  largest eager payload: min(32 KiB, max fragment)
 * @param maxFragmentBytes largest DATA fragment: min(128 KiB, ring / 8), so that eight are in
 *                         flight (copy-in and copy-out overlap)
 * @param singleCopyMinBytes smallest fragment moved with process_vm_readv: min(64 KiB, max fragment)
 * @param cmaBatchPieces   most PINNED records read with one process_vm_readv (job option shm-cma-batch)
 */
record ShmConfig(Path dir, int ringBytes, int eagerLimitBytes, int maxFragmentBytes,
                 int singleCopyMinBytes, boolean cmaAllowed, boolean unsafeAccess, int cmaBatchPieces) {

    /**
     * Largest piece of a message moved by one process_vm_readv: each call costs about 1.3 us
     * besides the copy (CPU time measured on this 2-vCPU VM: 1 MiB read whole at 12.5-13 GB/s,
     * in 128 KiB calls at 11.2-11.8), so a message up to this size is read with one call, as
     * vader does; the bound keeps the receiver from spending more than ~0.3 ms in one call.
     */
    static final int MAX_PINNED_BYTES = 4 << 20;

    static ShmConfig from(JobInfo job) throws IOException {
        Path dir = SharedMemoryFiles.dir(job.options());
        int dflt = job.size() <= 16 ? 1 << 20 : 1 << 18;
        String ringText = job.option("shm-ring-bytes", Integer.toString(dflt));
        int ring;
        try {
            ring = Integer.parseInt(ringText.trim());
        } catch (NumberFormatException e) {
            throw new IOException("job option shm-ring-bytes=" + ringText + " is not a number");
        }
        if (ring < 64 * 1024 || Integer.bitCount(ring) != 1 || ring > (1 << 28)) {
            throw new IOException("job option shm-ring-bytes=" + ringText
                    + " must be a power of two between 65536 and 268435456");
        }
        int maxFragment = Math.min(128 * 1024, ring / 8);
        int eager = Math.min(32 * 1024, maxFragment);
        int singleCopyMin = Math.min(64 * 1024, maxFragment);
        String cma = job.option("shm-cma", "auto");
        if (!cma.equals("auto") && !cma.equals("off")) {
            throw new IOException("job option shm-cma=" + cma + " must be 'auto' or 'off'");
        }
        String unsafe = job.option("shm-unsafe", "true");
        if (!unsafe.equals("true") && !unsafe.equals("false")) {
            throw new IOException("job option shm-unsafe=" + unsafe + " must be 'true' or 'false'");
        }
        if (!RingDescriptor.validCapacity(ring, maxFragment + FrameHeader.BYTES)) {
            throw new IOException("ring of " + ring + " bytes cannot hold four fragments of " + maxFragment);
        }
        String batchText = job.option("shm-cma-batch", Integer.toString(Posix.CmaScratch.IOVECS));
        int batch;
        try {
            batch = Integer.parseInt(batchText.trim());
        } catch (NumberFormatException e) {
            batch = -1;
        }
        if (batch < 1 || batch > Posix.CmaScratch.IOVECS) {
            throw new IOException("job option shm-cma-batch=" + batchText + " must be a number from 1 to "
                    + Posix.CmaScratch.IOVECS);
        }
        return new ShmConfig(dir, ring, eager, maxFragment, singleCopyMin, cma.equals("auto"),
                unsafe.equals("true"), batch);
    }
}
