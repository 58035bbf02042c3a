package org.ftmpi.runtime.wire;

/** Control frame types (the type byte). See docs/launcher.md for the payload layouts. */
public final class FrameType {
    /** Client to controller: client nonce (32 bytes). */
    public static final int AUTH_HELLO = 1;
    /** Controller to client: controller nonce (32 bytes), controller proof (32 bytes). */
    public static final int AUTH_CHALLENGE = 2;
    /** Client to controller: client proof (32 bytes). */
    public static final int AUTH_RESPONSE = 3;
    /** Controller to client: authentication accepted (empty). */
    public static final int AUTH_OK = 4;

    /** Rank to controller: rank, procId, host, endpoints. */
    public static final int REGISTER = 10;
    /** Controller to rank: the complete endpoint table. */
    public static final int TABLE = 11;
    /** Rank to controller: reached MPI.Finalize (empty). */
    public static final int FINALIZE = 12;
    /** Controller to rank: every live rank reached MPI.Finalize (empty). */
    public static final int FINALIZE_DONE = 13;
    /** Rank to controller: abort the job (exit code, reason). */
    public static final int ABORT_REQUEST = 14;
    /** Controller to rank: a process died (rank, procId, how). */
    public static final int PROCESS_FAILED = 15;
    /** Controller to rank: the job is being aborted (exit code, reason). */
    public static final int ABORT = 16;
    /** Rank to controller: this rank's heartbeat observer declared a rank failed (rank, procId, how). */
    public static final int FAILURE_REPORT = 17;
    /**
     * Controller to rank (comm-mode rebuild): the replacement of a failed rank registered (rank,
     * its new procId, host, endpoints; the layout of REGISTER).
     */
    public static final int REPLACED = 18;
    /**
     * Warm spare to controller: a spare JVM is ready (rank -1, its procId, host, and the
     * endpoints it listens at already; the layout of REGISTER).
     */
    public static final int SPARE = 19;
    /** Controller to warm spare: take over this rank (rank). */
    public static final int ASSIGN = 20;
    /**
     * Controller to rank: a warm spare is ready (the spare's SPARE, passed on); the rank may
     * connect to it ahead of need.
     */
    public static final int SPARE_READY = 21;
    /** Controller to rank: the warm spare (procId) died or ended; connections made to it ahead are closed. */
    public static final int SPARE_GONE = 22;
    /**
     * Replacement to controller, no payload: it is alive. A REBUILD replacement takes no part in
     * the heartbeat ring; the controller declares it failed when nothing came for hb-timeout.
     */
    public static final int BEAT = 23;

    private FrameType() {}

    public static String name(int type) {
        return switch (type) {
            case AUTH_HELLO -> "AUTH_HELLO";
            case AUTH_CHALLENGE -> "AUTH_CHALLENGE";
            case AUTH_RESPONSE -> "AUTH_RESPONSE";
            case AUTH_OK -> "AUTH_OK";
            case REGISTER -> "REGISTER";
            case TABLE -> "TABLE";
            case FINALIZE -> "FINALIZE";
            case FINALIZE_DONE -> "FINALIZE_DONE";
            case ABORT_REQUEST -> "ABORT_REQUEST";
            case PROCESS_FAILED -> "PROCESS_FAILED";
            case ABORT -> "ABORT";
            case FAILURE_REPORT -> "FAILURE_REPORT";
            case REPLACED -> "REPLACED";
            case SPARE -> "SPARE";
            case ASSIGN -> "ASSIGN";
            case SPARE_READY -> "SPARE_READY";
            case SPARE_GONE -> "SPARE_GONE";
            case BEAT -> "BEAT";
            default -> "type " + type;
        };
    }
}
