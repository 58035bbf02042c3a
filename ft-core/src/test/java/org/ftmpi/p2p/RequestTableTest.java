package org.ftmpi.p2p;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The engine's table of requests waiting for a protocol frame, against a HashMap. */
class RequestTableTest {

    private static Request request(long id) {
        return new Request(null, Request.Kind.SEND, id);
    }

    @Test
    void putGetRemoveAndReplace() {
        RequestTable t = new RequestTable();
        Request a = request(7), b = request(7);
        assertNull(t.get(7));
        t.put(7, a);
        assertSame(a, t.get(7));
        t.put(7, b);
        assertEquals(1, t.size(), "a second put of one id replaces");
        assertSame(b, t.remove(7));
        assertNull(t.remove(7));
        assertTrue(t.isEmpty());
        assertThrows(IllegalArgumentException.class, () -> t.put(1, null));
    }

    @Test
    void randomOperationsMatchAHashMap() {
        Random random = new Random(29);
        for (int run = 0; run < 200; run++) {
            RequestTable t = new RequestTable();
            Map<Long, Request> reference = new HashMap<>();
            long next = random.nextBoolean() ? 1 : random.nextLong();
            for (int op = 0; op < 3_000; op++) {
                int what = random.nextInt(10);
                if (what < 4) { // a new request, ids mostly consecutive as the engine's are
                    long id = random.nextInt(8) == 0 ? random.nextLong() : next++;
                    Request r = request(id);
                    t.put(id, r);
                    reference.put(id, r);
                } else if (what < 7 && !reference.isEmpty()) { // a frame completes a waiting one
                    long id = reference.keySet().iterator().next();
                    if (random.nextBoolean()) id = new ArrayList<>(reference.keySet()).get(random.nextInt(reference.size()));
                    assertSame(reference.remove(id), t.remove(id), "remove " + id);
                } else if (what < 9) { // a frame that names an id: present or unknown
                    long id = random.nextBoolean() || reference.isEmpty() ? random.nextLong() : reference.keySet().iterator().next();
                    assertSame(reference.get(id), t.get(id), "get " + id);
                } else if (random.nextInt(20) == 0) { // a failure fails the requests of some peer
                    int peer = random.nextInt(3);
                    List<Request> removed = new ArrayList<>();
                    for (Request r : t.requests()) {
                        if (Math.floorMod(r.id, 3) == peer) removed.add(t.remove(r.id));
                    }
                    List<Request> expected = new ArrayList<>();
                    reference.values().removeIf(r -> Math.floorMod(r.id, 3) == peer && expected.add(r));
                    assertEquals(new HashSet<>(expected), new HashSet<>(removed), "removeAll of peer " + peer);
                }
                assertEquals(reference.size(), t.size());
            }
            for (Map.Entry<Long, Request> e : reference.entrySet()) assertSame(e.getValue(), t.get(e.getKey()));
            assertEquals(new HashSet<>(reference.values()), new HashSet<>(t.requests()));
            for (Request r : t.requests()) assertSame(r, t.remove(r.id));
            assertTrue(t.isEmpty());
        }
    }

    @Test
    void growsPastItsFirstCapacityAndEmptiesAgain() {
        RequestTable t = new RequestTable();
        for (long id = 1; id <= 10_000; id++) t.put(id, request(id));
        assertEquals(10_000, t.size());
        for (long id = 1; id <= 10_000; id += 2) assertEquals(id, t.remove(id).id);
        for (long id = 2; id <= 10_000; id += 2) assertEquals(id, t.get(id).id);
        t.clear();
        assertTrue(t.isEmpty());
        assertNull(t.get(2));
    }
}
