package org.ftmpi.ckpt.rs;

import static org.junit.jupiter.api.Assertions.*;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The codec must work in a JVM started without --add-modules jdk.incubator.vector. */
class NoVectorModuleTest {

    /** Runs in the child JVM: encode, lose m shards, decode, compare against the known reference. */
    public static void main(String[] args) {
        if (Kernels.vectorModulePresent()) throw new AssertionError("module unexpectedly present");
        ReedSolomon rs = ReedSolomon.create(6, 3);
        if (!rs.backendName().startsWith("scalar")) throw new AssertionError(rs.backendName());
        int len = 1000;
        byte[][] data = new byte[6][len];
        for (int i = 0; i < 6; i++) for (int j = 0; j < len; j++) data[i][j] = (byte) (i * 131 + j * 7);
        byte[][] parity = new byte[3][len];
        rs.encode(data, parity);
        byte[][] shards = new byte[9][];
        for (int i = 0; i < 6; i++) shards[i] = data[i].clone();
        for (int i = 0; i < 3; i++) shards[6 + i] = parity[i].clone();
        shards[0] = shards[4] = shards[7] = null;
        rs.decode(shards, new boolean[] {false, true, true, true, false, true, true, false, true});
        for (int i = 0; i < 6; i++) if (!Arrays.equals(data[i], shards[i])) throw new AssertionError("shard " + i);
        int h = 0;
        for (byte[] p : parity) h = 31 * h + Arrays.hashCode(p);
        System.out.println("OK " + rs.backendName() + " " + h);
    }

    @Test
    @Timeout(60)
    void worksWithoutIncubatorModule() throws Exception {
        String javaBin = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        Process p = new ProcessBuilder(List.of(javaBin, "-cp", System.getProperty("java.class.path"), NoVectorModuleTest.class.getName()))
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(50, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.startsWith("OK scalar"), out);
        // same parity as this (vector-enabled) JVM computes
        ReedSolomon rs = ReedSolomon.create(6, 3);
        assertTrue(rs.backendName().startsWith("vector"));
        int len = 1000;
        byte[][] data = new byte[6][len];
        for (int i = 0; i < 6; i++) for (int j = 0; j < len; j++) data[i][j] = (byte) (i * 131 + j * 7);
        byte[][] parity = new byte[3][len];
        rs.encode(data, parity);
        int h = 0;
        for (byte[] q : parity) h = 31 * h + Arrays.hashCode(q);
        assertEquals("OK scalar-swar64 " + h, out.strip());
    }
}
