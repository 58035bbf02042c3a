package org.ftmpi.runtime.testprog;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.ftmpi.runtime.ControlListener;
import org.ftmpi.runtime.JobInfo;
import org.ftmpi.runtime.RankRuntime;
import org.ftmpi.runtime.RankRuntimes;

/**
 * Rank program for the failure-detection system tests and the detection benchmark; uses only
 * the RankRuntime API. {@code DetectProbe EXPECTED HOLD_MS}: prints
 * {@code ready rank R pid P job J host H}, then waits until it was told of EXPECTED failures or
 * HOLD_MS passed, printing {@code notice rank R failed F at US how} (US = epoch microseconds)
 * for every notice, then finalizes. With {@code -Ddetectprobe.child=R}, rank R first starts a
 * child process ({@code sleep 600}) and prints {@code child rank R pid P}: the fencing tests
 * check that it dies with its rank.
 */
public final class DetectProbe {
    private DetectProbe() {}

    public static void main(String[] args) throws Exception {
        int expected = Integer.parseInt(args[0]);
        long holdMs = Long.parseLong(args[1]);
        RankRuntime rt = RankRuntimes.fromEnvironment();
        int me = rt.preliminaryInfo().rank();
        List<Integer> seen = new ArrayList<>();
        rt.setListener(new ControlListener() {
            @Override
            public void processFailed(int rank, long procId, String how) {
                long us = ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
                say("notice rank " + me + " failed " + rank + " at " + us + " " + how);
                synchronized (seen) {
                    seen.add(rank);
                    seen.notifyAll();
                }
            }

            @Override
            public void abort(int exitCode, String reason) {
                say("abort rank " + me + " " + exitCode + " " + reason);
            }
        });
        if (Integer.toString(me).equals(System.getProperty("detectprobe.child"))) {
            Process child = new ProcessBuilder("sleep", "600").start();
            say("child rank " + me + " pid " + child.pid());
        }
        JobInfo info = rt.exchange(Map.of());
        say("ready rank " + me + " pid " + ProcessHandle.current().pid() + " job "
                + Long.toHexString(info.jobId()) + " host " + info.hosts()[me]);
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(holdMs);
        // Until the expected notices arrived; expecting none, for the whole hold (none may come).
        synchronized (seen) {
            while (expected == 0 || seen.size() < expected) {
                long left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
                if (left <= 0) break;
                seen.wait(left);
            }
        }
        say("done rank " + me + " notices " + seen.size());
        rt.finalizeBarrier();
        rt.close();
    }

    private static void say(String s) {
        synchronized (System.out) {
            System.out.println(s);
            System.out.flush();
        }
    }
}
