package org.ftmpi.ddt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The commit-time compactor produces the shortest program for regular layouts. */
class CompactionTest {
    @Test
    void vectorWithStrideEqualBlockLengthIsOneRun() {
        Datatype t = Datatype.vector(100, 4, 4, Datatype.DOUBLE).commit();
        assertEquals(List.of("{off=0, len=3200}"), t.describeProgram());
        assertTrue(t.isContiguous());
    }

    @Test
    void stridedVectorIsOneLoop() {
        Datatype t = Datatype.vector(256, 1, 256, Datatype.DOUBLE).commit();
        assertEquals(List.of("{off=0, len=8, stride=2048, count=256}"), t.describeProgram());
    }

    @Test
    void structOfAdjacentFieldsMergesIntoOneRun() {
        Datatype s = Datatype.struct(new int[] {1, 2, 3}, new long[] {0, 4, 12},
                new Datatype[] {Datatype.INT, Datatype.INT, Datatype.FLOAT}).commit();
        assertEquals(List.of("{off=0, len=24}"), s.describeProgram());
        // the typed program keeps the int and float runs apart
        assertEquals(List.of("{off=0, len=12, type=INT}", "{off=12, len=12, type=FLOAT}"), s.describeTypedProgram());
        assertEquals("[INTx3, FLOATx3]", s.signature().toString());
    }

    @Test
    void nestedVectorsBecomeTwoLevelLoop() {
        // 4 x (3 blocks of 2 ints, stride 5 ints), outer stride 40 ints
        Datatype inner = Datatype.vector(3, 2, 5, Datatype.INT);
        Datatype t = Datatype.hvector(4, 1, 160, inner).commit();
        assertEquals(List.of("{off=0, len=8, stride=20, count=3, ostride=160, ocount=4}"), t.describeProgram());
    }

    @Test
    void subarrayOfContiguousRowsCollapses() {
        // full rows 2..5 of a 8x8 C array are contiguous
        Datatype t = Datatype.subarray(new int[] {8, 8}, new int[] {4, 8}, new int[] {2, 0}, Datatype.Order.C,
                Datatype.DOUBLE).commit();
        assertEquals(List.of("{off=128, len=256}"), t.describeProgram());
        assertEquals(0, t.lb());
        assertEquals(512, t.extent());
    }

    @Test
    void resizedColumnFoldsInstancesIntoOneProgram() {
        Datatype col = Datatype.resized(Datatype.vector(4, 1, 4, Datatype.INT), 0, 4).commit();
        assertEquals(4, col.extent());
        assertEquals(52, col.trueExtent());
        int[] m = new int[16];
        for (int i = 0; i < 16; i++) {
            m[i] = i;
        }
        // 4 columns packed = transpose
        int[] out = new int[16];
        Convertor.forPack(col, 4, m, 0).packNext(java.lang.foreign.MemorySegment.ofArray(out), 0, 64);
        assertEquals(List.of(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15),
                java.util.Arrays.stream(out).boxed().toList());
    }

    @Test
    void boundsFollowTheStandard() {
        Datatype di = Datatype.DOUBLE_INT;
        assertEquals(16, di.extent());
        Datatype v = Datatype.vector(3, 2, -4, Datatype.INT);
        assertEquals(-32, v.lb());
        assertEquals(40, v.extent());
        Datatype r = Datatype.resized(Datatype.INT, -4, 12);
        assertEquals(-4, r.lb());
        assertEquals(12, r.extent());
        assertEquals(0, r.trueLb());
        assertEquals(4, r.trueExtent());
        // struct epsilon: {char at 0, double at 8} -> extent 16; not applied when a field is resized
        Datatype s = Datatype.struct(new int[] {1, 1}, new long[] {0, 8}, new Datatype[] {Datatype.DOUBLE, Datatype.BYTE});
        assertEquals(16, s.extent());
        Datatype s2 = Datatype.struct(new int[] {1, 1}, new long[] {0, 8},
                new Datatype[] {Datatype.resized(Datatype.DOUBLE, 0, 8), Datatype.BYTE});
        assertEquals(9, s2.extent());
        assertEquals(BasicType.BYTE, s.baseType());
        assertEquals(BasicType.DOUBLE, Datatype.vector(2, 1, 3, Datatype.DOUBLE).baseType());
    }

    @Test
    void darrayBlockCyclicMatchesHandComputedOwnership() {
        // 1-D, 10 elements, cyclic(2) over 3 processes, rank 1 owns 2,3,8,9
        Datatype t = Datatype.darray(3, 1, new int[] {10}, new Datatype.Distribution[] {Datatype.Distribution.CYCLIC},
                new int[] {2}, new int[] {3}, Datatype.Order.C, Datatype.INT).commit();
        assertEquals(List.of("{off=8, len=8, stride=24, count=2}"), t.describeProgram());
        assertEquals(40, t.extent());
        assertEquals(16, t.size());
    }
}
