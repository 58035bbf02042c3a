package org.ftmpi.transport.shm;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.ftmpi.transport.EngineTraffic;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * MPI point-to-point over the shared-memory transport only ({@code transports=shm}: the job
 * fails to start unless shm reaches every peer), with ranks as threads of this JVM: eager and
 * rendezvous sizes, heap arrays and direct buffers (the single-copy path), with and without
 * cross-memory attach and with the JDK-only control-word access.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmEngineTest {
    private static final int[] SIZES = {0, 1, 1000, 32 * 1024, 32 * 1024 + 1, 65_536, 200_000, (1 << 20) + 3};

    @ParameterizedTest
    @ValueSource(strings = {"auto", "off", "jdk-only"})
    void pingPongOfEverySizeFromHeapAndDirectBuffers(String mode) throws Exception {
        Map<String, String> options = mode.equals("jdk-only")
                ? Map.of("transports", "shm", "shm-unsafe", "false")
                : Map.of("transports", "shm", "shm-cma", mode);
        EngineTraffic.pingPongOfEverySize(options, SIZES);
    }

    /** With single copy off, the RTS carries the first 32 KiB inline; with it, none. */
    @ParameterizedTest
    @ValueSource(strings = {"auto", "off"})
    void rendezvousIntoShortBuffersTruncatesCleanly(String cma) throws Exception {
        EngineTraffic.rendezvousIntoShortBuffers(Map.of("transports", "shm", "shm-cma", cma), 200_000);
    }

    /** Four ranks (more than this machine's cores) exchange with everybody at once, non-blocking. */
    @ParameterizedTest
    @ValueSource(ints = {100, 300_000})
    void allPairsExchangeWithFourRanks(int size) throws Exception {
        EngineTraffic.allPairsExchange(Map.of("transports", "shm"), 4, size);
    }
}
