package org.ftmpi.transport.shm;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.bytes.MappedBytes;

/**
 * One shared-memory file mapped read-write with Chronicle Bytes. Chronicle owns the mapping
 * (and unmaps it on {@link #close}); the transport reaches the same memory two ways:
 * {@link #words()} for ordered control words and {@link #segment()}, a {@code MemorySegment}
 * view for bulk copies ({@code MemorySegment.copy} measured as fast as memcpy, Chronicle's
 * own bulk read/write 20-35% slower).
 *
 * <p><b>Note:</b> not thread-safe; owned by the transport (engine progress lock).
 */
final class MappedRegion implements AutoCloseable {
    private final Path path;
    private final MappedBytes bytes;
    private final MemorySegment segment;
    private final ControlWords words;

    private MappedRegion(Path path, MappedBytes bytes, long size, boolean unsafeAccess) {
        this.path = path;
        this.bytes = bytes;
        // A fresh MappedBytes: use its BytesStore with absolute offsets (the Bytes' own
        // read/write positions are not used).
        BytesStore<?, ?> store = bytes.bytesStore();
        long address = store.addressForRead(0);
        this.segment = MemorySegment.ofAddress(address).reinterpret(size);
        this.words = unsafeAccess ? new ChronicleControlWords(store) : new SegmentControlWords(segment);
    }

    /**
     * Creates a new file of {@code size} bytes, mode 0600 (fails if it exists), reserves its
     * space up front and maps it.
     */
    static MappedRegion create(Path path, long size, boolean unsafeAccess) throws IOException {
        try {
            Files.createFile(path, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (FileAlreadyExistsException e) {
            throw new IOException("shared-memory file " + path + " already exists (a stale job with the same id?)", e);
        }
        try {
            int rc = Posix.fallocate(path, size);
            if (rc != 0) {
                throw new IOException("cannot reserve " + size + " bytes for " + path + ": " + switch (rc) {
                    case Posix.ENOSPC -> "no space left in " + path.getParent()
                            + " (free some, give it more room, or use smaller rings: --opt shm-ring-bytes=N)";
                    case Posix.EFBIG -> "the file size limit (ulimit -f) is below " + size + " bytes";
                    default -> "posix_fallocate error " + rc;
                });
            }
            return map(path, size, unsafeAccess);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(path);
            throw e;
        }
    }

    /** Maps an existing file created by a peer; its size must be {@code size}. */
    static MappedRegion open(Path path, long size, boolean unsafeAccess) throws IOException {
        long actual = Files.size(path);
        if (actual != size) {
            throw new IOException("shared-memory file " + path + " has " + actual + " bytes, expected " + size);
        }
        return map(path, size, unsafeAccess);
    }

    private static MappedRegion map(Path path, long size, boolean unsafeAccess) throws IOException {
        MappedBytes b = MappedBytes.singleMappedBytes(path.toFile(), size);
        try {
            return new MappedRegion(path, b, size, unsafeAccess);
        } catch (RuntimeException e) {
            b.releaseLast();
            throw e;
        }
    }

    Path path() { return path; }

    MemorySegment segment() { return segment; }

    ControlWords words() { return words; }

    @Override
    public void close() {
        bytes.releaseLast();
    }
}
