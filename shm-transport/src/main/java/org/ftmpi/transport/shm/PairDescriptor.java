package org.ftmpi.transport.shm;

import org.ftmpi.runtime.SharedMemoryFiles;

/**
 * Layout of the file shared by one pair of ranks {@code lo < hi} on one host:
 * {@code <shm-dir>/ftmpi-<job id>-<lo>-<hi>}, mode 0600, created and space-reserved by
 * {@code lo}, mapped by both, unlinked by {@code lo} as soon as {@code hi} has attached (the
 * mappings stay valid; a job killed before that point is cleaned up by the launcher, which
 * removes every file with the job's prefix).
 *
 * <p>After FT-MPI REBUILD a survivor and the replacement of a rank get a fresh file,
 * {@code ftmpi-<job id>-<lo>-<hi>-p<replacement's process id>} (process ids are never reused, so
 * every incarnation has its own file and no ring of the old process is ever read), created by
 * the survivor under the name plus {@code .new} and renamed when its magic word is set, mapped
 * and unlinked by the replacement. A survivor that cannot make it leaves the name plus {@code
 * .declined} (empty) instead, and both sides use TCP.
 *
 * <pre>
 *  +--------------------------------------------------------------+ 0
 *  | magic 'FTSH' (int) release-stored last by lo when all is set  |
 *  | layout version (int)                                          | 4
 *  | job id (long)                                                 | 8
 *  | ring capacity (int) | lo rank (int) | hi rank (int) | (pad)   | 16
 *  | salt (int): random, mixed into every record stamp             | 32
 *  +--------------------------------------------------------------+ 64
 *  | side lo (64 bytes), see below                                 |
 *  +--------------------------------------------------------------+ 128
 *  | side hi (64 bytes)                                            |
 *  +--------------------------------------------------------------+ 192
 *  | (reserved)                                                    |
 *  +--------------------------------------------------------------+ 512 = RINGS_OFFSET
 *  | ring lo -> hi  (RingDescriptor, 512 + capacity bytes)         |
 *  +--------------------------------------------------------------+
 *  | ring hi -> lo  (RingDescriptor, 512 + capacity bytes)         |
 *  +--------------------------------------------------------------+ rounded up to 64 KiB
 *
 *  side block:
 *  +---------------------------+ 0   pid (long)
 *  | state (int)               | 8   ATTACHED (1) once mapped, CLOSED (2) on close or
 *  |                           |     when it found the pair broken (release-store)
 *  | cma result (int)          | 12  0 = not yet; 1 = this side read the other side's probe
 *  |                           |     with process_vm_readv; 2 = it could not
 *  | probe address (long)      | 16  native address of an 8-byte token in this process
 *  | probe token (long)        | 24  the token's value
 *  +---------------------------+
 * </pre>
 */
final class PairDescriptor {
    static final int MAGIC = 0x48535446; // "FTSH" little-endian
    static final int LAYOUT_VERSION = 2;

    static final int MAGIC_OFFSET = 0;
    static final int VERSION_OFFSET = 4;
    static final int JOB_ID_OFFSET = 8;
    static final int CAPACITY_OFFSET = 16;
    static final int LO_RANK_OFFSET = 20;
    static final int HI_RANK_OFFSET = 24;
    static final int SALT_OFFSET = 32;
    static final int SIDE_OFFSET = 64;
    static final int SIDE_BYTES = 64;
    static final int RINGS_OFFSET = 512;

    static final int SIDE_PID = 0;
    static final int SIDE_STATE = 8;
    static final int SIDE_CMA_RESULT = 12;
    static final int SIDE_PROBE_ADDRESS = 16;
    static final int SIDE_PROBE_TOKEN = 24;

    static final int STATE_ATTACHED = 1;
    static final int STATE_CLOSED = 2;
    static final int CMA_OK = 1;
    static final int CMA_FAILED = 2;

    private static final long FILE_ROUNDING = 64 * 1024;

    private PairDescriptor() {}

    /** Offset of a side block: side 0 = lo, 1 = hi. */
    static long side(int side) {
        return SIDE_OFFSET + (long) side * SIDE_BYTES;
    }

    /** Offset of the ring written by {@code side} (0 = lo -> hi, 1 = hi -> lo). */
    static long ring(int side, int capacity) {
        return RINGS_OFFSET + side * RingDescriptor.ringBytes(capacity);
    }

    static long fileBytes(int capacity) {
        long raw = RINGS_OFFSET + 2 * RingDescriptor.ringBytes(capacity);
        return (raw + FILE_ROUNDING - 1) / FILE_ROUNDING * FILE_ROUNDING;
    }

    /** Suffix of a re-made pair file while the survivor writes it. */
    static final String NEW_SUFFIX = ".new";
    /** Suffix of the empty marker a survivor leaves when it could not re-make the pair. */
    static final String DECLINED_SUFFIX = ".declined";

    /** File name of the pair's segment re-made for replacement process {@code procId} (REBUILD). */
    static String replacementFileName(String jobPrefix, int lo, int hi, long procId) {
        return fileName(jobPrefix, lo, hi) + "-p" + procId;
    }

    /**
     * File name of the pair file process {@code makerProcId} makes ahead of need for warm spare
     * {@code spareProcId} (reserved and mapped, header not written; renamed to {@link
     * #replacementFileName} when the spare takes over a rank of this host). Named after the
     * maker's process id, not its rank: the launcher removes a dead maker's files ({@link
     * SharedMemoryFiles#removeSpareFilesOf}) while the rank's replacement may make its own.
     */
    static String spareFileName(long jobId, long makerProcId, long spareProcId) {
        return SharedMemoryFiles.spareFilePrefix(jobId, makerProcId) + "p" + spareProcId;
    }

    /** File name of the pair's segment. */
    static String fileName(String jobPrefix, int lo, int hi) {
        return jobPrefix + lo + "-" + hi;
    }
}
