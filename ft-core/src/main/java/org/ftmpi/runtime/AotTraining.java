package org.ftmpi.runtime;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.Request;

/**
 * The training run of the ranks' ahead-of-time cache ({@link AotCache}): the program of a real
 * job of {@link AotCache#TRAINING_NP} ranks under {@code --recovery-mode ignore}, started by
 * {@code ftmpirun} with JDK 25's {@code -XX:AOTMode=record}. What it runs is what the cache then
 * has loaded, linked (lambdas and method handles included) and profiled before a job's first
 * call: point-to-point of every protocol (eager, rendezvous, the single copy of large messages),
 * streams of small non-blocking messages from direct buffers ({@link #streams}),
 * the collectives, communicator management, the ULFM operations, and a real failure: rank 0
 * SIGKILLs the last rank while the others wait for it, and the survivors take the failure path
 * (the controller's notice, {@code ProcFailedException}, {@code getFailed}, {@code ackFailed},
 * {@code agree}, {@code shrink}). Rank 0 then writes its process id to {@value #RANK0_FILE} in
 * the working directory: the launcher takes rank 0's recorded configuration, which has seen all
 * of it.
 *
 * <p>What it leaves out: the FT-MPI recovery warm-up among threads ({@link WarmUp#failures}),
 * which the training ran in session 14. Its threads-as-ranks jobs run the engine over another
 * transport, so the cached profiles of the engine's hot path saw more kinds of transport and
 * request than a job does, and the compiled point-to-point path of every job was more general
 * than it needs (8 B latency 0.19-0.26 us against 0.17-0.18 us without it, same machine,
 * interleaved); SHRINK, BLANK and REBUILD recovery times were not slower without it
 * (docs/benchmarks.md, "Session 15").
 */
public final class AotTraining {
    /** Rank 0 writes its process id here (working directory) once it is done. */
    static final String RANK0_FILE = "rank0.pid";
    private static final int ROUNDS = 50;

    private AotTraining() {}

    public static void main(String[] args) throws Exception {
        MPI.Init(args);
        Intracomm world = MPI.COMM_WORLD;
        world.setErrhandler(MPI.ERRORS_RETURN); // the failure below raises ProcFailedException
        int rank = world.getRank(), n = world.getSize();
        if (n < 3) throw new IllegalStateException("the AOT training job needs at least 3 ranks, got " + n);
        Intracomm pair = world.split(rank / 2, rank);
        if (pair.getSize() == 2) {
            tails(pair); // first: profiled while the copy paths still run in profiling code
            WarmUp.exercise(pair, ROUNDS);
            streams(pair);
        }
        pair.free();
        collectives(world);
        largeMessages(world);
        failure(world);
        if (rank == 0) Files.writeString(Path.of(RANK0_FILE), Long.toString(ProcessHandle.current().pid()));
        MPI.Finalize();
    }

    /**
     * Small messages of every length up to 16 bytes and odd lengths above, between byte arrays,
     * direct buffers and a mapped file's buffer, in every pairing, with the receive posted
     * before the message arrives and after it (the unexpected path). Why: the JDK's segment copy
     * ({@code MemorySegment.copy}) copies a length's 4-, 2- and 1-byte tail in separate branches,
     * and the compiler of a job that maps the cache compiles from this run's profiles. When only
     * one kind of segment had passed a branch here (the library's own byte-array payloads), the
     * compiled copy assumed that kind there, and the first 1-byte message from a direct buffer
     * in a job threw the compiled send and receive paths away, again and again: 13-15 such
     * deoptimisations per rank JVM in a 2-second latency run, each followed by a recompilation
     * of the hot path on the cores the two ranks spin on; none with this exercise
     * (docs/benchmarks.md, "Session 15"). Three kinds of segment through
     * each branch leave no single kind to assume.
     */
    private static void tails(Intracomm pair) throws MPIException, IOException {
        int rank = pair.getRank(), peer = 1 - rank, max = 4096;
        Path file = Path.of("tails-" + rank + "-" + ProcessHandle.current().pid() + ".bin"); // working directory
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            Object[] kinds = {new byte[max], MPI.newByteBuffer(max), ch.map(FileChannel.MapMode.READ_WRITE, 0, max)};
            Object[] into = {new byte[max], MPI.newByteBuffer(max), ch.map(FileChannel.MapMode.READ_WRITE, max, max)};
            int[] lengths = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 31, 33, 63, 65, 127, 255, 257, 1023, 4095};
            byte[] go = new byte[0];
            for (int round = 0; round < 4; round++) {
                boolean sender = rank == (round & 1); // both roles on rank 0, whose profiles the cache keeps
                for (Object s : kinds) {
                    for (Object r : into) {
                        for (int len : lengths) {
                            // the receive (usually) posted before the message arrives: copied from the ring
                            if (sender) {
                                pair.recv(go, 0, MPI.BYTE, peer, 8);
                                pair.send(s, len, MPI.BYTE, peer, 9);
                            } else {
                                pair.send(go, 0, MPI.BYTE, peer, 8);
                                pair.recv(r, len, MPI.BYTE, peer, 9);
                            }
                            // the message before the receive: kept as an unexpected message, then copied out
                            if (sender) pair.send(s, len, MPI.BYTE, peer, 10);
                            pair.barrier();
                            if (!sender) pair.recv(r, len, MPI.BYTE, peer, 10);
                        }
                    }
                }
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /**
     * Windows of 64 non-blocking messages from direct buffers (osu_bw's pattern), 8 B and 1 KiB,
     * each rank sending once and receiving once. Why: {@link #tails} and {@link WarmUp#exercise}
     * send from byte arrays, every primitive array, direct and mapped buffers in about equal
     * numbers, and a job's compiled send path kept to those profiles: an 8-byte {@code iSend}
     * took 62 ns with the cache and 40-49 ns without it (docs/benchmarks.md, "Session 22").
     * 51 200 messages from direct buffers here make them the common case of the shared send and
     * receive code, while the other kinds stay in the profiles (no guess that an array sender
     * would contradict): the median 8-byte window of 64 went from 95-97 to 80-82 ns per message.
     */
    private static void streams(Intracomm pair) throws MPIException {
        int rank = pair.getRank(), peer = 1 - rank, window = 64;
        ByteBuffer buf = MPI.newByteBuffer(1024), ack = MPI.newByteBuffer(4);
        Request[] reqs = new Request[window];
        for (int role = 0; role < 2; role++) {
            boolean sender = rank == role; // both roles on rank 0, whose profiles the cache keeps
            for (int size : new int[] {8, 1024}) {
                for (int i = 0; i < 400; i++) {
                    for (int w = 0; w < window; w++) {
                        reqs[w] = sender ? pair.iSend(buf, size, MPI.BYTE, peer, 11) : pair.iRecv(buf, size, MPI.BYTE, peer, 11);
                    }
                    Request.waitAll(reqs);
                    if (sender) pair.recv(ack, 4, MPI.BYTE, peer, 12);
                    else pair.send(ack, 4, MPI.BYTE, peer, 12);
                }
            }
        }
    }

    /** The collectives on all ranks, blocking and non-blocking, with the common types and ops. */
    private static void collectives(Intracomm w) throws MPIException {
        int n = w.getSize(), rank = w.getRank();
        int[] i1 = {rank}, in = new int[n], out = new int[n], counts = new int[n];
        java.util.Arrays.fill(counts, 1);
        long[] l1 = {rank}, ln = new long[n];
        double[] d = new double[64], d2 = new double[64];
        float[] f = new float[8], f2 = new float[8];
        ByteBuffer b = MPI.newByteBuffer(64), b2 = MPI.newByteBuffer(64), b3 = MPI.newByteBuffer(64);
        for (int round = 0; round < ROUNDS; round++) {
            int root = round % n;
            w.barrier();
            w.bcast(d, d.length, MPI.DOUBLE, root);
            w.reduce(d, d2, d.length, MPI.DOUBLE, MPI.SUM, root);
            w.allReduce(i1, out, 1, MPI.INT, MPI.SUM);
            w.allReduce(l1, ln, 1, MPI.LONG, MPI.MAX);
            w.allReduce(f, f2, f.length, MPI.FLOAT, MPI.MIN);
            w.allReduce(d, d.length, MPI.DOUBLE, MPI.SUM);
            w.allReduce(b, b2, 16, MPI.INT, MPI.PROD);
            w.gather(i1, 1, MPI.INT, in, 1, MPI.INT, root);
            w.scatter(in, 1, MPI.INT, i1, 1, MPI.INT, root);
            w.allGather(l1, 1, MPI.LONG, ln, 1, MPI.LONG);
            w.allToAll(in, 1, MPI.INT, out, 1, MPI.INT);
            w.reduceScatter(in, i1, counts, MPI.INT, MPI.SUM);
            w.scan(i1, out, 1, MPI.INT, MPI.SUM);
            Request[] r = {w.iBarrier(), w.iAllReduce(b, b2, 8, MPI.INT, MPI.SUM), w.iBcast(b3, 64, MPI.BYTE, root)};
            Request.waitAll(r);
            if (round % 20 == 0) {
                Intracomm d1 = w.dup();
                Intracomm s = d1.split(rank % 2, -rank);
                s.allReduce(i1, out, 1, MPI.INT, MPI.SUM);
                s.free();
                d1.agree(1);
                d1.free();
            }
        }
    }

    /**
     * Messages of each protocol in a ring: eager (16 KiB), rendezvous with the data through the
     * ring (48 KiB: above the shared-memory eager limit, below its single-copy size), and the
     * single copy of large ones. Without the 48 KiB size the cached profiles had seen DATA
     * headers only on the heap (the single-copy path's), and a job's first 32-64 KiB message,
     * whose DATA header lies in the ring, deoptimised the compiled receive path (session 15).
     */
    private static void largeMessages(Intracomm w) throws MPIException {
        int n = w.getSize(), rank = w.getRank(), next = (rank + 1) % n, prev = (rank + n - 1) % n;
        for (int size : new int[] {16 << 10, 48 << 10, 256 << 10, 4 << 20}) {
            byte[] s = new byte[size], r = new byte[size];
            ByteBuffer sd = MPI.newByteBuffer(size), rd = MPI.newByteBuffer(size);
            for (int i = 0; i < 10; i++) {
                w.sendRecv(s, size, MPI.BYTE, next, 1, r, size, MPI.BYTE, prev, 1);
                Request q = w.iRecv(rd, size, MPI.BYTE, prev, 2);
                w.send(sd, size, MPI.BYTE, next, 2);
                q.waitFor();
            }
        }
    }

    /** Rank 0 SIGKILLs the last rank while the others wait for it; the survivors run the ULFM operations. */
    private static void failure(Intracomm w) throws MPIException {
        int n = w.getSize(), rank = w.getRank(), victim = n - 1;
        long[] pids = new long[n];
        w.allGather(new long[] {ProcessHandle.current().pid()}, 1, MPI.LONG, pids, 1, MPI.LONG);
        Intracomm alive = w.split(rank == victim ? MPI.UNDEFINED : 0, rank);
        w.barrier();
        if (rank == victim) {
            w.recv(new int[1], 1, MPI.INT, 0, 77); // never sent: killed here
            throw new IllegalStateException("AOT training: the victim was not killed");
        }
        Request pending = w.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, victim, 77);
        alive.barrier();
        if (rank == 0) ProcessHandle.of(pids[victim]).ifPresent(ProcessHandle::destroyForcibly);
        Intracomm s = WarmUp.survive(w, victim, pending);
        w.iAgree(MPI.newIntBuffer(1).put(0, 1)).waitFor();
        int[] one = {1}, r1 = new int[1];
        for (int i = 0; i < ROUNDS; i++) {
            s.allReduce(one, r1, 1, MPI.INT, MPI.SUM);
            s.barrier();
        }
        Intracomm d = s.dup();
        d.revoke();
        Intracomm s2 = d.shrink();
        s2.allReduce(one, r1, 1, MPI.INT, MPI.SUM);
        s2.free();
        d.free();
        s.free();
        alive.free();
    }
}
