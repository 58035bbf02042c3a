package mpi;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.ftmpi.coll.Dissemination;
import org.ftmpi.ft.CommState;
import org.ftmpi.ft.ProcState;
import org.ftmpi.ft.RecoveryListener;
import org.ftmpi.p2p.CommFt;
import org.ftmpi.p2p.Engine;
import org.ftmpi.p2p.FtTrace;
import org.ftmpi.p2p.P2pException;

/**
 * FT-MPI recovery of one process's job (seed 001, Appendix A, chapters 3-6) for one engine: the
 * modes, the recovery procedure, the listeners and the state model. Made with COMM_WORLD and
 * shared by every communicator derived from it.
 *
 * <p>The procedure (docs/fault-tolerance.md, "Recovery"): when the engine learns of a failure
 * it enters DETECTED and fails every pending and later operation; recovery then runs, here, in
 * the first failing call (AUTO) or in {@link MPI#recover()} / {@code MPI.COMM_WORLD.dup()}
 * (MANUAL). The survivors run the fault-tolerant agreement of part 1 on a recovery communicator
 * of all the job's processes (a fresh one per generation, context id {@code -2 - 2g}) and so
 * agree on the failed set; the engine starts generation g (older messages are dropped, every
 * other communicator is invalidated) and COMM_WORLD and COMM_SELF are re-made: SHRINK with the
 * survivors in their old order, BLANK with the old size and the failed ranks as blanks, REBUILD
 * with the old size once every failed rank's replacement (started by the controller) has been
 * connected to. While
 * failures remain that the agreed set does not cover, another round follows. Then the recovery
 * listeners run in registration order.
 *
 * <p><b>Note:</b> thread-safe; one recovery at a time (synchronized).
 */
final class Recovery implements Engine.Rebind {
    final Engine engine;
    final Intracomm world;
    final Intracomm self;
    /** Recovery mode AUTO (else MANUAL, or the job does not recover at all). */
    final boolean auto;
    final int commMode, msgMode, recoveryMode, collMode;
    private final List<RecoveryListener> listeners = new CopyOnWriteArrayList<>();
    /** Job option {@code ft-trace=true}: each recovery prints its timing on stderr. */
    private final boolean trace;
    private volatile boolean running;
    private volatile boolean notifying;
    private volatile int[] lastFailed = new int[0];
    /** Error code whose string names {@link #lastFailed} (attribute FTMPI_ERROR_FAILURE); MPI.SUCCESS before any recovery. */
    private volatile int failureCode = MPI.SUCCESS;
    /** CONT: receives from ANY_SOURCE that were pending at the last recovery (spec 5.1). */
    private volatile Request[] unresolved = new Request[0];

    Recovery(Engine engine, Intracomm world, Intracomm self) {
        this.engine = engine;
        this.world = world;
        this.self = self;
        commMode = switch (engine.job().option("comm-mode", "abort")) {
            case "rebuild" -> MPI.FTMPI_COMM_MODE_REBUILD;
            case "blank" -> MPI.FTMPI_COMM_MODE_BLANK;
            case "shrink" -> MPI.FTMPI_COMM_MODE_SHRINK;
            default -> MPI.FTMPI_COMM_MODE_ABORT;
        };
        recoveryMode = switch (engine.job().option("recovery-mode", "manual")) {
            case "auto" -> MPI.FTMPI_RECOVERY_MODE_AUTO;
            case "ignore" -> MPI.FTMPI_RECOVERY_MODE_IGNORE;
            default -> MPI.FTMPI_RECOVERY_MODE_MANUAL;
        };
        msgMode = engine.job().option("msg-mode", "reset").equals("cont") ? MPI.FTMPI_MSG_MODE_CONT
                : MPI.FTMPI_MSG_MODE_RESET;
        collMode = engine.job().option("coll-mode", "nonatomic").equals("atomic") ? MPI.FTMPI_COLL_MODE_ATOMIC
                : MPI.FTMPI_COLL_MODE_NONATOMIC;
        auto = engine.recovers() && recoveryMode == MPI.FTMPI_RECOVERY_MODE_AUTO;
        trace = engine.trace().on();
        if (trace) TraceLine.class.getName(); // loaded now, not in the first recovery
    }

    void addListener(RecoveryListener l) {
        listeners.add(l);
    }

    boolean removeListener(RecoveryListener l) {
        return listeners.remove(l);
    }

    /** Attribute FTMPI_ERROR_FAILURE: an error code; MPI.getErrorString names the failed ranks. */
    int failureCode() {
        return failureCode;
    }

    /** CONT: the receives from ANY_SOURCE the last recovery could not resolve, still pending then. */
    Request[] unresolved() {
        return unresolved.clone();
    }

    /** Ranks (in COMM_WORLD before the last recovery) of the processes the last recovery covered. */
    int[] lastFailed() {
        return lastFailed.clone();
    }

    /**
     * Runs the recovery if a failure is known that no recovery covered (else returns at once).
     * Collective over the surviving processes.
     */
    synchronized void run() throws MPIException {
        if (!engine.recovers()) {
            throw MPIException.of(MPI.ERR_OTHER, "recover: this job does not recover from failures"
                    + " (start it with ftmpirun --comm-mode shrink|blank, recovery-mode auto or manual)");
        }
        if (!engine.needsRecovery()) return;
        long notice = engine.detectedAtNanos(), start = System.nanoTime(), joined = 0;
        engine.trace().record(start, FtTrace.RECOVERY, engine.generation() + 1, 0);
        running = true;
        int[] before = world.world.clone();
        int n = engine.size();
        boolean[] coveredBefore = new boolean[n];
        for (int w = 0; w < n; w++) coveredBefore[w] = engine.isRecovered(w);
        int[] all = new int[n];
        for (int w = 0; w < n; w++) all[w] = w;
        boolean[] newly = new boolean[n];
        try {
            while (engine.needsRecovery()) {
                int g = engine.generation() + 1;
                CommFt f = engine.registerComm(-2 - 2 * g, all);
                Engine.Decision d;
                FaultPoint.step(engine, FaultPoint.RECOVERY_AGREEMENT);
                try {
                    d = engine.agree(f, 1, 1);
                } catch (P2pException e) {
                    throw MPIException.of(e.errorClass(), "recovery: " + e.getMessage());
                }
                FaultPoint.step(engine, FaultPoint.RECOVERY_AGREED);
                int[] failed = d.failedWorld();
                for (int w : failed) newly[w] |= !coveredBefore[w];
                if (commMode == MPI.FTMPI_COMM_MODE_REBUILD) {
                    try {
                        long t = System.nanoTime();
                        engine.awaitReplacements(failed);
                        joined += System.nanoTime() - t;
                    } catch (P2pException e) {
                        throw MPIException.of(e.errorClass(), "recovery: " + e.getMessage());
                    }
                }
                engine.beginGeneration(g, failed, this);
            }
        } finally {
            running = false;
        }
        int covered = 0;
        for (int w : before) if (newly[w]) covered++;
        int[] failedRanks = new int[covered];
        for (int i = 0, k = 0; i < before.length; i++) {
            if (newly[before[i]]) failedRanks[k++] = i;
        }
        lastFailed = failedRanks;
        failureCode = failureCode(failedRanks);
        if (msgMode == MPI.FTMPI_MSG_MODE_CONT) {
            List<Request> open = new ArrayList<>();
            for (org.ftmpi.p2p.Request r : engine.pendingAnySource()) {
                if (r.owner instanceof Request q) open.add(q);
            }
            unresolved = open.toArray(new Request[0]);
        }
        if (trace) {
            long end = System.nanoTime();
            engine.trace().record(end, FtTrace.DONE, engine.generation(), 0);
            engine.trace().printLater(System.err, engine.rank(), // after the other survivors' recoveries
                    new TraceLine(engine.rank(), engine.generation(), failedRanks, end - notice, start - notice, joined));
        }
        notifying = true;
        try {
            for (RecoveryListener l : listeners) {
                try {
                    l.recovered(failedRanks.clone());
                } catch (MPIException e) {
                    throw e;
                } catch (Exception e) {
                    throw MPIException.of(MPI.ERR_OTHER, "recovery listener " + l + " failed: " + e);
                }
            }
        } finally {
            notifying = false;
        }
    }

    /** The ft-trace summary of one recovery, built when the trace prints it, not on the recovery's path. */
    private record TraceLine(int rank, int generation, int[] failedRanks, long rebuiltNs, long enteredNs, long joinedNs) {
        @Override
        public String toString() {
            return String.format("ftmpi: rank %d: recovery to generation %d: failed %s: notice to rebuilt"
                    + " %.3f ms (recovery entered %.3f ms after the notice; waiting for replacements %.3f ms)",
                    rank, generation, java.util.Arrays.toString(failedRanks), rebuiltNs / 1e6, enteredNs / 1e6, joinedNs / 1e6);
        }
    }

    /** A new error code (class ERR_OTHER) whose string lists {@code failedRanks}. */
    private static int failureCode(int[] failedRanks) throws MPIException {
        int code = MPI.addErrorCode(MPI.ERR_OTHER);
        StringBuilder b = new StringBuilder("FT-MPI recovery: failed processes (ranks in MPI.COMM_WORLD before the"
                + " recovery):");
        for (int i = 0; i < failedRanks.length; i++) {
            String next = " " + failedRanks[i];
            if (b.length() + next.length() > 200) {
                b.append(" and ").append(failedRanks.length - i).append(" more");
                break;
            }
            b.append(next);
        }
        MPI.addErrorString(code, b.toString());
        return code;
    }

    /**
     * Re-makes COMM_WORLD and COMM_SELF in the new generation (under the engine's lock). Not a
     * lambda: its first run would spin a class on the recovery's critical path.
     */
    @Override
    public void rebind(int[] failedWorld) {
        int n = engine.size();
        boolean[] dead = new boolean[n];
        for (int w : failedWorld) dead[w] = true;
        int me = engine.rank();
        engine.unregisterComm(world.context);
        engine.unregisterComm(self.context);
        if (commMode == MPI.FTMPI_COMM_MODE_BLANK || commMode == MPI.FTMPI_COMM_MODE_REBUILD) {
            int[] members = new int[n];
            for (int w = 0; w < n; w++) members[w] = w;
            world.rebind(members, me);
        } else {
            int[] members = new int[n - failedWorld.length];
            int k = 0, myRank = -1;
            for (int w = 0; w < n; w++) {
                if (dead[w]) continue;
                if (w == me) myRank = k;
                members[k++] = w;
            }
            world.rebind(members, myRank);
        }
        self.rebind(new int[] {me}, 0);
    }

    /** AUTO: the failing call recovers, then COMM_WORLD's error handler handles its error. */
    MPIException autoRecover(MPIException ex) {
        try {
            run();
        } catch (MPIException e) {
            return world.handle(e);
        }
        return world.handle(ex);
    }

    /** MANUAL: {@code MPI.COMM_WORLD.dup()} starts the recovery; its result is COMM_WORLD itself. */
    Intracomm recoverFromDup() throws MPIException {
        try {
            run();
        } catch (MPIException e) {
            throw world.handle(e);
        }
        return world;
    }

    /**
     * MPI_Finalize in a recovering job: recovers if needed and meets the other survivors in a
     * barrier first, so that no survivor waits in the recovery for a process that is already in
     * MPI_Finalize.
     */
    void beforeFinalize() throws MPIException {
        if (!engine.recovers()) return;
        while (true) {
            run();
            try {
                Dissemination.barrier(world.cc());
                return;
            } catch (P2pException e) {
                if (!engine.needsRecovery()) return; // aborted, or nothing a recovery can help
            }
        }
    }

    /** FT-MPI state of {@code c} (see {@link CommState}). */
    CommState stateOf(Comm c) {
        if (c.engine == null) return CommState.FAILED;
        if (c.epoch < engine.generation()) return CommState.FAILED;
        if (running) return CommState.RECOVER;
        if (engine.needsRecovery()) return CommState.DETECTED;
        if (notifying) return CommState.RECOVERED;
        return CommState.OK;
    }

    /** FT-MPI state of the process that had rank {@code worldRank} in the job's initial COMM_WORLD. */
    ProcState procState(int worldRank) {
        if (engine.isRecovered(worldRank)) return ProcState.FAILED;
        if (engine.isFailed(worldRank)) {
            return engine.replacementAnnounced(worldRank) ? ProcState.JOINING : ProcState.UNAVAILABLE;
        }
        return ProcState.OK;
    }
}
