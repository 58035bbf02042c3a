package org.ftmpi.api;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import mpi.*;
import org.ftmpi.LocalJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** MPI_THREAD_MULTIPLE: many threads of a rank in the library at once; wildcard fairness. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ThreadMultipleTest {

    /**
     * Runs the tasks on their own threads and rethrows the first failure. A failing task aborts
     * the job, so that the other threads' pending operations end instead of waiting forever.
     */
    static void runThreads(Comm world, List<Callable<Void>> tasks) throws Exception {
        List<Thread> threads = new ArrayList<>();
        Throwable[] errors = new Throwable[tasks.size()];
        for (int i = 0; i < tasks.size(); i++) {
            int k = i;
            threads.add(Thread.ofPlatform().name(Thread.currentThread().getName() + "-t" + i).start(() -> {
                try {
                    tasks.get(k).call();
                } catch (Throwable t) {
                    errors[k] = t;
                    try {
                        world.abort(1);
                    } catch (MPIException ignored) {
                        // already failing
                    }
                }
            }));
        }
        for (Thread t : threads) t.join();
        Throwable first = null;
        for (Throwable t : errors) {
            // Prefer the cause over the abort echoes it produced in the other threads.
            if (t != null && (first == null || String.valueOf(first.getMessage()).contains("being aborted"))) first = t;
        }
        if (first instanceof Exception e) throw e;
        if (first != null) throw new AssertionError(first);
    }

    /** Message {@code i} on tag {@code t}: eager mostly, every fifth one rendezvous. */
    private static int sizeOf(int i) {
        return i % 5 == 4 ? 20_000 : 2 + i % 7; // 20 000 ints = 80 KB > the TCP eager limit
    }

    @Test
    void threadsSendAndReceiveConcurrentlyOnDistinctTags() throws Exception {
        int threads = 3;
        int perThread = 60;
        LocalJob.run(2, world -> {
            int peer = 1 - world.getRank();
            List<Callable<Void>> tasks = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int tag = 10 + t;
                tasks.add(() -> { // sender of tag t
                    for (int i = 0; i < perThread; i++) {
                        int[] m = new int[sizeOf(i)];
                        m[0] = world.getRank() * 1_000_000 + tag * 1000 + i;
                        m[m.length - 1] = -i;
                        world.send(m, m.length, MPI.INT, peer, tag);
                    }
                    return null;
                });
                tasks.add(() -> { // receiver of tag t: the per-tag order holds
                    int[] m = new int[20_000];
                    for (int i = 0; i < perThread; i++) {
                        Status s = world.recv(m, m.length, MPI.INT, peer, tag);
                        int n = s.getCount(MPI.INT);
                        assertEquals(sizeOf(i), n, "size of message " + i + " on tag " + tag);
                        assertEquals(peer * 1_000_000 + tag * 1000 + i, m[0], "order on tag " + tag);
                        assertEquals(-i, m[n - 1]);
                        assertEquals(tag, s.getTag());
                    }
                    return null;
                });
            }
            runThreads(world, tasks);
        });
    }

    @Test
    void anyTagReceiversOnSeveralThreadsAccountForEveryMessage() throws Exception {
        int senders = 3;
        int receivers = 3;
        int perSender = 80;
        LocalJob.run(3, world -> {
            int rank = world.getRank();
            if (rank != 0) {
                List<Callable<Void>> tasks = new ArrayList<>();
                for (int t = 0; t < senders; t++) {
                    int tag = t;
                    tasks.add(() -> {
                        for (int i = 0; i < perSender; i++) {
                            int[] m = new int[sizeOf(i)];
                            m[0] = rank * 1_000_000 + tag * 1000 + i;
                            if (i % 3 == 0) {
                                world.sSend(m, m.length, MPI.INT, 0, tag);
                            } else {
                                world.send(m, m.length, MPI.INT, 0, tag);
                            }
                        }
                        return null;
                    });
                }
                runThreads(world, tasks);
            } else {
                int total = (world.getSize() - 1) * senders * perSender;
                Set<Integer> seen = ConcurrentHashMap.newKeySet();
                int[] quota = new int[receivers];
                for (int i = 0; i < total; i++) quota[i % receivers]++;
                List<Callable<Void>> tasks = new ArrayList<>();
                for (int t = 0; t < receivers; t++) {
                    int mine = quota[t];
                    tasks.add(() -> {
                        int[] m = new int[20_000];
                        for (int i = 0; i < mine; i++) {
                            Status s = world.recv(m, m.length, MPI.INT, MPI.ANY_SOURCE, MPI.ANY_TAG);
                            int v = m[0];
                            assertEquals(s.getSource(), v / 1_000_000, "status source matches the message");
                            assertEquals(s.getTag(), v / 1000 % 1000, "status tag matches the message");
                            assertEquals(sizeOf(v % 1000), s.getCount(MPI.INT));
                            assertTrue(seen.add(v), "message " + v + " received twice");
                        }
                        return null;
                    });
                }
                runThreads(world, tasks);
                assertEquals(total, seen.size(), "every message accounted for");
                assertNull(world.iProbe(MPI.ANY_SOURCE, MPI.ANY_TAG), "no message left over");
            }
        });
    }

    /**
     * Rank 1 floods rank 0, which receives with ANY_SOURCE; rank 2 sends one message in the
     * middle of the flood. It must be received while the flood goes on (rank 1 stops only once
     * rank 0 has it), or the test times out.
     */
    @Test
    void anySourceDoesNotStarveASender() throws Exception {
        final int flood = 1, single = 2, go = 3, stop = 4, end = 5;
        LocalJob.run(3, world -> {
            int rank = world.getRank();
            if (rank == 0) {
                int[] v = new int[1];
                int fromFlood = 0;
                boolean gotSingle = false;
                while (!gotSingle) {
                    Status s = world.recv(v, 1, MPI.INT, MPI.ANY_SOURCE, MPI.ANY_TAG);
                    if (s.getSource() == 1) {
                        assertEquals(flood, s.getTag());
                        assertEquals(fromFlood, v[0], "flood order");
                        if (fromFlood++ == 0) world.send(new int[1], 1, MPI.INT, 2, go);
                    } else {
                        assertEquals(2, s.getSource());
                        assertEquals(single, s.getTag());
                        gotSingle = true;
                    }
                }
                world.send(new int[1], 1, MPI.INT, 1, stop);
                // Drain the rest of the flood; the end marker comes last (non-overtaking).
                while (true) {
                    Status s = world.recv(v, 1, MPI.INT, 1, MPI.ANY_TAG);
                    if (s.getTag() == end) {
                        assertEquals(fromFlood, v[0], "every flood message was received");
                        break;
                    }
                    assertEquals(fromFlood++, v[0], "flood order");
                }
            } else if (rank == 1) {
                int i = 0;
                while (world.iProbe(0, stop) == null) {
                    int[] m = {i++};
                    // Every 64th message synchronous: keeps the flood continuous but bounded.
                    if (i % 64 == 0) {
                        world.sSend(m, 1, MPI.INT, 0, flood);
                    } else {
                        world.send(m, 1, MPI.INT, 0, flood);
                    }
                }
                world.recv(new int[1], 1, MPI.INT, 0, stop);
                world.send(new int[] {i}, 1, MPI.INT, 0, end);
            } else {
                world.recv(new int[1], 1, MPI.INT, 0, go);
                world.send(new int[] {42}, 1, MPI.INT, 0, single);
            }
        });
    }
}
