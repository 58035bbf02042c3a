package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import mpi.MPI;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * FT-MPI modes beyond the basic recovery ({@code RecoverySystemTest}) through {@code
 * bin/ftmpirun} with real SIGKILLs: message mode CONT and the FTMPI_* attributes (program {@code
 * testprog.ContProbe}), comm-mode BLANK in every collective ({@code testprog.BlankCollsProbe}) and
 * on an intercommunicator ({@code testprog.BlankInterProbe}),
 * ATOMIC collectives ({@code testprog.AtomicProbe}). What each program does is described there.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FtModesSystemTest {
    /** Runs {@code testprog.probe} through bin/ftmpirun with {@code launcherArgs}; the job must exit 0. */
    private static FtmpirunSystemTest.Result probe(String probe, String... launcherArgs) throws Exception {
        return probe(probe, List.of(launcherArgs));
    }

    /** {@link #probe(String, String...)} with arguments for the program. */
    private static FtmpirunSystemTest.Result probe(String probe, List<String> launcherArgs, String... probeArgs)
            throws Exception {
        FtmpirunSystemTest.Result r = FtmpirunSystemTest.run(FtmpirunSystemTest.probeCmd(
                "org.ftmpi.runtime.testprog." + probe, launcherArgs, probeArgs));
        assertEquals(0, r.code(), r.out() + r.err());
        return r;
    }

    private static void has(FtmpirunSystemTest.Result r, String line) {
        assertTrue(r.out().contains(line + "\n"), "missing '" + line + "' in\n" + r.out() + r.err());
    }

    @Test
    void contCompletesWhatReturnedSuccessAcrossAShrinkRecovery() throws Exception {
        var r = probe("ContProbe", "-np", "4", "--comm-mode", "shrink", "--recovery-mode", "manual", "--msg-mode", "cont");
        for (int me : new int[] {0, 2, 3}) {
            // recovery MANUAL (1), comm SHRINK (3), msg CONT (1), coll NONATOMIC (1), one failure, its ranks
            has(r, "rank " + me + " attrs recovery 1 comm 3 msg 1 coll 1 failed 1 class 16 'FT-MPI recovery:"
                    + " failed processes (ranks in MPI.COMM_WORLD before the recovery): 1'");
            has(r, "rank " + me + " old dup class 5");
            has(r, "rank " + me + " sum 5");
            has(r, "rank " + me + " finalized");
        }
        has(r, "rank 0 blocking recv failed: class 16");
        has(r, "rank 0 tag 13 got 1301 1302"); // the interrupted receive was taken back: nothing swallowed
        has(r, "rank 3 test interrupted pending true");
        has(r, "rank 3 tag 5 got 301 from 1");  // sent before the failure by process 2, now rank 1
        has(r, "rank 3 tag 6 ok from 1");       // a rendezvous started before the failure
        has(r, "rank 2 isend tag 6 done");
        has(r, "rank 3 tag 14 ok from 1");      // the blocking send that was interrupted
        has(r, "rank 3 tag 8 got 808 from 0");  // posted before the failure, sent after it
        has(r, "rank 3 persistent got 2020 from 1");
        has(r, "rank 3 dup tag 4 got 404 from 1"); // the re-created dup has the old dup's context id
        has(r, "rank 0 unresolved 1 same true cancelled true");
    }

    @Test
    void blankSkipsTheBlankInEveryCollective() throws Exception {
        var r = probe("BlankCollsProbe", "-np", "4", "--comm-mode", "blank");
        int[] dense = {0, 1, -1, 2}; // position among the non-blank members 0, 1, 3
        for (int me : new int[] {0, 1, 3}) {
            // gatherv: the blank's segment (displacement 3) untouched; a blank root: nothing touched anywhere
            has(r, "rank " + me + " v: gatherv " + (me == 0 ? "[100, 101, 101, -1, 103]" : "-") + " blank-root"
                    + " [-1, -1, -1, -1, -1] scatterv " + (10 + me) + " allgatherv [200, 201, -1, 203]");
            String a2a = "[" + me + ", " + (10 + me) + ", -1, " + (30 + me) + "]";
            has(r, "rank " + me + " alltoall " + a2a + " alltoallv " + a2a);
            // prefixes over 0, 1, 3 only (no invented 1 or 0 for the blank); exScan leaves the first untouched
            int[] scan = {1, 3, 7}, exscan = {-1, 1, 3}, prod = {2, 6, 30};
            int d = dense[me];
            has(r, "rank " + me + " scan " + scan[d] + " exscan " + exscan[d] + " prodscan " + prod[d]
                    + " reducescatter " + 7 * (me + 1));
            has(r, "rank " + me + " nb: bcast 42 blank-root -1 min 5"
                    + (me == 0 ? " gather [300, 301, -1, 303]" : "") + " scan " + scan[d]);
            has(r, "rank " + me + " probe blank source -2 dup sum 4 split size " + (me == 0 ? 1 : 2));
            has(r, "rank " + me + " finalized");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"nonatomic", "atomic"})
    void blankSkipsTheBlankInIntercommunicatorCollectives(String collMode) throws Exception {
        var r = probe("BlankInterProbe", "-np", "5", "--comm-mode", "blank", "--recovery-mode", "manual", "--coll-mode", collMode);
        // group A: world 0, 2, 4 (ranks 0-2); group B: world 3 (the blank, rank 0) and 1 (rank 1)
        for (int me : new int[] {0, 1, 2, 4}) has(r, "rank " + me + " agree before 1 after 0");
        has(r, "rank 1 blank leader class " + MPI.ERR_RANK);
        has(r, "rank 1 bcast 77 blank-root -1 sum 9 allgather [10, 12, 14]");
        has(r, "rank 1 gather - scatter -1 alltoall [1, 201, 401] reduce 6 reducescatter [900, -1]");
        has(r, "rank 1 nb: sum 9 bcast 88");
        has(r, "rank 1 dup sum 9 merged size 5 rank 4 sum 7");
        has(r, "rank 0 p2p blank: recv source " + MPI.PROC_NULL + " probe source " + MPI.PROC_NULL);
        String[] reduced = {"[2]", "[20]", "[200]"};
        for (int a = 0; a < 3; a++) {
            int me = 2 * a;
            has(r, "rank " + me + " bcast " + (a == 0 ? 77 : -1) + " blank-root -1 sum 2 allgather [-1, 11]");
            has(r, "rank " + me + " gather " + (a == 0 ? "[-1, 11]" : "-") + " scatter " + (20 + a) + " alltoall [-1, "
                    + (100 + a) + "] reduce - reducescatter " + reduced[a]);
            has(r, "rank " + me + " nb: sum 2 bcast " + (a == 0 ? 88 : -1));
            has(r, "rank " + me + " dup sum 2 merged size 5 rank " + a + " sum 7");
        }
        for (int me : new int[] {0, 1, 2, 4}) has(r, "rank " + me + " finalized");
    }

    @Test
    void atomicCollectivesAllRaiseAndLeaveEveryReceiveBufferUntouched() throws Exception {
        var r = probe("AtomicProbe", "-np", "4", "--comm-mode", "shrink", "--coll-mode", "atomic");
        int[] scan = {1, 3, 6, 10};
        for (int me = 0; me < 4; me++) {
            has(r, "rank " + me + " fault-free sum 6 allgather [10, 11, 12, 13] scan " + scan[me]);
            has(r, "rank " + me + " non-blocking ibarrier done iallreduce 6 iallgather [30, 31, 32, 33]");
            has(r, "rank " + me + " ineighborallgather [" + (40 + (me + 3) % 4) + ", " + (40 + (me + 1) % 4) + "]");
        }
        for (int me : new int[] {0, 1, 3}) {
            has(r, "rank " + me + " iallgather raised, buffer [-1, -1, -1, -1]");
            has(r, "rank " + me + " ineighborallgather raised, buffer [-1, -1]");
            // under NONATOMIC the survivors' blocks that arrived are written (e.g. [10, -1, -1, 13])
            has(r, "rank " + me + " allgather raised, buffer [-1, -1, -1, -1]");
            has(r, "rank " + me + " gather raised" + (me == 0 ? ", buffer [-1, -1, -1, -1]" : ""));
            has(r, "rank " + me + " after recovery allgather [10, 11, 13]");
            has(r, "rank " + me + " finalized");
        }
    }

    @Test
    void atomicIntercommunicatorCollectivesAndConstructorsGiveEveryMemberOfBothGroupsTheSameOutcome() throws Exception {
        var r = probe("AtomicInterProbe", "-np", "5", "--comm-mode", "shrink", "--coll-mode", "atomic");
        int[] merged = {0, 3, 1, 4, 2}; // group A (even world ranks) passed high = false: it comes first
        for (int me = 0; me < 5; me++) {
            String ag = me % 2 == 0 ? "[11, 13]" : "[10, 12, 14]", iag = me % 2 == 0 ? "[21, 23]" : "[20, 22, 24]";
            has(r, "rank " + me + " fault-free allgather " + ag + " iallgather " + iag + " merged rank " + merged[me]
                    + " sum 10");
        }
        for (int me : new int[] {0, 1, 2, 4}) {
            // rank 1 receives only from group A (all alive): its own part of the allGather can succeed
            String untouched = me % 2 == 0 ? "[-1, -1]" : "[-1, -1, -1]";
            has(r, "rank " + me + " allgather raised class " + MPI.ERR_OTHER + ", buffer " + untouched);
            has(r, "rank " + me + " iallgather raised, buffer " + untouched);
            has(r, "rank " + me + " dup raised");
            has(r, "rank " + me + " after recovery allgather [10, 11, 12, 14]");
            has(r, "rank " + me + " finalized");
        }
    }

    @Test
    void atomicCreateGroupGivesEveryMemberOfTheGroupTheSameOutcome() throws Exception {
        var r = probe("AtomicGroupProbe", "-np", "5", "--comm-mode", "shrink", "--coll-mode", "atomic");
        for (int me = 0; me < 5; me++) {
            has(r, "rank " + me + " fault-free group size " + (me % 2 == 0 ? "3 sum 6" : "2 sum 4") + " world sum 10");
        }
        // The evens, whom rank 3's death does not concern, all get the communicator or all raise.
        String returned = "evens createGroup returned size 3";
        String raised = "evens createGroup raised class " + MPI.ERR_OTHER;
        boolean all = r.out().contains("rank 0 " + returned + "\n");
        for (int me : new int[] {0, 2, 4}) has(r, "rank " + me + " " + (all ? returned : raised));
        has(r, "rank 1 odds createGroup raised class " + MPI.ERR_OTHER);
        // new ranks 0 1 2 3 (old 0 1 2 4): evens {0, 2} (old 0, 2), odds {1, 3} (old 1, 4); sums of old ranks
        for (int me : new int[] {0, 1, 2, 4}) {
            has(r, "rank " + me + " after recovery group size 2 sum " + (me == 0 || me == 2 ? 2 : 5) + " world sum 7");
            has(r, "rank " + me + " finalized");
        }
    }

    @Test
    void contReportsAtFinalizeWhatWaitedForACommunicatorNeverReCreated() throws Exception {
        var r = probe("ContStaleProbe", "-np", "3", "--comm-mode", "shrink", "--msg-mode", "cont");
        for (int me : new int[] {0, 1}) {
            has(r, "rank " + me + " recovered size 2");
            has(r, "rank " + me + " finalized");
        }
        assertTrue(r.err().contains("ftmpi: rank 1: MPI_Finalize (msg-mode cont): 2 message(s) sent on communicators"
                + " that a recovery invalidated were never received, and 1 receive(s) posted on them never matched"),
                r.err());
        assertTrue(!r.err().contains("ftmpi: rank 0: MPI_Finalize"), r.err()); // nothing waits at rank 0
    }

    /**
     * A process dies inside {@code createIntercomm} (groups of the even and the odd ranks, leaders
     * 0 and 1): a non-leader as it enters the call (2,2), leader 0 before the leaders' exchange
     * (0,3), during it, when the lengths are swapped and the lists are not (0,4), and leader 1
     * after it, when both groups know both lists (1,5). No survivor waits for ever: every
     * survivor of both groups raises, recovers, and both groups make it again.
     */
    @ParameterizedTest
    @CsvSource({"2,2,createIntercomm", "0,3,sendRecv", "0,4,sendRecv", "1,5,sendRecv"})
    void createIntercommWithAProcessDyingAtEachStepRaisesAtEverySurvivorOfBothGroups(int victim, int call, String op)
            throws Exception {
        var r = probe("AtomicCreateInterProbe", List.of("-np", "5", "--comm-mode", "shrink", "--coll-mode", "atomic",
                "--inject", "rank=" + victim + ",at-call=" + call), String.valueOf(victim));
        assertTrue(FtmpirunSystemTest.killedAt(r.err(), victim, call, op), r.err());
        bothGroupsRaisedAndMadeItAgain(r, victim);
    }
    /**
     * A leader dies right after an exchange with the other leader, before its own group hears of
     * it: after the swap of the lists (its group never learns the other group) and after the
     * leaders' last exchange (the other group then has all it needs and, without the agreement
     * over both groups, returned the intercommunicator while this group raised). Every survivor
     * of both groups raises, recovers, and both groups make it again.
     */
    @ParameterizedTest
    @CsvSource({"0,createIntercomm.lists", "1,createIntercomm.lists", "0,createIntercomm.ids", "1,createIntercomm.ids"})
    void aLeaderDyingAfterAnExchangeMakesBothGroupsRaise(int victim, String step) throws Exception {
        var r = probe("AtomicCreateInterProbe", List.of("-np", "5", "--comm-mode", "shrink", "--coll-mode", "atomic",
                "--inject", "rank=" + victim + ",at-step=" + step), String.valueOf(victim));
        assertTrue(FtmpirunSystemTest.killedAtStep(r.err(), victim, step), r.err());
        bothGroupsRaisedAndMadeItAgain(r, victim);
    }

    /**
     * The same under ULFM semantics (recovery mode IGNORE): no recovery ever clears the union
     * agreement's state; every survivor of both groups raises, the survivors shrink COMM_WORLD
     * and make the intercommunicator over it. The job's status is the victim's (137).
     */
    @ParameterizedTest
    @CsvSource({"1,createIntercomm.ids", "0,createIntercomm.lists"})
    void underUlfmALeaderDyingAfterAnExchangeMakesBothGroupsRaise(int victim, String step) throws Exception {
        var r = FtmpirunSystemTest.run(FtmpirunSystemTest.probeCmd("org.ftmpi.runtime.testprog.AtomicCreateInterProbe",
                List.of("-np", "5", "--comm-mode", "shrink", "--recovery-mode", "ignore", "--coll-mode", "atomic",
                        "--inject", "rank=" + victim + ",at-step=" + step), String.valueOf(victim), "ulfm"));
        assertEquals(137, r.code(), r.out() + r.err());
        assertTrue(FtmpirunSystemTest.killedAtStep(r.err(), victim, step), r.err());
        bothGroupsRaisedAndMadeItAgain(r, victim);
    }

    /** {@code AtomicCreateInterProbe}: every survivor raised, recovered, and both groups made the intercommunicator again. */
    private static void bothGroupsRaisedAndMadeItAgain(FtmpirunSystemTest.Result r, int victim) {
        int[] left = java.util.stream.IntStream.range(0, 5).filter(w -> w != victim).toArray(); // new rank -> old
        for (int i = 0; i < left.length; i++) {
            int me = left[i];
            has(r, "rank " + me + " createIntercomm raised class " + MPI.ERR_OTHER);
            int other = i % 2 == 0 ? left[1] + left[3] : left[0] + left[2]; // the other group's old ranks
            has(r, "rank " + me + " after recovery remote size 2 sum " + other);
            has(r, "rank " + me + " finalized");
        }
    }
}
