package org.ftmpi.ckpt.rs;

import static org.junit.jupiter.api.Assertions.*;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/**
 * Child-JVM tests: the codec must work in a JVM started without --add-modules
 * jdk.incubator.vector (scalar kernel), and the vector kernel must give the same bytes once C2 has
 * compiled it with other instruction selections (AVX2 vpshufb forms, 128/256-bit species).
 */
class NoVectorModuleTest {
    static final int K = 6, M = 3, LEN = 4096 + 77;

    static long parityHash(ReedSolomon rs, int salt) {
        byte[][] data = new byte[K][LEN];
        for (int i = 0; i < K; i++) for (int j = 0; j < LEN; j++) data[i][j] = (byte) (i * 131 + j * 7 + salt);
        byte[][] parity = new byte[M][LEN];
        rs.encode(data, parity);
        byte[][] shards = new byte[K + M][];
        for (int i = 0; i < K; i++) shards[i] = data[i].clone();
        for (int i = 0; i < M; i++) shards[K + i] = parity[i].clone();
        shards[0] = shards[4] = shards[7] = null;
        rs.decode(shards, new boolean[] {false, true, true, true, false, true, true, false, true});
        for (int i = 0; i < K; i++) if (!Arrays.equals(data[i], shards[i])) throw new AssertionError("shard " + i);
        long h = 0;
        for (byte[] p : parity) h = 31 * h + Arrays.hashCode(p);
        return h;
    }

    /** Child main: args = iterations. Prints "OK <kernel> <hash of salt 0> <xor of all hashes>". */
    public static void main(String[] args) {
        int iterations = Integer.parseInt(args[0]);
        ReedSolomon rs = ReedSolomon.create(K, M);
        long first = parityHash(rs, 0), all = 0;
        for (int it = 0; it < iterations; it++) all ^= parityHash(rs, it % 7) * (it % 7 + 1);
        if (parityHash(rs, 0) != first) throw new AssertionError("result changed after JIT compilation");
        System.out.println("OK " + rs.backendName() + " " + first + " " + all);
    }

    static String expected(int iterations) {
        ReedSolomon rs = ReedSolomon.create(K, M, ReedSolomon.Backend.SCALAR);
        long first = parityHash(rs, 0), all = 0;
        for (int it = 0; it < iterations; it++) all ^= parityHash(rs, it % 7) * (it % 7 + 1);
        return first + " " + all;
    }

    static String runChild(List<String> jvmArgs, int iterations) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        cmd.addAll(jvmArgs);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), NoVectorModuleTest.class.getName(), "" + iterations));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(100, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        return out.lines().filter(l -> l.startsWith("OK ")).findFirst().orElse(out).strip();
    }

    @Test
    @Timeout(60)
    void worksWithoutIncubatorModule() throws Exception {
        assertEquals("OK scalar-swar64 " + expected(20), runChild(List.of(), 20));
    }

    /** Enough iterations for C2 to compile the kernels (-Xbatch: compile before continuing). */
    @Test
    @Timeout(120)
    @EnabledOnOs(value = OS.LINUX, architectures = "amd64")
    void vectorKernelCompiledForAvx2MatchesScalar() throws Exception {
        int iterations = 1500;
        String expect = expected(iterations);
        for (String bits : List.of("128", "256")) {
            String out = runChild(List.of("--add-modules=jdk.incubator.vector", "-XX:UseAVX=2", "-Xbatch",
                    "-Dftmpi.rs.vectorBits=" + bits), iterations);
            assertEquals("OK vector-" + bits + " " + expect, out);
        }
    }
}
