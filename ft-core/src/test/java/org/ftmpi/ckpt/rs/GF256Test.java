package org.ftmpi.ckpt.rs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Random;
import org.junit.jupiter.api.Test;

class GF256Test {
    @Test
    void tablesMatchBitwiseMultiplication() {
        for (int a = 0; a < 256; a++) {
            for (int b = 0; b < 256; b++) assertEquals(GF256.mulSlow(a, b), GF256.mul(a, b), a + "*" + b);
        }
    }

    @Test
    void inverses() {
        for (int a = 1; a < 256; a++) assertEquals(1, GF256.mul(a, GF256.inv(a)));
        assertThrows(ArithmeticException.class, () -> GF256.inv(0));
    }

    @Test
    void matrixInverseRoundTrip() {
        Random rnd = new Random(7);
        int done = 0;
        while (done < 50) {
            int n = 1 + rnd.nextInt(12);
            byte[] a = new byte[n * n];
            rnd.nextBytes(a);
            byte[] inv = GF256.invert(a, n);
            if (inv == null) continue;
            byte[] id = GF256.matMul(a, n, n, inv, n);
            for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) assertEquals(i == j ? 1 : 0, id[i * n + j]);
            done++;
        }
        assertNull(GF256.invert(new byte[] {1, 2, 2, 4}, 2), "rows are dependent");
    }
}
