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
}
