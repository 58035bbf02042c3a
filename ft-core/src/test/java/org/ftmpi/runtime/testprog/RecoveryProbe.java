package org.ftmpi.runtime.testprog;

import org.ftmpi.testutil.Await;
import java.util.Arrays;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.ProcFailedException;
import mpi.Status;

/**
 * MPI program for the FT-MPI recovery system tests ({@code RecoverySystemTest}). After a barrier,
 * rank {@code VICTIM} kills itself with SIGKILL; the survivors find out in a call that needs it,
 * recover and go on. Modes:
 * <ul>
 * <li>{@code manual VICTIM} / {@code dup VICTIM}: comm-mode shrink, recovery manual, started by
 *     {@code MPI.recover()} or {@code MPI.COMM_WORLD.dup()}; checks that communication fails
 *     before the recovery, the listeners, the states, RESET, the invalidated communicator;</li>
 * <li>{@code auto VICTIM [VICTIM2]}: recovery auto inside a failing allreduce; with a second
 *     victim (a rank of the original COMM_WORLD), it dies after the first recovery;</li>
 * <li>{@code blank VICTIM}: comm-mode blank, manual: point-to-point with the blank, barrier,
 *     bcast, reduce, allreduce (MAXLOC) and gather with a blank member;</li>
 * <li>{@code rebuild VICTIM [VICTIM2]}: comm-mode rebuild, recovery auto: the survivors keep
 *     their ranks and exchange messages with the victim's replacement, which sees {@code
 *     MPI.isRestarted()}; a second victim dies after the first recovery;</li>
 * <li>{@code two VICTIM VICTIM2}: both die at once (recovery auto);</li>
 * <li>{@code during VICTIM VICTIM2}: VICTIM dies; VICTIM2 dies in its recovery listener, that is
 *     inside the recovery (recovery auto);</li>
 * <li>{@code step VICTIM}: VICTIM dies; the test kills another rank at a step of its recovery
 *     ({@code --inject at-step=recovery.*}); the survivors go on as in {@code two};</li>
 * <li>{@code all}: every rank kills itself;</li>
 * <li>{@code abort-after VICTIM}: recovery auto from VICTIM's death, then rank 0 calls
 *     {@code MPI_Abort(7)} and the others wait to be ended by it;</li>
 * <li>{@code crashing-replacement VICTIM}: as {@code rebuild}, but every replacement exits 1
 *     before {@code MPI.Init}.</li>
 * <li>{@code slow VICTIM MS}: VICTIM dies; the survivors compute (sleep) for MS ms without an MPI
 *     call before they find out, then go on as in {@code two} (REBUILD: the replacement waits
 *     for them in {@code MPI.Init});</li>
 * <li>{@code hang-replacement VICTIM GATE}: VICTIM dies; every rank, replacements included
 *     (each prints {@code rank R restarted pid P}), runs allreduces until the file GATE exists
 *     (the test stops a replacement meanwhile), then sums the ranks;</li>
 * <li>{@code crash-before-init VICTIM}: rank VICTIM exits 1 before {@code MPI.Init}; the others
 *     call it.</li>
 * <li>{@code stop-before-init VICTIM DIR}: as {@code rebuild VICTIM}, but the first replacement
 *     (no marker file in DIR yet) makes the marker and stops itself (SIGSTOP) before {@code
 *     MPI.Init}, so before it registers or beats;</li>
 * <li>{@code stop-before-init-rank VICTIM}: rank VICTIM stops itself (SIGSTOP) before {@code
 *     MPI.Init}; the others call it (and wait in it for the job's table).</li>
 * <li>{@code hang-before-init VICTIM DIR}, {@code hang-before-init-rank VICTIM}: the same, but
 *     the process waits for ever (asleep, not stopped) instead of stopping itself.</li>
 * <li>{@code spare-pool VICTIM GATE}: the ranks run allreduces until the file GATE exists (the
 *     test changes the spare pool meanwhile), then as {@code rebuild VICTIM}.</li>
 * </ul>
 * Output lines start with {@code rank R} (the rank in the original COMM_WORLD).
 */
public final class RecoveryProbe {
    private RecoveryProbe() {}

    private static int me;

    /** SIGSTOP to this process, or (hang) a wait for ever: alive, running, never reaching MPI.Init. */
    private static void stopOrHang(boolean hang) throws Exception {
        if (hang) org.ftmpi.testutil.Await.endedFromOutside();
        org.ftmpi.runtime.Signals.send(ProcessHandle.current().pid(), org.ftmpi.runtime.Signals.SIGSTOP);
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        if (mode.equals("crashing-replacement")) { // rebuild, but every replacement exits 1 before MPI_Init
            if (System.getenv().getOrDefault("FTMPI_OPTIONS", "").contains("restarted=true")) System.exit(1);
            mode = "rebuild";
        }
        if (mode.equals("crash-before-init") && args[1].equals(System.getenv("FTMPI_RANK"))) System.exit(1);
        boolean hang = mode.startsWith("hang-before-init");
        if (hang) mode = mode.replace("hang-", "stop-");
        if (mode.equals("stop-before-init")) { // rebuild, but the first replacement stops itself before MPI_Init
            java.nio.file.Path marker = java.nio.file.Path.of(args[2], "stopped-replacement");
            if (System.getenv().getOrDefault("FTMPI_OPTIONS", "").contains("restarted=true")
                    && !java.nio.file.Files.exists(marker)) {
                java.nio.file.Files.createFile(marker);
                stopOrHang(hang);
            }
            mode = "rebuild";
            args = new String[] {mode, args[1]};
        }
        if (mode.equals("stop-before-init-rank")) { // rank VICTIM stops itself before MPI_Init
            if (args[1].equals(System.getenv("FTMPI_RANK"))) stopOrHang(hang);
            mode = "rebuild";
            args = new String[] {mode, args[1]};
        }
        MPI.Init(args);
        Intracomm world = MPI.COMM_WORLD;
        world.setErrhandler(MPI.ERRORS_RETURN);
        me = world.getRank();
        if (mode.equals("hang-replacement")) {
            untilGate(world, Integer.parseInt(args[1]), java.nio.file.Path.of(args[2]));
            return;
        }
        if (mode.equals("spare-pool")) {
            if (!MPI.isRestarted()) awaitGate(world, java.nio.file.Path.of(args[2]), false);
            mode = "rebuild";
            args = new String[] {mode, args[1]};
        }
        if (MPI.isRestarted()) { // comm-mode rebuild: the replacement of a victim
            say("restarted size " + world.getSize() + " state " + MPI.getCommState(world) + " failed "
                    + Arrays.toString(MPI.getFailedRanks()));
            if (mode.equals("two") || mode.equals("step") || mode.equals("slow")) { // two replaced: they meet the survivors' retried allreduce
                int[] sum = new int[1];
                while (true) { // AUTO: the other victim's death may be recovered from inside this call; repeat it
                    try {
                        world.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
                        break;
                    } catch (ProcFailedException e) {
                        // recovered: the other rank has its replacement now
                    }
                }
                say("replacement size " + world.getSize() + " sum " + sum[0]);
                MPI.Finalize();
                say("finalized");
                return;
            }
            replacement(world, Integer.parseInt(args[1]), args.length > 2 ? Integer.parseInt(args[2]) : -1);
            return;
        }
        if (mode.equals("all")) {
            world.barrier();
            die();
        }
        int victim = Integer.parseInt(args[1]);
        int victim2 = args.length > 2 && !mode.equals("slow") ? Integer.parseInt(args[2]) : -1;
        MPI.addRecoveryListener(f -> say("listener A failed " + Arrays.toString(f) + " num " + MPI.getNumFailedProcs()
                + " state " + MPI.getCommState(MPI.COMM_WORLD)));
        MPI.addRecoveryListener(f -> say("listener B size " + MPI.COMM_WORLD.getSize()));
        if (mode.equals("during")) { // VICTIM2 dies inside its own recovery (its last step, the listeners)
            MPI.addRecoveryListener(f -> {
                if (me == victim2) die();
            });
        }
        Intracomm old = world.dup();
        if (me == 0) world.send(new int[] {111}, 1, MPI.INT, 1, 7); // old epoch: must never be received
        ProbeLines.syncThenDie(world, me == victim || (mode.equals("two") && me == victim2));
        switch (mode) {
            case "two", "during", "step", "slow" -> {
                if (mode.equals("slow")) Thread.sleep(Long.parseLong(args[2])); // a long computation
                // AUTO: every call that fails has recovered first; repeat until one succeeds
                int[] sum = new int[1];
                int failures = 0;
                while (true) {
                    try {
                        world.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
                        break;
                    } catch (ProcFailedException e) {
                        failures++;
                    }
                }
                say("survived size " + world.getSize() + " sum " + sum[0] + " after " + (failures > 0 ? "failures" : "none"));
                MPI.Finalize();
                say("finalized");
                return;
            }
            case "manual", "dup", "blank" -> {
                try {
                    world.recv(new int[1], 1, MPI.INT, victim, 1);
                    say("recv from victim returned");
                } catch (ProcFailedException e) {
                    say("recv failed: class " + e.getErrorClass() + " failedRank " + e.getFailedRank() + " state "
                            + MPI.getCommState(world) + " victim " + MPI.getProcState(victim));
                }
                int peer = me == 0 ? 1 : 0;
                try {
                    world.send(new int[1], 1, MPI.INT, peer, 9);
                    say("send before recovery returned");
                } catch (ProcFailedException e) {
                    say("send before recovery failed: class " + e.getErrorClass());
                }
                if (mode.equals("dup")) world.dup();
                else MPI.recover();
            }
            case "abort-after" -> { // recover (auto) from VICTIM's death, then rank 0 aborts the job
                try {
                    world.allReduce(new int[] {1}, new int[1], 1, MPI.INT, MPI.SUM);
                } catch (ProcFailedException e) {
                    say("caught class " + e.getErrorClass() + " size " + world.getSize());
                }
                world.barrier();
                if (me == 0) world.abort(7);
                Await.endedFromOutside(); // the others wait to be ended by the abort
            }
            case "auto", "rebuild" -> {
                try {
                    world.allReduce(new int[] {1}, new int[1], 1, MPI.INT, MPI.SUM);
                    say("allreduce returned");
                } catch (ProcFailedException e) {
                    say("caught class " + e.getErrorClass() + " size " + world.getSize() + " state "
                            + MPI.getCommState(world));
                }
            }
            default -> throw new IllegalArgumentException(mode);
        }
        say("recovered size " + world.getSize() + " rank " + world.getRank() + " failed "
                + Arrays.toString(MPI.getFailedRanks()) + " state " + MPI.getCommState(world) + " victim "
                + MPI.getProcState(victim) + " old " + MPI.getCommState(old));
        // RESET: rank 0's message of the old epoch is never delivered; the new one is.
        if (world.getRank() == 0) world.send(new int[] {222}, 1, MPI.INT, 1, 7);
        if (world.getRank() == 1) {
            int[] got = new int[1];
            world.recv(got, 1, MPI.INT, 0, 7);
            say("tag 7 got " + got[0]);
        }
        try {
            old.barrier();
            say("old comm barrier returned");
        } catch (MPIException e) {
            say("old comm: class " + e.getErrorClass() + (e.getErrorClass() == MPI.ERR_COMM ? " ERR_COMM" : ""));
        }
        if (mode.equals("blank")) blankChecks(world, victim);
        int[] sum = new int[1];
        world.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
        say("sum " + sum[0]);
        if (mode.equals("rebuild") && me == 0) world.send(new int[] {333}, 1, MPI.INT, victim, 8);
        if (victim2 >= 0) {
            secondFailure(world, victim2);
            if (mode.equals("rebuild") && me == 0) world.send(new int[] {444}, 1, MPI.INT, victim2, 8);
        }
        MPI.Finalize();
        say("finalized");
    }

    /**
     * Mode {@code hang-replacement}: after {@code victim}'s death every rank allreduces until
     * some rank has seen {@code gate}, recovering (AUTO) from every failure on the way.
     */
    private static void untilGate(Intracomm world, int victim, java.nio.file.Path gate) throws Exception {
        if (MPI.isRestarted()) say("restarted pid " + ProcessHandle.current().pid());
        else ProbeLines.syncThenDie(world, me == victim);
        awaitGate(world, gate, true);
        int[] sum = new int[1];
        world.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
        say("sum " + sum[0]);
        MPI.Finalize();
        say("finalized");
    }

    /**
     * Allreduces (every rank in step) until some rank has seen {@code gate}, which the test
     * creates; {@code recovering}: an allreduce that fails has recovered (AUTO), and the loop goes on.
     */
    private static void awaitGate(Intracomm world, java.nio.file.Path gate, boolean recovering) throws MPIException {
        int[] seen = new int[1];
        do {
            try {
                world.allReduce(new int[] {java.nio.file.Files.exists(gate) ? 1 : 0}, seen, 1, MPI.INT, MPI.MAX);
            } catch (ProcFailedException e) {
                if (!recovering) throw e;
            }
        } while (seen[0] == 0);
        say("gate passed");
    }

    /** After a barrier {@code victim2} dies; the others see it in an allreduce (AUTO recovers), then sum again. */
    private static void secondFailure(Intracomm world, int victim2) throws Exception {
        int[] sum = new int[1];
        ProbeLines.syncThenDie(world, me == victim2);
        try {
            world.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
            say("second allreduce returned");
        } catch (ProcFailedException e) {
            say("second caught size " + world.getSize() + " failed " + Arrays.toString(MPI.getFailedRanks()));
        }
        world.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
        say("second sum " + sum[0] + " size " + world.getSize() + " rank " + world.getRank());
    }

    /** The replacement of {@code victim} or of {@code victim2}: the survivors' calls after their recovery. */
    private static void replacement(Intracomm world, int victim, int victim2) throws Exception {
        int[] sum = new int[1];
        int[] got = new int[1];
        if (me == victim) {
            world.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
            say("sum " + sum[0]);
            world.recv(got, 1, MPI.INT, 0, 8);
            say("from 0 got " + got[0]);
            if (victim2 >= 0) secondFailure(world, victim2);
        } else {
            world.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
            say("second sum " + sum[0] + " size " + world.getSize() + " rank " + world.getRank());
            world.recv(got, 1, MPI.INT, 0, 8);
            say("from 0 got " + got[0]);
        }
        MPI.Finalize();
        say("finalized");
    }

    /** Comm-mode BLANK: the victim is a blank of the rebuilt COMM_WORLD. */
    private static void blankChecks(Intracomm world, int blank) throws MPIException {
        world.send(new int[] {5}, 1, MPI.INT, blank, 3);
        int[] buf = {-7};
        Status st = world.recv(buf, 1, MPI.INT, blank, 3);
        say("blank p2p: source " + st.getSource() + " count " + st.getCount(MPI.INT) + " buf " + buf[0]);
        world.barrier();
        int[] b = {me == 0 ? 42 : -1};
        world.bcast(b, 1, MPI.INT, 0);
        int[] c = {-1};
        world.bcast(c, 1, MPI.INT, blank);
        int[] max = new int[] {99};
        world.reduce(new int[] {-(me + 1)}, max, 1, MPI.INT, MPI.MAX, 0);
        int[] prod = new int[1];
        world.allReduce(new int[] {me + 2}, prod, 1, MPI.INT, MPI.PROD);
        int[] loc = new int[2];
        world.allReduce(new int[] {me * 10, me}, loc, 1, MPI.INT2, MPI.MAXLOC);
        int[] g = {-1, -1, -1, -1};
        world.gather(new int[] {me + 100}, 1, MPI.INT, g, 1, MPI.INT, 0);
        say("blank colls: bcast " + b[0] + " blank-root " + c[0] + (me == 0 ? " max " + max[0] : "") + " prod " + prod[0]
                + " maxloc " + loc[0] + "," + loc[1] + (me == 0 ? " gather " + Arrays.toString(g) : ""));
        int[] sc = {-1};
        world.scatter(new int[] {10, 11, 12, 13}, 1, MPI.INT, sc, 1, MPI.INT, 0);
        int[] ag = {-1, -1, -1, -1};
        world.allGather(new int[] {me + 200}, 1, MPI.INT, ag, 1, MPI.INT);
        say("blank scatter " + sc[0] + " allgather " + Arrays.toString(ag));
    }

    private static void die() {
        Await.killSelf();
    }

    private static void say(String s) {
        System.out.println("rank " + me + " " + s);
        System.out.flush();
    }
}
