package org.ftmpi.transport.shm.it;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.ProcFailedException;
import org.ftmpi.testutil.Await;

/**
 * Rank program of {@link ShmRebuildSystemTest} (comm-mode REBUILD, recovery AUTO, 3 ranks on
 * one host): after a barrier rank 1 kills itself with SIGKILL; the survivors and its
 * replacement then run rounds of traffic with the replacement until one round is complete with
 * every rank alive: an allreduce, small, rendezvous-sized (heap) and single-copy-sized (direct
 * buffer) messages between each survivor and rank 1 both ways, a broadcast from rank 1 and an
 * allgather, every value checked. Arguments: {@code once|twice DIR}; with {@code twice} the
 * first replacement kills itself again right after its first complete round (its re-made pairs
 * then get re-made once more, for the second replacement); the marker file in DIR tells a
 * replacement which one it is.
 */
public final class ShmRebuildJob {
    private ShmRebuildJob() {}

    static final int VICTIM = 1;
    private static final int RNDV = 200_000;
    private static final int PINNED = 1 << 20;

    public static void main(String[] args) throws Exception {
        boolean twice = args[0].equals("twice");
        Path marker = Path.of(args[1], "first-replacement-died");
        MPI.Init(args);
        Intracomm world = MPI.COMM_WORLD;
        world.setErrhandler(MPI.ERRORS_RETURN);
        int me = world.getRank();
        boolean dieAfterRound = false;
        if (MPI.isRestarted()) {
            say(me, "restarted");
            dieAfterRound = twice && !Files.exists(marker);
        } else {
            if (args[0].equals("spare-ready")) awaitPairMadeAheadForTheSpare(me, world.getSize());
            try {
                world.barrier();
            } catch (ProcFailedException e) {
                // the victim died while this rank was still in the barrier: recovered already
            }
            if (me == VICTIM) Await.killSelf();
        }
        int rounds = 0;
        while (true) {
            try {
                rounds++;
                round(world, me, rounds);
                int[] dying = new int[1];
                world.allReduce(new int[] {dieAfterRound ? 1 : 0}, dying, 1, MPI.INT, MPI.MAX);
                if (dying[0] == 0) break;
                if (dieAfterRound) {
                    Files.createFile(marker);
                    Await.killSelf();
                }
            } catch (ProcFailedException e) {
                // recovered (AUTO): the victim has a replacement now; run the round again
            }
        }
        say(me, "exchanged with the replacement");
        if (args[0].equals("spare-ready") && me == 0) awaitVictimsPairForTheSpareRemoved(me, world.getSize());
        MPI.Finalize();
        say(me, "finalized");
    }

    /**
     * Waits until this rank has made its shared-memory pair file for the job's first warm spare
     * (process id {@code size + 1}) ahead of need, so that the failure finds it made.
     */
    private static void awaitPairMadeAheadForTheSpare(int me, int size) {
        Path file = madeAheadForTheSpare(Long.parseLong(System.getenv(org.ftmpi.runtime.RuntimeEnv.PROC_ID)), size);
        Await.until("rank " + me + "'s pair file for the warm spare", java.time.Duration.ofSeconds(90),
                () -> Files.exists(file));
    }

    /** The pair file process {@code maker} makes ahead for the job's first warm spare (process id {@code size + 1}). */
    private static Path madeAheadForTheSpare(long maker, int size) {
        long jobId = Long.parseUnsignedLong(System.getenv(org.ftmpi.runtime.RuntimeEnv.JOB_ID), 16);
        return Path.of(org.ftmpi.runtime.SharedMemoryFiles.DEFAULT_DIR,
                org.ftmpi.runtime.SharedMemoryFiles.spareFilePrefix(jobId, maker) + "p" + (size + 1));
    }

    /**
     * The victim's own pair file for the spare that took over its rank: nobody uses it, and the
     * launcher removes it after the victim's death (not only at the job's end).
     */
    private static void awaitVictimsPairForTheSpareRemoved(int me, int size) {
        Path file = madeAheadForTheSpare(VICTIM + 1, size); // the ranks' process ids are 1..size
        Await.until("the removal of the victim's pair file " + file, java.time.Duration.ofSeconds(60),
                () -> !Files.exists(file));
        say(me, "the victim's pair file made ahead is gone");
    }

    private static void round(Intracomm world, int me, int round) throws MPIException {
        int n = world.getSize();
        int[] sum = new int[1];
        world.allReduce(new int[] {me}, sum, 1, MPI.INT, MPI.SUM);
        check(sum[0] == n * (n - 1) / 2, me, "allreduce sum " + sum[0]);
        if (me == VICTIM) {
            for (int s = 0; s < n; s++) {
                if (s == VICTIM) continue;
                echo(world, s, me);
            }
        } else {
            int[] small = {me * 1000 + round};
            world.send(small, 1, MPI.INT, VICTIM, 1);
            world.recv(small, 1, MPI.INT, VICTIM, 2);
            check(small[0] == me * 1000 + round + 1, me, "small echo " + small[0]);
            byte[] big = new byte[RNDV];
            big[RNDV - 1] = (byte) me;
            world.send(big, RNDV, MPI.BYTE, VICTIM, 3);
            world.recv(big, RNDV, MPI.BYTE, VICTIM, 4);
            check(big[RNDV - 1] == (byte) (me + 1) && big[0] == 7, me, "rendezvous echo");
            ByteBuffer d = MPI.newByteBuffer(PINNED);
            d.put(PINNED - 1, (byte) me);
            world.send(d, PINNED, MPI.BYTE, VICTIM, 5);
            world.recv(d, PINNED, MPI.BYTE, VICTIM, 6);
            check(d.get(PINNED - 1) == (byte) (me + 2) && d.get(0) == 9, me, "single-copy echo");
        }
        int[] b = new int[16_384];
        if (me == VICTIM) java.util.Arrays.fill(b, 4242);
        world.bcast(b, b.length, MPI.INT, VICTIM);
        check(b[0] == 4242 && b[b.length - 1] == 4242, me, "bcast from the replacement");
        int[] all = new int[n];
        world.allGather(new int[] {me * 10}, 1, MPI.INT, all, 1, MPI.INT);
        for (int r = 0; r < n; r++) check(all[r] == r * 10, me, "allgather " + java.util.Arrays.toString(all));
    }

    /** Rank {@link #VICTIM}'s side of one survivor's exchange: each message comes back changed. */
    private static void echo(Intracomm world, int s, int me) throws MPIException {
        int[] small = new int[1];
        world.recv(small, 1, MPI.INT, s, 1);
        small[0]++;
        world.send(small, 1, MPI.INT, s, 2);
        byte[] big = new byte[RNDV];
        world.recv(big, RNDV, MPI.BYTE, s, 3);
        check(big[RNDV - 1] == (byte) s, me, "rendezvous from " + s);
        big[RNDV - 1]++;
        big[0] = 7;
        world.send(big, RNDV, MPI.BYTE, s, 4);
        ByteBuffer d = MPI.newByteBuffer(PINNED);
        world.recv(d, PINNED, MPI.BYTE, s, 5);
        check(d.get(PINNED - 1) == (byte) s, me, "single-copy from " + s);
        d.put(PINNED - 1, (byte) (s + 2)).put(0, (byte) 9);
        world.send(d, PINNED, MPI.BYTE, s, 6);
    }

    private static void check(boolean ok, int me, String what) {
        if (!ok) throw new AssertionError("rank " + me + ": wrong " + what);
    }

    private static void say(int me, String s) {
        System.out.println("rank " + me + " " + s);
        System.out.flush();
    }
}
