package org.ftmpi.p2p;

import java.lang.foreign.MemorySegment;

/**
 * A point-to-point operation in flight. Fields are written by the thread holding the engine's
 * progress lock; {@link #complete} is the publishing write (volatile), after which the status
 * fields are stable and any thread may read them.
 */
public final class Request extends MatchList.Link {
    /** COLL: a non-blocking collective, completed by its schedule ({@link Engine#externalRequest}). */
    public enum Kind { SEND, RECV, COLL }

    /** Send modes. */
    public static final int STANDARD = 0, SYNC = 1, READY = 2, BUFFERED = 3;

    Kind kind;
    final Engine engine;
    /** Unique per engine and per use: a request taken from the engine's pool gets a new id. */
    long id;
    /** In a pool of completed requests ({@link Engine#recycle}); only the pool's thread touches it. */
    boolean pooled;

    // matching envelope (comm-relative ranks)
    int context;
    int peer;          // SEND: destination rank in comm; RECV: source or ANY_SOURCE
    int peerWorld;     // world rank of the specific peer, or -1 for ANY_SOURCE
    int tag;
    int epoch;

    // user memory
    MemorySegment memory;
    long offset;
    /** The message data when it is not contiguous memory ({@link #memory} is then unused). */
    PackedPayload packed;
    long capacity;     // SEND: message length; RECV: buffer capacity

    int mode;
    // protocol state
    long remoteId;     // SEND: receiver's request id after CTS
    long toSend;       // SEND rendezvous: bytes the receiver wants
    long sent;
    boolean pinned;    // SEND rendezvous: some fragment went through Transport.sendPinned
    int source;        // SEND: the sender's rank in the communicator (envelope of a deferred send)
    boolean deferred;  // SEND: waits in the engine's deferred queue for its first frame to be written
    long expected;     // RECV rendezvous: bytes announced to arrive
    long received;
    boolean truncated;
    Runnable onComplete;
    /** The API object this operation belongs to, where the API needs to find it again (CONT's unresolved receives). */
    public Object owner;

    // status (valid once complete)
    volatile boolean complete;
    int statusSource;
    int statusTag;
    long statusBytes;
    boolean cancelled;
    int errorClass;
    String errorMessage;
    int failedRank = -1;

    private static final java.lang.invoke.VarHandle COMPLETE;
    static {
        try {
            COMPLETE = java.lang.invoke.MethodHandles.lookup().findVarHandle(Request.class, "complete", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    Request(Engine engine, Kind kind, long id) {
        this.engine = engine;
        this.kind = kind;
        this.id = id;
    }

    /**
     * Makes a pooled request new again (caller holds the progress lock, so a thread that
     * completed the request's previous use has left it): every field as a
     * constructor leaves it, with {@code kind} and a fresh {@code id}. The request is in no list
     * and nothing else refers to it ({@link Engine#recycle} takes only such requests).
     */
    void reuse(Kind kind, long id) {
        this.kind = kind;
        this.id = id;
        pooled = false;
        context = peer = peerWorld = tag = epoch = 0;
        memory = null;
        offset = 0;
        packed = null;
        capacity = 0;
        mode = 0;
        remoteId = toSend = sent = expected = received = 0;
        pinned = truncated = deferred = false;
        source = 0;
        onComplete = null;
        owner = null;
        statusSource = statusTag = 0;
        statusBytes = 0;
        cancelled = false;
        errorClass = ErrorClass.SUCCESS;
        errorMessage = null;
        failedRank = -1;
        COMPLETE.set(this, false); // plain: the lock's release publishes it with the rest
    }

    /**
     * Whether the engine may take this request back for reuse once its user is done with it:
     * complete with success (or cancelled) and so out of every queue and table of the engine,
     * a point-to-point operation (not a collective's, which code outside the engine completes),
     * no completion callback and no owner that could still reach it, not the shared
     * {@link Engine#sendAndForget} request. Reads {@link #complete} first (acquire), so the
     * fields written before the completion are visible to any thread.
     */
    boolean recyclable() {
        return complete && !pooled && kind != Kind.COLL && errorClass == ErrorClass.SUCCESS && onComplete == null
                && owner == null && list == null && id > 0;
    }

    /** A send that is complete with success and never changes (see {@link Engine#sendAndForget}). */
    static Request completedSend(Engine engine) {
        Request r = new Request(engine, Kind.SEND, -1);
        r.peer = Engine.PROC_NULL;
        r.complete = true;
        return r;
    }

    public Kind kind() { return kind; }
    public boolean isComplete() { return complete; }
    public int source() { return statusSource; }
    public int tag() { return statusTag; }
    public long byteCount() { return statusBytes; }
    public boolean isCancelled() { return cancelled; }
    public int errorClass() { return errorClass; }
    public String errorMessage() { return errorMessage; }
    public int failedRank() { return failedRank; }
    public Engine engine() { return engine; }

    /** Completes with success; caller holds the progress lock. */
    void succeed(int source, int tag, long bytes) {
        statusSource = source;
        statusTag = tag;
        statusBytes = bytes;
        finish();
    }

    /** Completes keeping the error class already set (truncation); status fields are set. */
    void succeedKeepingError() {
        finish();
    }

    /** Completes with an error; caller holds the progress lock. */
    void fail(int errorClass, String message, int failedRank) {
        if (complete) return;
        this.errorClass = errorClass;
        this.errorMessage = message;
        this.failedRank = failedRank;
        statusSource = peer;
        statusTag = tag;
        finish();
    }

    private void finish() {
        memory = null;
        packed = null;
        COMPLETE.setRelease(this, true); // publishes the status; no full fence on the message path
        engine.requestDone();
        if (onComplete != null) onComplete.run();
    }

    /**
     * Runs {@code action} once the request completes (at once if it already has), on the
     * thread that completes it, under the progress lock: keep it short.
     */
    public void whenComplete(Runnable action) {
        engine.lock.lock();
        try {
            if (complete) {
                action.run();
            } else {
                Runnable prev = onComplete;
                onComplete = prev == null ? action : () -> {
                    prev.run();
                    action.run();
                };
            }
        } finally {
            engine.lock.unlock();
        }
    }

    /** Throws the request's error, if it completed with one. */
    public void checkError() throws P2pException {
        if (errorClass != ErrorClass.SUCCESS && errorClass != ErrorClass.ERR_TRUNCATE) {
            throw new P2pException(errorClass, errorMessage, failedRank);
        }
        if (errorClass == ErrorClass.ERR_TRUNCATE) {
            throw new P2pException(errorClass, errorMessage);
        }
    }
}
