package org.ftmpi.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The death-watch file's robust mutexes, with threads of this JVM as holders: the kernel walks
 * a thread's robust list when the thread ends, exactly as when its process dies, so a holder
 * thread that ends without unlocking wakes the watcher with EOWNERDEAD.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DeathWatchFileTest {

    @Test
    void theFileIsPrivateAndCarriesItsLayout(@TempDir Path dir) throws IOException {
        assertNull(DeathWatchFile.UNAVAILABLE);
        Path p = dir.resolve("w");
        DeathWatchFile f = DeathWatchFile.create(p, 5);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(p)));
        assertEquals(DeathWatchFile.HEADER_BYTES + 5L * DeathWatchFile.SLOT_BYTES, Files.size(p));
        DeathWatchFile g = DeathWatchFile.open(p);
        assertEquals(5, g.slots());
        assertEquals(DeathWatchFile.FREE, g.state(4));
        assertThrows(IllegalArgumentException.class, () -> g.state(5));
        assertThrows(IOException.class, () -> DeathWatchFile.create(p, 5), "an existing file is never reused");
        Files.write(dir.resolve("other"), new byte[128]);
        IOException e = assertThrows(IOException.class, () -> DeathWatchFile.open(dir.resolve("other")));
        assertTrue(e.getMessage().contains("not a death-watch file"), e.getMessage());
    }

    @Test
    void aHolderThreadThatEndsWakesTheWatcherWithOwnerDied(@TempDir Path dir) throws Exception {
        DeathWatchFile f = DeathWatchFile.create(dir.resolve("w"), 2);
        DeathWatchFile holderView = DeathWatchFile.open(dir.resolve("w")); // as a rank maps it
        Thread holder = Thread.ofPlatform().start(() -> assertEquals(0, holderView.tryHold(1, 4242, 2)));
        holder.join();
        assertEquals(DeathWatchFile.HELD, f.state(1));
        assertEquals(4242, f.pid(1));
        assertEquals(2, f.procId(1));
        assertEquals(DeathWatchFile.EOWNERDEAD, f.awaitRelease(1));
        assertEquals(DeathWatchFile.HELD, f.state(1), "no orderly exit was marked");
        assertEquals(0, f.awaitRelease(1), "the watcher made the mutex consistent and released it");
    }

    @Test
    void aRankWhoseSlotCannotBeTakenGoesOnWithoutHoldingIt(@TempDir Path dir) throws Exception {
        assertFalse(DeathWatch.holdFromEnv(java.util.Map.of()), "no slot given");
        assertFalse(DeathWatch.holdFromEnv(java.util.Map.of(RuntimeEnv.DEATH_WATCH, dir.resolve("missing") + "#0",
                RuntimeEnv.PROC_ID, "1")), "no such file");
        DeathWatchFile f = DeathWatchFile.create(dir.resolve("w"), 1);
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Integer> held = new CompletableFuture<>();
        Thread holder = Thread.ofPlatform().start(() -> {
            held.complete(f.tryHold(0, 1, 1));
            release.join();
        });
        assertEquals(0, held.get());
        assertFalse(DeathWatch.holdFromEnv(java.util.Map.of(RuntimeEnv.DEATH_WATCH, dir.resolve("w") + "#0",
                RuntimeEnv.PROC_ID, "1")), "the slot is held by somebody else");
        assertFalse(DeathWatch.holdFromEnv(java.util.Map.of(RuntimeEnv.DEATH_WATCH, dir.resolve("w") + "#7",
                RuntimeEnv.PROC_ID, "8")), "no such slot");
        release.complete(null);
        holder.join();
    }

    @Test
    void aHeldSlotCannotBeTakenTwiceAndTheWatcherWaitsForTheHolder(@TempDir Path dir) throws Exception {
        DeathWatchFile f = DeathWatchFile.create(dir.resolve("w"), 1);
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Integer> held = new CompletableFuture<>();
        Thread holder = Thread.ofPlatform().start(() -> {
            held.complete(f.tryHold(0, 1, 1));
            release.join(); // the holder lives until the test lets it end
        });
        assertEquals(0, held.get());
        CompletableFuture<Integer> second = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> second.complete(f.tryHold(0, 2, 1))).join();
        assertEquals(DeathWatchFile.EBUSY, second.get());
        CompletableFuture<Integer> watcher = CompletableFuture.supplyAsync(() -> f.awaitRelease(0),
                r -> Thread.ofPlatform().start(r));
        f.setStateRelease(0, DeathWatchFile.EXITING); // as the holder's shutdown hook does
        release.complete(null);
        holder.join();
        assertEquals(DeathWatchFile.EOWNERDEAD, watcher.get());
        assertEquals(DeathWatchFile.EXITING, f.state(0), "an orderly exit is told apart by the state");
    }
}
