package org.ftmpi.bench.rs;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Random;
import org.ftmpi.ckpt.rs.ReedSolomon;

/**
 * Drives the vector kernel until C2 has compiled it, for bench/peers/isal/check-asm.sh (which runs
 * it with -XX:CompileCommand=print and disassembles the result). Args: k m shardBytes seconds.
 */
public final class RsAsmProbe {
    public static void main(String[] args) {
        int k = Integer.parseInt(args[0]), m = Integer.parseInt(args[1]), len = Integer.parseInt(args[2]);
        long nanos = (long) (Double.parseDouble(args[3]) * 1e9);
        ReedSolomon rs = ReedSolomon.create(k, m);
        MemorySegment[] all = RsHarness.segments(k + m, len, new Random(1));
        MemorySegment[] d = Arrays.copyOf(all, k), p = Arrays.copyOfRange(all, k, k + m);
        long t0 = System.nanoTime(), n = 0;
        while (System.nanoTime() - t0 < nanos) {
            rs.encode(d, p);
            n++;
        }
        System.out.println("# probe kernel=" + rs.backendName() + " encodes=" + n);
    }
}
