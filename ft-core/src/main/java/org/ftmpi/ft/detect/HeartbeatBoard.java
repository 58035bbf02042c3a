package org.ftmpi.ft.detect;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The heartbeat board of one job on one host: a shared-memory file ({@code <shm dir>/ftmpi-<job
 * id>-hb}, mode 0600, removed with the job's other shared-memory files) with a 64-byte slot per
 * rank, through which the detectors of ranks on the same host beat and signal mail without a
 * system call or a MAC:
 * <pre>
 *   slot r:  0 i64 process id of the rank's current process (written when it opens the board)
 *            8 i64 its latest beat: the detector sequence number of that HEARTBEAT (release/acquire)
 *           16 i64 mail: incremented by a same-host sender after each datagram it sent to rank r
 * </pre>
 * Trust is the file's: only the job's user can open it, as the shared-memory transport's rings.
 *
 * <p><b>Note:</b> thread-safe (single-word atomic accesses).
 */
final class HeartbeatBoard {
    static final int SLOT_BYTES = 64;
    private static final long PROC = 0, BEAT = 8, MAIL = 16;
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final java.util.Set<java.nio.file.attribute.PosixFilePermission> OWNER_RW =
            PosixFilePermissions.fromString("rw-------");

    private final MemorySegment map;
    private final int slots;

    private HeartbeatBoard(MemorySegment map, int slots) {
        this.map = map;
        this.slots = slots;
    }

    /** A board in this process's heap (the detector's warm-up). */
    static HeartbeatBoard onHeap(int slots) {
        return new HeartbeatBoard(MemorySegment.ofArray(new long[slots * SLOT_BYTES / 8]), slots);
    }

    /** The board file of {@code jobId} in {@code dir}. */
    static Path file(Path dir, long jobId) {
        return dir.resolve(org.ftmpi.runtime.SharedMemoryFiles.prefix(jobId) + "hb");
    }

    /**
     * Opens the board, creating it (mode 0600) if this is the host's first rank to get here, and
     * claims slot {@code me} for process {@code procId}.
     */
    static HeartbeatBoard open(Path file, int slots, int me, long procId) throws IOException {
        if (slots < 1 || me < 0 || me >= slots) throw new IllegalArgumentException("slot " + me + " of " + slots);
        long size = (long) SLOT_BYTES * slots;
        try (FileChannel ch = FileChannel.open(file, java.util.Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE), PosixFilePermissions.asFileAttribute(OWNER_RW))) {
            if (!Files.getPosixFilePermissions(file).equals(OWNER_RW)) throw new IOException(file + ": not mode 0600");
            // ranks of the host may size it at once: each writes the same last byte (zeros)
            if (ch.size() < size) ch.write(ByteBuffer.allocate(1), size - 1);
            MemorySegment m = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, Arena.ofAuto());
            HeartbeatBoard b = new HeartbeatBoard(m, slots);
            LONG.setRelease(m, b.offset(me) + PROC, procId);
            return b;
        }
    }

    private long offset(int rank) {
        if (rank < 0 || rank >= slots) throw new IndexOutOfBoundsException("rank " + rank + " of " + slots);
        return (long) SLOT_BYTES * rank;
    }

    long procId(int rank) {
        return (long) LONG.getAcquire(map, offset(rank) + PROC);
    }

    void beat(int rank, long seq) {
        LONG.setRelease(map, offset(rank) + BEAT, seq);
    }

    long beatOf(int rank) {
        return (long) LONG.getAcquire(map, offset(rank) + BEAT);
    }

    /** Tells {@code rank} that a datagram for it was sent (call after the send). */
    void mail(int rank) {
        LONG.getAndAdd(map, offset(rank) + MAIL, 1L);
    }

    long mailOf(int rank) {
        return (long) LONG.getAcquire(map, offset(rank) + MAIL);
    }
}
