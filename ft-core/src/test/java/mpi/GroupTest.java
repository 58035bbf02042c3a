package mpi;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

/** Group operations, against the examples of the MPI standard (groups are local objects). */
class GroupTest {
    /** A group {a..j} = world ranks 100..109, the caller being world rank 103 ("d"). */
    private static Group letters() {
        int[] m = new int[10];
        for (int i = 0; i < 10; i++) m[i] = 100 + i;
        return new Group(m, 103);
    }

    private static int[] members(Group g) throws MPIException {
        return g.worldRanks("test");
    }

    @Test
    void sizeRankAndEmpty() throws MPIException {
        Group g = letters();
        assertEquals(10, g.getSize());
        assertEquals(3, g.getRank());
        assertEquals(MPI.UNDEFINED, g.excl(new int[] {3}).getRank());
        assertEquals(0, MPI.GROUP_EMPTY.getSize());
        assertEquals(MPI.UNDEFINED, MPI.GROUP_EMPTY.getRank());
        assertEquals(MPIException.class, assertThrows(MPIException.class, MPI.GROUP_EMPTY::free).getClass());
    }

    @Test
    void rangeInclAndExclFollowTheStandardsExample() throws MPIException {
        // MPI standard: ranges (6,7,1), (1,6,2), (0,9,4) of {a..j} give {g,h,b,d,f,a,e,i}.
        int[][] ranges = {{6, 7, 1}, {1, 6, 2}, {0, 9, 4}};
        assertArrayEquals(new int[] {106, 107, 101, 103, 105, 100, 104, 108}, members(letters().rangeIncl(ranges)));
        assertArrayEquals(new int[] {102, 109}, members(letters().rangeExcl(ranges)));
        // Negative strides count down.
        assertArrayEquals(new int[] {109, 106, 103}, members(letters().rangeIncl(new int[][] {{9, 2, -3}})));
    }

    @Test
    void inclExclKeepTheGivenOrder() throws MPIException {
        Group g = letters();
        assertArrayEquals(new int[] {105, 100, 103}, members(g.incl(new int[] {5, 0, 3})));
        assertEquals(2, g.incl(new int[] {5, 0, 3}).getRank());
        assertArrayEquals(new int[] {101, 102, 104, 105, 106, 107, 108, 109}, members(g.excl(new int[] {3, 0})));
        assertEquals(0, g.incl(new int[0]).getSize());
        MPIException e = assertThrows(MPIException.class, () -> g.incl(new int[] {1, 1}));
        assertEquals(MPI.ERR_RANK, e.getErrorClass());
        e = assertThrows(MPIException.class, () -> g.excl(new int[] {10}));
        assertEquals(MPI.ERR_RANK, e.getErrorClass());
        assertTrue(e.getMessage().contains("ranks[0] = 10"), e.getMessage());
        e = assertThrows(MPIException.class, () -> g.rangeIncl(new int[][] {{0, 9, 0}}));
        assertEquals(MPI.ERR_ARG, e.getErrorClass());
    }

    @Test
    void setOperationsOrderAsTheStandardSays() throws MPIException {
        Group g = letters();
        Group x = g.incl(new int[] {4, 1, 7});  // e b h
        Group y = g.incl(new int[] {7, 2, 4, 9}); // h c e j
        // union: all of x, then the members of y not in x, in y's order
        assertArrayEquals(new int[] {104, 101, 107, 102, 109}, members(Group.union(x, y)));
        // intersection and difference keep x's order
        assertArrayEquals(new int[] {104, 107}, members(Group.intersection(x, y)));
        assertArrayEquals(new int[] {101}, members(Group.difference(x, y)));
        assertEquals(0, Group.intersection(x, MPI.GROUP_EMPTY).getSize());
        assertArrayEquals(members(y), members(Group.union(MPI.GROUP_EMPTY, y)));
    }

    @Test
    void translateAndCompare() throws MPIException {
        Group g = letters();
        Group x = g.incl(new int[] {4, 1, 7});
        assertArrayEquals(new int[] {1, MPI.UNDEFINED, 0, MPI.PROC_NULL},
                Group.translateRanks(g, new int[] {1, 0, 4, MPI.PROC_NULL}, x));
        assertEquals(MPI.IDENT, Group.compare(g, letters()));
        assertEquals(MPI.SIMILAR, Group.compare(x, g.incl(new int[] {7, 4, 1})));
        assertEquals(MPI.UNEQUAL, Group.compare(x, g.incl(new int[] {7, 4})));
        assertEquals(MPI.UNEQUAL, Group.compare(x, g.incl(new int[] {7, 4, 2})));
        MPIException e = assertThrows(MPIException.class, () -> Group.translateRanks(x, new int[] {3}, g));
        assertEquals(MPI.ERR_RANK, e.getErrorClass());
    }

    @Test
    void freedGroupIsNullAndUnusable() throws MPIException {
        Group g = letters().incl(new int[] {0});
        g.free();
        assertTrue(g.isNull());
        assertEquals(MPI.ERR_GROUP, assertThrows(MPIException.class, g::getSize).getErrorClass());
        assertEquals(MPI.ERR_GROUP, assertThrows(MPIException.class, () -> Group.union(g, g)).getErrorClass());
    }
}
