package org.ftmpi.runtime;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.ftmpi.runtime.wire.Frame;
import org.ftmpi.runtime.wire.FrameException;
import org.ftmpi.runtime.wire.FrameType;
import org.ftmpi.runtime.wire.PayloadReader;
import org.ftmpi.runtime.wire.PayloadWriter;

/** Encoders and decoders of the control frames after authentication. Stateless. */
final class ControlMessages {
    /** Limit on the number of transports one rank may publish. */
    static final int MAX_TRANSPORTS = 64;

    private ControlMessages() {}

    /** REGISTER: rank, procId, host, endpoints. */
    record Register(int rank, long procId, String host, Map<String, byte[]> endpoints) {}

    /** One row of the TABLE. */
    record Entry(long procId, String host, Map<String, byte[]> endpoints) {}

    /** ABORT_REQUEST / ABORT: exit code and reason. */
    record Abort(int code, String reason) {}

    /** PROCESS_FAILED: rank, procId, how. */
    record Failed(int rank, long procId, String how) {}

    static Frame register(Register r) {
        return register(FrameType.REGISTER, r);
    }

    /** REPLACED: the REGISTER of a replacement, passed on to the other ranks. */
    static Frame replaced(Register r) {
        return register(FrameType.REPLACED, r);
    }

    /** SPARE (spare to controller) or SPARE_READY (controller to ranks): a warm spare, rank -1. */
    static Frame spare(int type, long procId, String host, Map<String, byte[]> endpoints) {
        return register(type, new Register(-1, procId, host, endpoints));
    }

    /** SPARE_GONE: the spare's procId. */
    static Frame spareGone(long procId) {
        return new PayloadWriter().putLong(procId).toFrame(FrameType.SPARE_GONE);
    }

    private static Frame register(int type, Register r) {
        PayloadWriter w = new PayloadWriter().putInt(r.rank()).putLong(r.procId()).putString(r.host());
        putEndpoints(w, r.endpoints());
        return w.toFrame(type);
    }

    /** Decodes REGISTER, REPLACED, SPARE or SPARE_READY. */
    static Register register(Frame f) throws FrameException {
        PayloadReader r = f.reader();
        Register reg = new Register(r.getInt(), r.getLong(), r.getString(), getEndpoints(r));
        r.end();
        return reg;
    }

    static Frame table(List<Entry> rows) {
        PayloadWriter w = new PayloadWriter().putInt(rows.size());
        for (Entry e : rows) {
            w.putLong(e.procId()).putString(e.host());
            putEndpoints(w, e.endpoints());
        }
        return w.toFrame(FrameType.TABLE);
    }

    static List<Entry> table(Frame f) throws FrameException {
        PayloadReader r = f.reader();
        int n = r.getInt();
        if (n < 0 || n > f.payload().length) {
            throw new FrameException("bad table size " + n);
        }
        List<Entry> rows = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            rows.add(new Entry(r.getLong(), r.getString(), getEndpoints(r)));
        }
        r.end();
        return rows;
    }

    static Frame abort(int type, Abort a) {
        return new PayloadWriter().putInt(a.code()).putString(a.reason()).toFrame(type);
    }

    static Abort abort(Frame f) throws FrameException {
        PayloadReader r = f.reader();
        Abort a = new Abort(r.getInt(), r.getString());
        r.end();
        return a;
    }

    static Frame failed(Failed x) {
        return failed(FrameType.PROCESS_FAILED, x);
    }

    /** PROCESS_FAILED (controller to rank) or FAILURE_REPORT (rank to controller). */
    static Frame failed(int type, Failed x) {
        return new PayloadWriter().putInt(x.rank()).putLong(x.procId()).putString(x.how()).toFrame(type);
    }

    static Failed failed(Frame f) throws FrameException {
        PayloadReader r = f.reader();
        Failed x = new Failed(r.getInt(), r.getLong(), r.getString());
        r.end();
        return x;
    }

    private static void putEndpoints(PayloadWriter w, Map<String, byte[]> eps) {
        w.putInt(eps.size());
        for (Map.Entry<String, byte[]> e : eps.entrySet()) {
            w.putString(e.getKey()).putBytes(e.getValue());
        }
    }

    private static Map<String, byte[]> getEndpoints(PayloadReader r) throws FrameException {
        int n = r.getInt();
        if (n < 0 || n > MAX_TRANSPORTS) {
            throw new FrameException("bad transport count " + n);
        }
        Map<String, byte[]> m = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            m.put(r.getString(), r.getBytes());
        }
        return Collections.unmodifiableMap(m);
    }
}
