package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.ftmpi.testutil.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The controller's deferred failure work ({@link AfterFailure}). */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AfterFailureTest {

    @Test
    void tasksRunOnTheirOwnThreadInQueueOrderAndAnErrorDoesNotStopTheNext() {
        List<String> done = new CopyOnWriteArrayList<>();
        List<RuntimeException> errors = new CopyOnWriteArrayList<>();
        AfterFailure a = new AfterFailure(0, errors::add);
        a.later(() -> done.add("1 " + Thread.currentThread().getName()));
        a.later(() -> {
            throw new IllegalStateException("boom");
        });
        a.later(() -> done.add("3 " + Thread.currentThread().getName()));
        Await.until("three tasks", Duration.ofSeconds(20), () -> done.size() == 2 && errors.size() == 1);
        assertEquals(List.of("1 ftmpirun-after-failure", "3 ftmpirun-after-failure"), done);
        assertEquals("boom", errors.get(0).getMessage());
    }

    @Test
    void flushRunsWhatIsNotDueYetAtOnceOnTheCaller() {
        List<String> done = new CopyOnWriteArrayList<>();
        AfterFailure a = new AfterFailure(TimeUnit.HOURS.toMillis(1), e -> done.add("error " + e));
        a.later(() -> done.add("a"));
        a.later(() -> done.add("b"));
        assertTrue(done.isEmpty(), "nothing is due for an hour: " + done);
        a.flush();
        assertEquals(List.of("a", "b"), done);
        a.flush(); // nothing left: runs nothing twice
        assertEquals(List.of("a", "b"), done);
    }
}
