package org.ftmpi.runtime.testprog;

import java.nio.IntBuffer;
import java.util.Arrays;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import org.ftmpi.testutil.Await;

/** Helpers of the FT-MPI mode probes: their output lines and their "untouched" buffers. */
final class ProbeLines {
    private ProbeLines() {}

    /** MPI.Init, then MPI.COMM_WORLD with errors returned (the probes catch them). */
    static Intracomm init(String[] args) throws MPIException {
        MPI.Init(args);
        Intracomm w = MPI.COMM_WORLD;
        w.setErrhandler(MPI.ERRORS_RETURN);
        return w;
    }

    /** Prints {@code rank R s} (R: the rank in the original COMM_WORLD) and flushes. */
    static void say(int me, String s) {
        System.out.println("rank " + me + " " + s);
        System.out.flush();
    }

    /** {@code n} ints of -1: a block a collective must leave alone still reads -1. */
    static int[] filled(int n) {
        int[] a = new int[n];
        Arrays.fill(a, -1);
        return a;
    }

    /** A direct int buffer of {@code n} entries, all -1 (non-blocking collectives take direct buffers). */
    static IntBuffer direct(int n) {
        IntBuffer b = MPI.newIntBuffer(n);
        for (int i = 0; i < n; i++) b.put(i, -1);
        return b;
    }

    /** The entries of {@code b}, as {@link Arrays#toString(int[])} prints them. */
    static String contents(IntBuffer b) {
        int[] a = new int[b.capacity()];
        for (int i = 0; i < a.length; i++) a[i] = b.get(i);
        return Arrays.toString(a);
    }

    /** Tag of {@link #syncThenDie}'s messages. */
    private static final int LEFT = 30_001;

    /**
     * Collective over {@code comm}: the members with {@code victim} true kill themselves (SIGKILL)
     * once every other member has left this call, so that no survivor is still inside it when the
     * death is noticed. (A plain {@code barrier(); if (victim) die();} races: the victim may leave
     * the barrier and die while a survivor still waits for its last message, and under FT-MPI
     * every pending call fails once the death is known; the robust-futex death watch tells the
     * survivors within a millisecond, faster than that message may be read.)
     *
     * <p>Several victims: every survivor sends to the victims in rank order, so once the last
     * victim has every survivor's message, every survivor has left; the last victim then tells
     * the other victims and dies, and they die too (also if that death reaches them before its
     * message: their wait then fails, and they are victims anyway). So no victim dies while a
     * survivor is still sending to another one.
     */
    static void syncThenDie(Intracomm comm, boolean victim) throws MPIException {
        int n = comm.getSize();
        int[] flags = new int[n];
        comm.allGather(new int[] {victim ? 1 : 0}, 1, MPI.INT, flags, 1, MPI.INT);
        if (victim) {
            int me = comm.getRank(), last = n - 1;
            while (flags[last] == 0) last--;
            try {
                if (me == last) {
                    for (int r = 0; r < n; r++) if (flags[r] == 0) comm.recv(new int[1], 1, MPI.INT, r, LEFT);
                    for (int r = 0; r < last; r++) if (flags[r] == 1) comm.send(new int[1], 1, MPI.INT, r, LEFT);
                } else {
                    for (int r = 0; r < n; r++) if (flags[r] == 0) comm.recv(new int[1], 1, MPI.INT, r, LEFT);
                    comm.recv(new int[1], 1, MPI.INT, last, LEFT);
                }
            } catch (MPIException e) {
                // another victim died first, after every survivor had left: die as planned
            }
            Await.killSelf();
        }
        for (int r = 0; r < n; r++) if (flags[r] == 1) comm.send(new int[1], 1, MPI.INT, r, LEFT);
    }

    /**
     * {@link #syncThenDie} for one victim, then (MANUAL recovery) every survivor waits for a
     * message the victim never sends, and recovers when that receive fails.
     */
    static void killAndRecover(Intracomm comm, int victim) throws MPIException {
        syncThenDie(comm, comm.getRank() == victim);
        recoverFrom(comm, victim);
    }

    /** The second half of {@link #killAndRecover}: waits until the victim is known dead, then recovers. */
    static void recoverFrom(Intracomm comm, int victim) throws MPIException {
        try {
            comm.recv(new int[1], 1, MPI.INT, victim, 1);
        } catch (mpi.ProcFailedException e) {
            MPI.recover();
        }
    }
}
