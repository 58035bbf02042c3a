package org.ftmpi.ckpt.rs;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ShardSetTest {
    static MemorySegment[] segs(Arena arena, Random rnd, int n, int len, boolean fill) {
        MemorySegment[] s = new MemorySegment[n];
        for (int i = 0; i < n; i++) {
            byte[] b = new byte[len];
            if (fill) rnd.nextBytes(b);
            s[i] = arena.allocate(Math.max(len, 1), 64).asSlice(0, len).copyFrom(MemorySegment.ofArray(b));
        }
        return s;
    }

    static byte[] bytes(MemorySegment s) {
        return s.toArray(ValueLayout.JAVA_BYTE);
    }

    @Test
    void corruptShardIsDetectedAndRebuilt() {
        int k = 8, m = 3, len = 10_001;
        ReedSolomon rs = ReedSolomon.create(k, m);
        try (Arena arena = Arena.ofConfined()) {
            Random rnd = new Random(1);
            MemorySegment[] data = segs(arena, rnd, k, len, true);
            byte[][] orig = new byte[k][];
            for (int i = 0; i < k; i++) orig[i] = bytes(data[i]);
            ShardSet set = ShardSet.encode(rs, data, segs(arena, rnd, m, len, false));
            byte[] parity1 = bytes(set.get(k + 1).data());

            // one bit flip in data shard 2, one in parity shard k+1, and data shard 5 lost
            data[2].set(ValueLayout.JAVA_BYTE, 1234, (byte) (data[2].get(ValueLayout.JAVA_BYTE, 1234) ^ 0x10));
            MemorySegment p1 = set.get(k + 1).data();
            p1.set(ValueLayout.JAVA_BYTE, len - 1, (byte) (p1.get(ValueLayout.JAVA_BYTE, len - 1) ^ 1));
            set.remove(5);
            assertArrayEquals(new int[] {2, k + 1}, set.corruptShards());

            ShardSet.Repair repair = set.reconstruct(rs, arena);
            assertArrayEquals(new int[] {5}, repair.missing());
            assertArrayEquals(new int[] {2, k + 1}, repair.corrupt());
            MemorySegment[] fixed = set.dataSegments();
            for (int i = 0; i < k; i++) assertArrayEquals(orig[i], bytes(fixed[i]), "data shard " + i);
            assertArrayEquals(parity1, bytes(set.get(k + 1).data()));
            for (int i = 0; i < k + m; i++) assertTrue(set.get(i).verify(), "resealed " + i);
            assertEquals(0, set.corruptShards().length);
            assertTrue(set.reconstruct(rs, arena).intact());
        }
    }

    @Test
    void tooManyCorruptShardsIsAnErrorNotSilentGarbage() {
        int k = 4, m = 2, len = 100;
        ReedSolomon rs = ReedSolomon.create(k, m);
        try (Arena arena = Arena.ofConfined()) {
            Random rnd = new Random(2);
            MemorySegment[] data = segs(arena, rnd, k, len, true);
            ShardSet set = ShardSet.encode(rs, data, segs(arena, rnd, m, len, false));
            set.remove(0);
            data[1].set(ValueLayout.JAVA_BYTE, 0, (byte) ~data[1].get(ValueLayout.JAVA_BYTE, 0));
            data[3].set(ValueLayout.JAVA_BYTE, 7, (byte) ~data[3].get(ValueLayout.JAVA_BYTE, 7));
            ErasureCodeException e = assertThrows(ErasureCodeException.class, () -> set.reconstruct(rs, arena));
            assertTrue(e.getMessage().startsWith("shards: only 3 intact shards, need k=4"), e.getMessage());
            assertTrue(e.getMessage().contains("corrupt by CRC32C [1, 3]"), e.getMessage());
        }
    }

    @Test
    void headerRoundTripAndCorruption() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment payload = arena.allocate(77).fill((byte) 9);
            Shard s = Shard.seal(11, payload);
            MemorySegment h = arena.allocate(Shard.HEADER_BYTES);
            s.writeHeader(h, 10, 4);
            Shard.Header hd = Shard.readHeader(h);
            assertEquals(new Shard.Header(10, 4, 11, 77, s.crc32c()), hd);
            assertTrue(Shard.of(hd.index(), payload, hd.crc32c()).verify());
            h.set(ValueLayout.JAVA_BYTE, 17, (byte) 1); // length field
            ErasureCodeException e = assertThrows(ErasureCodeException.class, () -> Shard.readHeader(h));
            assertTrue(e.getMessage().contains("checksum"), e.getMessage());
            h.set(ValueLayout.JAVA_INT, 0, 0);
            assertThrows(ErasureCodeException.class, () -> Shard.readHeader(h));
            assertThrows(IllegalArgumentException.class, () -> s.writeHeader(h, 8, 2), "index 11 >= k + m");
        }
        assertEquals(0xE3069283, Shard.crc32c(MemorySegment.ofArray("123456789".getBytes())), "CRC32C check value");
    }

    @Test
    void badShardsAreRejectedWithNames() {
        ShardSet set = new ShardSet(4, 2, 16);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> set.put(Shard.seal(1, MemorySegment.ofArray(new byte[15]))));
        assertTrue(e.getMessage().startsWith("shard[1]: length 15"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> set.put(Shard.seal(6, MemorySegment.ofArray(new byte[16]))));
        assertTrue(e.getMessage().startsWith("shard: index 6"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> set.reconstruct(ReedSolomon.create(4, 3), Arena.ofAuto()));
        assertTrue(e.getMessage().startsWith("rs:"), e.getMessage());
    }
}
