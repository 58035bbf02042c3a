package org.ftmpi.ckpt.rs;

/**
 * Arithmetic in GF(2^8) with the primitive polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11d), the field
 * used by ISA-L and most storage Reed-Solomon codes, plus the small dense-matrix operations the codec
 * needs (product, Gauss-Jordan inversion). Matrices are row-major {@code byte[]}.
 */
public final class GF256 {
    /** The field polynomial, including the x^8 term. */
    public static final int POLY = 0x11d;

    private static final byte[] EXP = new byte[512];
    private static final int[] LOG = new int[256];
    /** Full multiplication table: {@code MUL[a << 8 | b] = a * b}. 64 KiB. */
    static final byte[] MUL = new byte[256 * 256];
    private static final byte[] INV = new byte[256];

    static {
        int x = 1;
        for (int i = 0; i < 255; i++) {
            EXP[i] = (byte) x;
            LOG[x] = i;
            x <<= 1;
            if ((x & 0x100) != 0) x ^= POLY;
        }
        for (int i = 255; i < EXP.length; i++) EXP[i] = EXP[i - 255];
        LOG[0] = -1;
        for (int a = 0; a < 256; a++) {
            for (int b = 0; b < 256; b++) {
                MUL[a << 8 | b] = (a == 0 || b == 0) ? 0 : EXP[LOG[a] + LOG[b]];
            }
        }
        INV[0] = 0;
        for (int a = 1; a < 256; a++) INV[a] = EXP[255 - LOG[a]];
    }

    private GF256() {}

    public static int add(int a, int b) {
        return (a ^ b) & 0xff;
    }

    public static int mul(int a, int b) {
        return MUL[(a & 0xff) << 8 | (b & 0xff)] & 0xff;
    }

    /** Multiplicative inverse; {@code a} must be non-zero. */
    public static int inv(int a) {
        if ((a & 0xff) == 0) throw new ArithmeticException("0 has no inverse in GF(2^8)");
        return INV[a & 0xff] & 0xff;
    }

    public static int div(int a, int b) {
        return mul(a, inv(b));
    }

    /** {@code g^e} for the generator g = 2. */
    public static int exp(int e) {
        return EXP[Math.floorMod(e, 255)] & 0xff;
    }

    /**
     * Bit-by-bit ("Russian peasant") product that does not use the tables; an independent reference
     * for tests.
     */
    static int mulSlow(int a, int b) {
        a &= 0xff;
        b &= 0xff;
        int r = 0;
        while (b != 0) {
            if ((b & 1) != 0) r ^= a;
            a <<= 1;
            if ((a & 0x100) != 0) a ^= POLY;
            b >>>= 1;
        }
        return r;
    }

    /** {@code (r x n) = (r x c) * (c x n)}. */
    public static byte[] matMul(byte[] a, int r, int c, byte[] b, int n) {
        byte[] out = new byte[r * n];
        for (int i = 0; i < r; i++) {
            for (int t = 0; t < c; t++) {
                int av = a[i * c + t] & 0xff;
                if (av == 0) continue;
                int row = av << 8;
                for (int j = 0; j < n; j++) {
                    out[i * n + j] ^= MUL[row | (b[t * n + j] & 0xff)];
                }
            }
        }
        return out;
    }

    /**
     * Inverse of the {@code n x n} matrix {@code a} (not modified), or {@code null} if it is singular.
     */
    public static byte[] invert(byte[] a, int n) {
        byte[] w = a.clone();
        byte[] inv = new byte[n * n];
        for (int i = 0; i < n; i++) inv[i * n + i] = 1;
        for (int col = 0; col < n; col++) {
            int pivot = -1;
            for (int r = col; r < n; r++) {
                if (w[r * n + col] != 0) {
                    pivot = r;
                    break;
                }
            }
            if (pivot < 0) return null;
            if (pivot != col) {
                swapRows(w, n, pivot, col);
                swapRows(inv, n, pivot, col);
            }
            int s = inv(w[col * n + col]);
            scaleRow(w, n, col, s);
            scaleRow(inv, n, col, s);
            for (int r = 0; r < n; r++) {
                if (r == col) continue;
                int f = w[r * n + col] & 0xff;
                if (f == 0) continue;
                int fr = f << 8;
                for (int j = 0; j < n; j++) {
                    w[r * n + j] ^= MUL[fr | (w[col * n + j] & 0xff)];
                    inv[r * n + j] ^= MUL[fr | (inv[col * n + j] & 0xff)];
                }
            }
        }
        return inv;
    }

    /** True if the {@code n x n} matrix is non-singular. */
    public static boolean isInvertible(byte[] a, int n) {
        return invert(a, n) != null;
    }

    private static void swapRows(byte[] m, int n, int a, int b) {
        for (int j = 0; j < n; j++) {
            byte t = m[a * n + j];
            m[a * n + j] = m[b * n + j];
            m[b * n + j] = t;
        }
    }

    private static void scaleRow(byte[] m, int n, int r, int s) {
        int sr = s << 8;
        for (int j = 0; j < n; j++) m[r * n + j] = MUL[sr | (m[r * n + j] & 0xff)];
    }
}
