package mpi;

import java.util.Set;
import org.ftmpi.p2p.Engine;

/**
 * {@code ftmpirun --inject rank=R,at-call=N,how=kill|stop}: rank R sends itself SIGKILL or
 * SIGSTOP when it enters its N-th MPI call. A production feature (for rehearsing failures at a
 * precise point of a program), armed from the job option {@code inject-at-call} that the launcher
 * sets; inactive (one static null check per call) otherwise.
 *
 * <p>An <i>MPI call</i> is one entry into a communicating operation of {@link Comm} or its
 * subclasses, {@link Message}, {@link Prequest} or the non-blocking collectives: every
 * point-to-point operation (blocking or not, {@code sendInit}/{@code recvInit} excluded, each
 * {@code start} counted), probe ({@code probe}, {@code iProbe}, {@code mProbe}, {@code imProbe},
 * {@code mRecv}, {@code imRecv}), collective (blocking or not, neighbourhood ones included),
 * communicator construction ({@code dup}, {@code split}, {@code create}, ...) and the ULFM
 * collectives {@code agree}, {@code iAgree}, {@code shrink}, {@code iShrink}. Local operations
 * (getters, {@code free}, {@code revoke}, {@code ackFailed}, {@code getFailed}, error handlers,
 * names, attributes, packing, topology queries) are not counted, nor are waits and tests of
 * requests. Counting starts at 1 with the first call after {@code MPI.Init}; the fault happens
 * when the N-th call is entered, before it does anything.
 *
 * <p>{@code --inject rank=R,at-step=NAME}: rank R signals itself the first time it reaches the
 * named step inside the library ({@link org.ftmpi.runtime.FaultInjection#STEPS}), a point no
 * call count can reach: e.g. {@code createIntercomm.ids}, a leader that has finished its last
 * exchange with the other group's leader and has not told its own group yet.
 */
final class FaultPoint {
    /** The armed injection of this process, or null (the usual case). */
    static volatile FaultPoint active;

    /** Operations that go through {@link Comm#check} but are local: not counted. */
    private static final Set<String> LOCAL = Set.of("abort", "ackFailed", "compare", "free", "getAcked",
            "getCoords", "getDims", "getDistGraphNeighbors", "getErrhandler", "getFailed", "getGroup", "getInfo",
            "getName", "getNeighbors", "getRank", "getSize", "getTopo", "getTopology", "isInter", "isRevoked",
            "map", "pack", "packSize", "revoke", "setErrhandler", "setInfo", "setName", "shift", "unpack",
            "sendInit", "bSendInit", "sSendInit", "rSendInit", "recvInit", "getAttr", "setAttr", "deleteAttr");

    /** {@code createIntercomm}: a leader has swapped the groups' lists with the other leader, its group does not know them yet. */
    static final String INTERCOMM_LISTS = org.ftmpi.runtime.FaultInjection.STEP_INTERCOMM_LISTS;
    /** {@code createIntercomm}: a leader has swapped with the other leader whether the new context id is free (its last exchange), its group does not know yet. */
    static final String INTERCOMM_IDS = org.ftmpi.runtime.FaultInjection.STEP_INTERCOMM_IDS;

    /** FT-MPI recovery: a survivor is about to contribute to the recovery's agreement. */
    static final String RECOVERY_AGREEMENT = org.ftmpi.runtime.FaultInjection.STEP_RECOVERY_AGREEMENT;
    /** FT-MPI recovery: the recovery's agreement has decided here; COMM_WORLD is not rebuilt yet. */
    static final String RECOVERY_AGREED = org.ftmpi.runtime.FaultInjection.STEP_RECOVERY_AGREED;

    private final Engine engine;
    private final long atCall;
    /** The step to fail at ({@code at-step}), or null. */
    private final String atStep;
    private final boolean stop;
    private long calls;

    private FaultPoint(Engine engine, long atCall, String atStep, boolean stop) {
        this.engine = engine;
        this.atCall = atCall;
        this.atStep = atStep;
        this.stop = stop;
    }

    /**
     * Arms the injection for {@code engine}'s rank if the job option {@code inject-at-call}
     * ({@code R:N:how} entries separated by {@code ;}) names it. Called when MPI_COMM_WORLD is bound.
     */
    static void arm(Engine engine) {
        String spec = engine.job().option(org.ftmpi.runtime.FaultInjection.AT_CALL_OPTION, "");
        if (spec.isEmpty()) return;
        // Only rank processes started by ftmpirun: ranks that are threads of one JVM (LocalJob)
        // would signal the whole JVM.
        if (!(engine.runtime() instanceof org.ftmpi.runtime.ControlClient)) return;
        for (String e : spec.split(";")) {
            String[] p = e.split(":");
            if (p.length != 3) continue;
            if (Integer.parseInt(p[0]) == engine.rank()) {
                org.ftmpi.runtime.Signals.prepare(); // the injection is then one system call
                boolean step = p[1].startsWith("@");
                active = new FaultPoint(engine, step ? -1 : Long.parseLong(p[1]), step ? p[1].substring(1) : null,
                        p[2].equals("stop"));
            }
        }
    }

    /** Counts the call {@code op} of {@code e}'s rank and injects the fault at the N-th. */
    void call(Engine e, String op) {
        if (e != engine || LOCAL.contains(op)) return;
        long n;
        synchronized (this) {
            n = ++calls;
        }
        if (n != atCall) return;
        inject("at its MPI call " + n + " (" + op + ")");
    }

    /** Step {@code name} of {@code e}'s rank is reached: injects the fault if it is the armed step. */
    static void step(Engine e, String name) {
        FaultPoint fp = active;
        if (fp != null && fp.engine == e && name.equals(fp.atStep) && !fp.stepReached) {
            fp.stepReached = true; // the first time only (a stopped process continued by SIGCONT goes on)
            fp.inject("at step " + name);
        }
    }

    /** The armed step was reached (and the fault injected). */
    private volatile boolean stepReached;

    private void inject(String at) {
        long pid = ProcessHandle.current().pid();
        String sig = stop ? "STOP" : "KILL";
        org.ftmpi.runtime.FaultInjection.markInjecting(engine.job(), pid, "SIG" + sig + " " + at);
        System.out.flush();
        System.err.println("ftmpi: injecting fault: SIG" + sig + " to rank " + engine.rank() + " (pid " + pid + ") " + at);
        if (engine.trace().on()) { // the timeline's origin (bench/ft/timeline.sh)
            System.err.println("ftmpi: trace: rank " + engine.rank() + ": t=" + System.nanoTime() + " SIG" + sig
                    + " requested");
        }
        System.err.flush();
        try {
            org.ftmpi.runtime.Signals.send(pid, stop ? org.ftmpi.runtime.Signals.SIGSTOP : org.ftmpi.runtime.Signals.SIGKILL);
        } catch (java.io.IOException ex) {
            System.err.println("ftmpi: warning: --inject at-call: cannot signal this process: " + ex.getMessage());
            if (!stop) Runtime.getRuntime().halt(128 + 9);
        }
        if (!stop) Runtime.getRuntime().halt(128 + 9); // not reached: SIGKILL ended the process
    }
}
