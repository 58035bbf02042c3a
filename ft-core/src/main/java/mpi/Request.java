package mpi;

import java.util.ArrayList;
import org.ftmpi.p2p.Engine;
import org.ftmpi.p2p.ErrorClass;
import org.ftmpi.p2p.P2pException;

/**
 * A non-blocking operation ({@code MPI_Request}). After a wait or successful test a
 * non-persistent request becomes null ({@link #isNull()}); a {@link Prequest} becomes inactive.
 *
 * <p><b>Note:</b> a request object belongs to the thread that waits on it; the operation
 * itself progresses on any thread.
 */
public class Request implements Freeable {
    org.ftmpi.p2p.Request op;
    Comm comm;
    Buffers.Region region;
    private boolean freed;
    /** A receive from MPI.ANY_SOURCE: wait/test raise while a member's failure is unacknowledged. */
    boolean anySource;

    /** A request for a posted operation: the engine's progress agent is woken if it sleeps (see {@link #posted}). */
    Request(org.ftmpi.p2p.Request op, Comm comm, Buffers.Region region) {
        this.op = op;
        this.comm = comm;
        this.region = region;
        posted(op);
    }

    /**
     * The application may compute now while {@code o} needs progress: tells the engine, whose
     * progress agent sleeps without a timeout while nothing is outstanding. The blocking
     * operations do not call this: they progress their own requests until complete.
     */
    static void posted(org.ftmpi.p2p.Request o) {
        if (o != null) o.engine().posted(o);
    }

    /** Marks the request for deallocation; a pending operation still completes. */
    @Override
    public void free() throws MPIException {
        op = null;
        freed = true;
    }

    /** Marks a pending non-blocking operation for cancellation (receives that have not matched). */
    public final void cancel() throws MPIException {
        org.ftmpi.p2p.Request o = op;
        if (o != null) o.engine().cancel(o);
    }

    /** Whether the request is null (never active, freed, or completed and non-persistent). */
    public boolean isNull() {
        return op == null && !(this instanceof Prequest && !freed);
    }

    /** MPI_WAIT: blocks until the operation is complete and returns its status. */
    public final Status waitStatus() throws MPIException {
        return awaitOp() ? finish() : emptyStatus();
    }

    /** MPI_WAIT without a status (none is made). */
    public final void waitFor() throws MPIException {
        if (awaitOp()) release();
    }

    /**
     * Waits until the active operation is complete (ULFM's ANY_SOURCE rule; CONT: raises while a
     * failure awaits recovery); false when the request is not active.
     */
    private boolean awaitOp() throws MPIException {
        org.ftmpi.p2p.Request o = op;
        if (o == null) return false;
        if (anySource && comm.anySourceRule) comm.awaitAnySource(o, "wait", false);
        else if (!o.engine().awaitUnlessDetected(o)) throw comm.contInterrupted("wait");
        return true;
    }

    /** MPI_TEST: the status if the operation is complete, {@code null} otherwise. */
    public final Status testStatus() throws MPIException {
        if (op == null) return emptyStatus();
        return testOp() ? finish() : null;
    }

    /**
     * One progress step for the active operation: whether it is complete; raises under ULFM's
     * ANY_SOURCE rule and, in CONT, while a failure awaits recovery.
     */
    private boolean testOp() throws MPIException {
        org.ftmpi.p2p.Request o = op;
        if (o.engine().test(o)) return true;
        if (anySource && comm.unacknowledgedFailure()) throw comm.anySourceFailure("test", true);
        if (comm.contInterrupts()) throw comm.contInterrupted("test");
        return false;
    }

    /**
     * MPI_REQUEST_GET_STATUS: the status if the operation is complete, {@code null} otherwise;
     * unlike {@link #testStatus()} the request stays as it is (still to be waited for, tested
     * or freed). An inactive or null request gives an empty status. A failed operation's error
     * is in {@link Status#getError()} (it is raised by the wait or test that releases it).
     */
    public final Status getStatus() throws MPIException {
        org.ftmpi.p2p.Request o = op;
        if (o == null) return emptyStatus();
        if (!o.engine().test(o)) return null;
        return new Status(o.source(), o.tag(), o.errorClass(), o.isCancelled(), o.byteCount());
    }

    /** MPI_TEST without a status (none is made). */
    public final boolean test() throws MPIException {
        if (op == null) return true;
        if (!testOp()) return false;
        release();
        return true;
    }

    boolean isActive() {
        return op != null;
    }

    boolean isDone() {
        return op == null || op.isComplete();
    }

    /** Turns a completed operation into a status, reporting its error; the request is released. */
    final Status finish() throws MPIException {
        org.ftmpi.p2p.Request o = op;
        Status s = new Status(o.source(), o.tag(), o.errorClass(), o.isCancelled(), o.byteCount());
        release(); // may hand o back to the engine for reuse: read it first
        return s;
    }

    /**
     * Releases a completed operation without making a status: finishes the receive (unpacks a
     * derived type) and raises the operation's error. A successful operation goes back to the
     * engine's pool ({@link Engine#recycle}): once {@link #op} is null nothing the application
     * holds reaches it.
     */
    final void release() throws MPIException {
        org.ftmpi.p2p.Request o = op;
        deactivate();
        int err = o.errorClass();
        if (region != null && err == ErrorClass.SUCCESS) {
            try {
                region.finishReceive(o.byteCount());
            } catch (MPIException e) {
                throw comm.handle(e);
            }
        }
        if (err != ErrorClass.SUCCESS) {
            throw comm.raise(new P2pException(err, o.errorMessage(), o.failedRank()), "wait");
        }
        o.engine().recycle(o);
    }

    void deactivate() {
        op = null;
    }

    static Status emptyStatus() {
        return new Status(MPI.ANY_SOURCE, MPI.ANY_TAG, MPI.SUCCESS, false, 0);
    }

    // ------------------------------------------------------------------ arrays of requests

    private static Engine engineOf(Request[] requests) {
        for (Request r : requests) {
            if (r != null && r.op != null) return r.op.engine();
        }
        return null;
    }

    /** MPI_WAITANY with status; the index is in {@link Status#getIndex()}. */
    public static Status waitAnyStatus(Request[] requests) throws MPIException {
        int i = awaitAny(requests);
        Status s = i == MPI.UNDEFINED ? emptyStatus() : requests[i].finish();
        s.index = i;
        return s;
    }

    /** Waits until one active request is complete and returns its index ({@code MPI.UNDEFINED}: none is active). */
    private static int awaitAny(Request[] requests) throws MPIException {
        Engine e = engineOf(requests);
        if (e == null) return MPI.UNDEFINED;
        int idle = 0;
        while (true) {
            int i = completed(requests);
            if (i >= 0) return i;
            raiseIfBlockedAnySource(requests, "waitAny");
            idle = e.progressOrPause(idle);
        }
    }

    /** Index of the first active request that is complete, or -1. */
    private static int completed(Request[] requests) {
        for (int i = 0; i < requests.length; i++) {
            Request r = requests[i];
            if (r != null && r.op != null && r.op.isComplete()) return i;
        }
        return -1;
    }

    /**
     * ULFM's rule for arrays of requests: when none of them can complete and one is a receive
     * from {@code MPI.ANY_SOURCE} whose communicator has an unacknowledged failure, the call
     * raises {@link ProcFailedException} with {@link ProcFailedException#isPending()} (class
     * {@code ERR_PROC_FAILED_PENDING} under ULFM error classes); every request stays active.
     */
    private static void raiseIfBlockedAnySource(Request[] requests, String op) throws MPIException {
        for (Request r : requests) {
            if (r != null && r.op != null && r.anySource && !r.op.isComplete() && r.comm.unacknowledgedFailure()) {
                throw r.comm.anySourceFailure(op, true);
            }
            // FT-MPI message mode CONT: a known failure interrupts the wait; the requests stay active
            if (r != null && r.op != null && !r.op.isComplete() && r.comm.contInterrupts()) throw r.comm.contInterrupted(op);
        }
    }

    /** MPI_WAITANY: index of the completed request, or {@code MPI.UNDEFINED} if none is active. */
    public static int waitAny(Request[] requests) throws MPIException {
        int i = awaitAny(requests);
        if (i != MPI.UNDEFINED) requests[i].release();
        return i;
    }

    /** MPI_TESTANY with status: {@code null} if none completed. */
    public static Status testAnyStatus(Request[] requests) throws MPIException {
        Engine e = engineOf(requests);
        if (e == null) {
            Status s = emptyStatus();
            s.index = MPI.UNDEFINED;
            return s;
        }
        e.progress();
        int i = completed(requests);
        if (i >= 0) {
            Status s = requests[i].finish();
            s.index = i;
            return s;
        }
        raiseIfBlockedAnySource(requests, "testAny");
        return null;
    }

    /** MPI_TESTANY: index of a completed request, or {@code MPI.UNDEFINED}. */
    public static int testAny(Request[] requests) throws MPIException {
        Status s = testAnyStatus(requests);
        return s == null ? MPI.UNDEFINED : s.getIndex();
    }

    /** MPI_WAITALL with statuses (null entries for requests that were inactive). */
    public static Status[] waitAllStatus(Request[] requests) throws MPIException {
        Status[] out = new Status[requests.length];
        MPIException first = null;
        for (int i = 0; i < requests.length; i++) {
            Request r = requests[i];
            if (r == null || r.op == null) continue;
            try {
                out[i] = r.waitStatus();
            } catch (MPIException ex) {
                if (first == null) first = ex;
            }
        }
        if (first != null) throw first;
        return out;
    }

    /** MPI_WAITALL (no statuses are made); the first error is raised once every request is done. */
    public static void waitAll(Request[] requests) throws MPIException {
        MPIException first = null;
        for (Request r : requests) {
            if (r == null || r.op == null) continue;
            try {
                r.waitFor();
            } catch (MPIException ex) {
                if (first == null) first = ex;
            }
        }
        if (first != null) throw first;
    }

    /** MPI_TESTALL with statuses: {@code null} unless every request is complete. */
    public static Status[] testAllStatus(Request[] requests) throws MPIException {
        return allDone(requests) ? waitAllStatus(requests) : null;
    }

    /** MPI_TESTALL (no statuses are made). */
    public static boolean testAll(Request[] requests) throws MPIException {
        if (!allDone(requests)) return false;
        waitAll(requests);
        return true;
    }

    /** One progress step, then whether every request is done (ULFM's ANY_SOURCE rule if not). */
    private static boolean allDone(Request[] requests) throws MPIException {
        Engine e = engineOf(requests);
        if (e != null) e.progress();
        for (Request r : requests) {
            if (r != null && !r.isDone()) {
                raiseIfBlockedAnySource(requests, "testAll");
                return false;
            }
        }
        return true;
    }

    /** MPI_WAITSOME with statuses; {@code null} if no request is active. */
    public static Status[] waitSomeStatus(Request[] requests) throws MPIException {
        Engine e = engineOf(requests);
        if (e == null) return null;
        int idle = 0;
        while (true) {
            Status[] done = collect(requests);
            if (done.length > 0) return done;
            raiseIfBlockedAnySource(requests, "waitSome");
            idle = e.progressOrPause(idle);
        }
    }

    /** MPI_WAITSOME: indexes of the completed requests; {@code null} if none is active. */
    public static int[] waitSome(Request[] requests) throws MPIException {
        return indexes(waitSomeStatus(requests));
    }

    /** MPI_TESTSOME with statuses: empty if none completed, {@code null} if none is active. */
    public static Status[] testSomeStatus(Request[] requests) throws MPIException {
        Engine e = engineOf(requests);
        if (e == null) return null;
        e.progress();
        Status[] done = collect(requests);
        if (done.length == 0) raiseIfBlockedAnySource(requests, "testSome");
        return done;
    }

    /** MPI_TESTSOME: indexes of completed requests. */
    public static int[] testSome(Request[] requests) throws MPIException {
        return indexes(testSomeStatus(requests));
    }

    private static Status[] collect(Request[] requests) throws MPIException {
        ArrayList<Status> done = new ArrayList<>();
        for (int i = 0; i < requests.length; i++) {
            Request r = requests[i];
            if (r != null && r.op != null && r.op.isComplete()) {
                Status s = r.finish();
                s.index = i;
                done.add(s);
            }
        }
        return done.toArray(new Status[0]);
    }

    private static int[] indexes(Status[] s) {
        if (s == null) return null;
        int[] idx = new int[s.length];
        for (int i = 0; i < s.length; i++) idx[i] = s[i].getIndex();
        return idx;
    }
}
