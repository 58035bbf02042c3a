package org.ftmpi.api;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.IntBuffer;
import java.util.concurrent.TimeUnit;
import mpi.*;
import org.ftmpi.LocalJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Attribute caching on communicators and datatypes, predefined attributes, error classes, versions. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AttributesAndErrorsTest {

    @Test
    void commAttributesAreCopiedByDupAndNotBySplit() throws Exception {
        LocalJob.run(3, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int key = Comm.createKeyval();
            assertNotEquals(MPI.KEYVAL_INVALID, key);
            assertNull(world.getAttr(key));
            int[] value = {world.getRank()};
            world.setAttr(key, value);
            assertSame(value, world.getAttr(key)); // kept by reference
            Intracomm dup = world.dup();
            assertSame(value, dup.getAttr(key));
            Intracomm idup = world.iDup();
            idup.getRequest().waitFor();
            assertSame(value, idup.getAttr(key));
            Intracomm split = world.split(0, 0);
            assertNull(split.getAttr(key));
            // Changing or deleting on the duplicate leaves the original alone.
            dup.setAttr(key, "other");
            assertEquals("other", dup.getAttr(key));
            assertSame(value, world.getAttr(key));
            dup.deleteAttr(key);
            assertNull(dup.getAttr(key));
            dup.deleteAttr(key); // deleting an unset attribute is allowed
            assertSame(value, world.getAttr(key));
            world.setAttr(key, null);
            assertNull(world.getAttr(key));
            // A freed keyval is invalid everywhere; so is one never created.
            Comm.freeKeyval(key);
            MPIException e = assertThrows(MPIException.class, () -> world.getAttr(key));
            assertEquals(MPI.ERR_KEYVAL, e.getErrorClass());
            assertTrue(e.getMessage().contains("keyval"), e.getMessage());
            assertEquals(MPI.ERR_KEYVAL, assertThrows(MPIException.class, () -> Comm.freeKeyval(key)).getErrorClass());
            assertEquals(MPI.ERR_KEYVAL,
                    assertThrows(MPIException.class, () -> world.setAttr(MPI.KEYVAL_INVALID, 1)).getErrorClass());
            // A datatype keyval is not a communicator keyval.
            int tkey = Datatype.createKeyval();
            assertEquals(MPI.ERR_KEYVAL, assertThrows(MPIException.class, () -> world.setAttr(tkey, 1)).getErrorClass());
            Datatype.freeKeyval(tkey);
            dup.free();
            idup.free();
            split.free();
        });
    }

    @Test
    void predefinedAttributesOnWorldAndItsDuplicates() throws Exception {
        LocalJob.run(2, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            assertEquals(Integer.MAX_VALUE, world.getAttr(MPI.TAG_UB));
            assertEquals(MPI.PROC_NULL, world.getAttr(MPI.HOST));
            assertEquals(MPI.ANY_SOURCE, world.getAttr(MPI.IO));
            assertEquals(Boolean.FALSE, world.getAttr(MPI.WTIME_IS_GLOBAL));
            assertEquals(0, world.getAttr(MPI.APPNUM));
            assertEquals(2, world.getAttr(MPI.UNIVERSE_SIZE));
            assertTrue((Integer) world.getAttr(MPI.LASTUSEDCODE) >= MPI.ERR_LASTCODE);
            Intracomm dup = world.dup();
            assertEquals(Integer.MAX_VALUE, dup.getAttr(MPI.TAG_UB));
            Intracomm split = world.split(world.getRank(), 0);
            assertNull(split.getAttr(MPI.TAG_UB)); // cached on COMM_WORLD and copied by dup only
            assertEquals(MPI.ERR_KEYVAL, assertThrows(MPIException.class, () -> world.setAttr(MPI.TAG_UB, 5)).getErrorClass());
            assertEquals(MPI.ERR_KEYVAL, assertThrows(MPIException.class, () -> world.deleteAttr(MPI.IO)).getErrorClass());
            assertEquals(MPI.ERR_KEYVAL, assertThrows(MPIException.class, () -> Comm.freeKeyval(MPI.APPNUM)).getErrorClass());
            dup.free();
            split.free();
        });
    }

    @Test
    void datatypeAttributesAreCopiedByDup() throws Exception {
        int key = Datatype.createKeyval();
        Datatype t = Datatype.createContiguous(3, MPI.INT);
        t.commit();
        t.setAttr(key, "triple");
        Datatype d = t.dup();
        assertEquals("triple", d.getAttr(key));
        d.deleteAttr(key);
        assertNull(d.getAttr(key));
        assertEquals("triple", t.getAttr(key));
        MPI.INT.setAttr(key, 4); // predefined types take attributes too
        assertEquals(4, MPI.INT.getAttr(key));
        MPI.INT.deleteAttr(key);
        int ckey = Comm.createKeyval();
        assertEquals(MPI.ERR_KEYVAL, assertThrows(MPIException.class, () -> t.getAttr(ckey)).getErrorClass());
        Comm.freeKeyval(ckey);
        t.free();
        assertEquals(MPI.ERR_TYPE, assertThrows(MPIException.class, () -> t.getAttr(key)).getErrorClass());
        Datatype.freeKeyval(key);
        assertEquals(MPI.ERR_KEYVAL, assertThrows(MPIException.class, () -> d.setAttr(key, 1)).getErrorClass());
        d.free();
    }

    @Test
    void userErrorClassesCodesAndStrings() throws Exception {
        int before = MPI.getErrorClass(MPI.ERR_TRUNCATE);
        assertEquals(MPI.ERR_TRUNCATE, before);
        assertTrue(MPI.getErrorString(MPI.ERR_TRUNCATE).contains("truncated"));
        int cls = MPI.addErrorClass();
        assertTrue(cls > MPI.ERR_LASTCODE);
        int code = MPI.addErrorCode(cls);
        assertTrue(code > cls);
        int code2 = MPI.addErrorCode(MPI.ERR_ARG);
        assertEquals(cls, MPI.getErrorClass(code));
        assertEquals(cls, MPI.getErrorClass(cls));
        assertEquals(MPI.ERR_ARG, MPI.getErrorClass(code2));
        assertEquals("", MPI.getErrorString(code));
        MPI.addErrorString(code, "solver diverged");
        MPI.addErrorString(cls, "solver error");
        assertEquals("solver diverged", MPI.getErrorString(code));
        assertEquals("solver error", MPI.getErrorString(cls));
        LocalJob.run(1, world -> assertTrue((Integer) world.getAttr(MPI.LASTUSEDCODE) >= code2));
        MPIException e = assertThrows(MPIException.class, () -> MPI.addErrorCode(code));
        assertEquals(MPI.ERR_ARG, e.getErrorClass());
        assertTrue(e.getMessage().contains("errorClass"), e.getMessage());
        assertEquals(MPI.ERR_ARG, assertThrows(MPIException.class, () -> MPI.addErrorString(MPI.ERR_ARG, "x")).getErrorClass());
        assertEquals(MPI.ERR_ARG, assertThrows(MPIException.class, () -> MPI.addErrorString(code, null)).getErrorClass());
        assertEquals(MPI.ERR_ARG, assertThrows(MPIException.class, () -> MPI.addErrorString(code, "x".repeat(256))).getErrorClass());
        assertEquals(MPI.ERR_ARG, assertThrows(MPIException.class, () -> MPI.getErrorClass(-5)).getErrorClass());
        assertEquals(MPI.ERR_ARG, assertThrows(MPIException.class, () -> MPI.getErrorString(Integer.MAX_VALUE)).getErrorClass());
    }

    @Test
    void versions() throws Exception {
        Version v = MPI.getVersion();
        assertEquals(MPI.VERSION, v.getVersion());
        assertEquals(MPI.SUBVERSION, v.getSubVersion());
        assertEquals(3, v.getVersion());
        assertEquals(1, v.getSubVersion());
        assertTrue(MPI.getLibVersion().startsWith(org.ftmpi.Version.LIBRARY), MPI.getLibVersion());
    }

    @Test
    void requestGetStatusDoesNotReleaseTheRequest() throws Exception {
        LocalJob.run(2, world -> {
            IntBuffer b = MPI.newIntBuffer(1);
            if (world.getRank() == 0) {
                Request r = world.iRecv(b, 1, MPI.INT, 1, 7);
                assertNull(r.getStatus()); // rank 1 sends only after the barrier
                world.barrier();
                Status s;
                while ((s = r.getStatus()) == null) {
                    Thread.onSpinWait();
                }
                assertEquals(1, s.getSource());
                assertEquals(7, s.getTag());
                assertEquals(1, s.getCount(MPI.INT));
                assertFalse(r.isNull()); // still to be completed
                assertNotNull(r.getStatus());
                Status w = r.waitStatus();
                assertEquals(1, w.getSource());
                assertEquals(42, b.get(0));
                assertTrue(r.isNull());
                assertNotNull(r.getStatus()); // empty status of a null request
            } else {
                world.barrier();
                b.put(0, 42);
                world.send(b, 1, MPI.INT, 0, 7);
            }
        });
    }

    @Test
    void callErrhandlerReturnsUnderErrorsReturnAndChecksTheCode() throws Exception {
        int code = MPI.addErrorCode(MPI.ERR_OTHER);
        LocalJob.run(2, world -> {
            world.setErrhandler(MPI.ERRORS_RETURN);
            world.callErrhandler(MPI.ERR_COMM); // MPI_Comm_call_errhandler returns MPI_SUCCESS
            world.callErrhandler(code);
            MPIException e = assertThrows(MPIException.class, () -> world.callErrhandler(-3));
            assertEquals(MPI.ERR_ARG, e.getErrorClass());
            assertTrue(e.getMessage().contains("errorCode -3"), e.getMessage());
            Intracomm d = world.dup();
            assertSame(MPI.ERRORS_RETURN, d.getErrhandler());
            d.free();
            assertEquals(MPI.ERR_COMM, assertThrows(MPIException.class, () -> d.callErrhandler(MPI.ERR_ARG)).getErrorClass());
            world.barrier();
        });
    }

    @Test
    void statusSettersAndLargeCounts() throws Exception {
        LocalJob.run(2, world -> {
            int me = world.getRank();
            Datatype pair = Datatype.createContiguous(2, MPI.INT);
            pair.commit();
            if (me == 0) {
                world.send(new int[6], 6, MPI.INT, 1, 3);
            } else {
                Status s = world.recv(new int[6], 6, MPI.INT, 0, 3);
                assertEquals(6, s.getElements(MPI.INT));
                assertEquals(new Count(6), s.getElementsX(MPI.INT));
                assertEquals(3, s.getCount(pair));
                s.setElements(MPI.INT, 10);
                assertEquals(10, s.getElements(MPI.INT));
                assertEquals(5, s.getCount(pair));
                s.setElementsX(pair, new Count(3)); // 3 basic elements: one whole pair and a half
                assertEquals(3, s.getElementsX(pair).getCount());
                assertEquals(MPI.UNDEFINED, s.getCount(pair));
                assertFalse(s.isCancelled());
                s.setCancelled(true);
                assertTrue(s.isCancelled());
                assertEquals(MPI.ERR_COUNT, assertThrows(MPIException.class, () -> s.setElements(MPI.INT, -1)).getErrorClass());
                assertEquals(MPI.ERR_COUNT, assertThrows(MPIException.class, () -> s.setElementsX(MPI.INT, null)).getErrorClass());
                assertEquals(MPI.ERR_TYPE, assertThrows(MPIException.class, () -> s.getElementsX(null)).getErrorClass());
                // a count beyond an int: getElements says UNDEFINED, getElementsX the value
                s.setElementsX(MPI.LONG, new Count(3_000_000_000L));
                assertEquals(MPI.UNDEFINED, s.getElements(MPI.LONG));
                assertEquals(3_000_000_000L, s.getElementsX(MPI.LONG).getCount());
            }
            pair.free();
        });
        Count a = new Count(5), b = new Count(7);
        assertTrue(a.compareTo(b) < 0);
        assertTrue(b.compareTo(a) > 0);
        assertEquals(0, a.compareTo(new Count(5)));
        a.setCount(7);
        assertEquals(b, a);
        assertEquals(b.hashCode(), a.hashCode());
        assertNotEquals(a, 7L);
    }
}
