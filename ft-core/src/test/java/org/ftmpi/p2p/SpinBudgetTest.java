package org.ftmpi.p2p;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The adaptive spin phase of the engine's waiters, and the progress agent's sleeps. */
class SpinBudgetTest {

    @Test
    void startsAtTheLongestSpinPhase() {
        assertEquals(SpinBudget.MAX, new SpinBudget().polls());
    }

    @Test
    void sharedCoreYieldsHalveTheBudgetDownToTheMinimum() {
        SpinBudget b = new SpinBudget();
        int expected = SpinBudget.MAX;
        for (int i = 0; i < 20; i++) {
            b.streakStarted();
            b.spent(SpinBudget.SHARED_CORE_NS);
            expected = Math.max(SpinBudget.MIN, expected / 2);
            assertEquals(expected, b.polls(), "after " + (i + 1) + " shared-core yields");
        }
        assertEquals(SpinBudget.MIN, b.polls());
    }

    @Test
    void theStreakAfterASharedCoreYieldGivesNothingBack() {
        SpinBudget b = new SpinBudget();
        b.streakStarted();
        b.spent(SpinBudget.SHARED_CORE_NS);
        int after = b.polls();
        b.streakStarted(); // ends the shrunk streak: no growth
        assertEquals(after, b.polls());
        b.streakStarted(); // the streak before ended within its budget: growth
        assertEquals(after + (after >> 2) + 1, b.polls());
    }

    @Test
    void otherStreaksGrowItBackToTheMaximum() {
        SpinBudget b = new SpinBudget();
        for (int i = 0; i < 10; i++) {
            b.streakStarted();
            b.spent(SpinBudget.SHARED_CORE_NS);
        }
        b.streakStarted();
        int steps = 0;
        while (b.polls() < SpinBudget.MAX) {
            int before = b.polls();
            b.streakStarted();
            assertEquals(Math.min(SpinBudget.MAX, before + (before >> 2) + 1), b.polls());
            steps++;
        }
        assertEquals(SpinBudget.MAX, b.polls());
        // From the minimum back to the maximum in a few dozen fast exchanges, not thousands.
        assertTrue(steps < 20, "steps " + steps);
        b.streakStarted();
        assertEquals(SpinBudget.MAX, b.polls());
    }

    @Test
    void aYieldThatCameStraightBackLeavesTheBudgetAndLetsItGrow() {
        SpinBudget b = new SpinBudget();
        b.streakStarted();
        b.spent(SpinBudget.SHARED_CORE_NS);
        b.streakStarted();
        int shrunk = b.polls();
        b.spent(SpinBudget.SHARED_CORE_NS - 1); // nobody else wanted the core
        assertEquals(shrunk, b.polls());
        b.streakStarted();
        assertEquals(shrunk + (shrunk >> 2) + 1, b.polls());
    }

    @Test
    void theAgentSleepsItsPeriodWhenNeededAndBacksOffWhileNot() {
        long period = Engine.agentParkNs(8_000_000, true, false); // became needed
        assertEquals(200_000, period);
        long p = Engine.agentParkNs(period, false, false);
        assertEquals(2_000_000, p);
        p = Engine.agentParkNs(p, false, false);
        assertEquals(4_000_000, p);
        p = Engine.agentParkNs(p, false, false);
        assertEquals(8_000_000, p);
        assertEquals(8_000_000, Engine.agentParkNs(p, false, false));
        assertEquals(200_000, Engine.agentParkNs(p, true, false));
    }

    @Test
    void whileNeededTheAgentKeepsItsPeriodWhileStepsFindWorkAndBacksOffWhileNot() {
        long p = Engine.agentParkNs(200_000, true, true);
        assertEquals(200_000, p);
        p = Engine.agentParkNs(p, true, false);
        assertEquals(400_000, p);
        p = Engine.agentParkNs(p, true, false);
        assertEquals(800_000, p);
        p = Engine.agentParkNs(p, true, false);
        assertEquals(1_600_000, p);
        assertEquals(1_600_000, Engine.agentParkNs(p, true, false));
        assertEquals(200_000, Engine.agentParkNs(p, true, true)); // a step found work: back to the period
        assertEquals(2_000_000, Engine.agentParkNs(p, false, false)); // not needed: the idle sleeps
    }

    @Test
    void aSleepThatAPostEndedSoonKeepsTheAgentToTimedSleepsForLongerEachTime() {
        assertEquals(0, Engine.agentCooldownNs(0, 16_000_000)); // the sleep saved wake-ups
        long c = Engine.agentCooldownNs(0, 1_000_000);
        assertEquals(16_000_000, c);
        c = Engine.agentCooldownNs(c, 1_000_000);
        assertEquals(32_000_000, c);
        for (int i = 0; i < 20; i++) c = Engine.agentCooldownNs(c, 1_000_000);
        assertEquals(1_000_000_000, c);
        assertEquals(0, Engine.agentCooldownNs(c, 50_000_000));
    }
}
