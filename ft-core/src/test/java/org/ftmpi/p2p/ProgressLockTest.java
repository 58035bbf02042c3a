package org.ftmpi.p2p;

import static org.junit.jupiter.api.Assertions.*;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProgressLockTest {

    @Test
    void excludesOtherThreadsAndIsReentrant() throws InterruptedException {
        ProgressLock lock = new ProgressLock();
        assertTrue(lock.tryLock());
        lock.lock(); // reentrant
        assertTrue(lock.isHeldByCurrentThread());
        AtomicBoolean other = new AtomicBoolean(true);
        Thread t = Thread.ofPlatform().start(() -> other.set(lock.tryLock()));
        t.join();
        assertFalse(other.get(), "another thread took a held lock");
        lock.unlock();
        assertTrue(lock.isHeldByCurrentThread(), "one unlock of two holds released the lock");
        lock.unlock();
        assertFalse(lock.isHeldByCurrentThread());
        t = Thread.ofPlatform().start(() -> {
            other.set(lock.tryLock());
            lock.unlock();
        });
        t.join();
        assertTrue(other.get(), "a released lock could not be taken");
    }

    @Test
    void unlockByAThreadThatDoesNotHoldItThrows() {
        ProgressLock lock = new ProgressLock();
        assertThrows(IllegalMonitorStateException.class, lock::unlock);
    }

    @Test
    void aWaiterGetsTheLockWhenItIsReleased() throws InterruptedException {
        ProgressLock lock = new ProgressLock();
        lock.lock();
        CountDownLatch started = new CountDownLatch(1), got = new CountDownLatch(1);
        Thread t = Thread.ofPlatform().start(() -> {
            started.countDown();
            lock.lock(); // spins, yields, then parks: the release wakes it
            got.countDown();
            lock.unlock();
        });
        assertTrue(started.await(10, TimeUnit.SECONDS));
        Thread.sleep(20); // well into its park phase
        assertEquals(1, got.getCount(), "the waiter took a held lock");
        lock.unlock();
        assertTrue(got.await(10, TimeUnit.SECONDS), "the waiter never got the released lock");
        t.join();
    }

    /** Threads add to a plain counter under the lock: no update is lost and nobody waits forever. */
    @Test
    void mutualExclusionUnderContention() throws InterruptedException {
        ProgressLock lock = new ProgressLock();
        int threads = 4, rounds = 200_000;
        long[] counter = {0};
        Thread[] ts = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            boolean trying = (i & 1) == 1; // half of them only try, as the progress agent does
            ts[i] = Thread.ofPlatform().start(() -> {
                for (int n = 0; n < rounds; ) {
                    if (trying) {
                        if (!lock.tryLock()) {
                            Thread.onSpinWait();
                            continue;
                        }
                    } else {
                        lock.lock();
                    }
                    try {
                        counter[0]++;
                    } finally {
                        lock.unlock();
                    }
                    n++;
                }
            });
        }
        for (Thread t : ts) t.join();
        assertEquals((long) threads * rounds, counter[0]);
    }
}
