package org.ftmpi.ddt;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.MethodModel;
import java.lang.classfile.attribute.CodeAttribute;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The per-block copy kernels must stay inlinable: C2 inlines a hot callee only up to
 * {@code FreqInlineSize} (325 bytecodes on x86-64). {@code Raw.copy} at 538 bytecodes was never
 * inlined into the gather/scatter loops, and the 93-field struct packed at two thirds of the speed
 * it has inlined (docs/datatypes.md, session 7). This reads the compiled class and fails when a
 * kernel grows past the limit.
 */
class KernelSizeTest {
    private static final int FREQ_INLINE_SIZE = 325;
    /** Called once per block (or per word) inside the strided and single-block loops. */
    private static final Set<String> PER_BLOCK = Set.of("copy", "copyShort", "copyOutD", "copyInD", "w8", "w4",
            "out", "in", "gather", "scatter", "gatherD", "scatterD");

    @Test
    void perBlockKernelsFitTheHotInliningLimit() throws IOException {
        ClassModel raw;
        try (InputStream in = Raw.class.getResourceAsStream("Raw.class")) {
            assertNotNull(in, "Raw.class not found");
            raw = ClassFile.of().parse(in.readAllBytes());
        }
        List<String> seen = new ArrayList<>();
        for (MethodModel m : raw.methods()) {
            String name = m.methodName().stringValue();
            if (!PER_BLOCK.contains(name)) {
                continue;
            }
            int size = m.findAttribute(java.lang.classfile.Attributes.code()).map(CodeAttribute::codeLength)
                    .orElse(0);
            seen.add(name);
            assertTrue(size <= FREQ_INLINE_SIZE, "Raw." + name + m.methodType().stringValue() + " is " + size
                    + " bytecodes, above C2's FreqInlineSize (" + FREQ_INLINE_SIZE + "): it would not be inlined");
        }
        assertFalse(seen.isEmpty());
        assertTrue(seen.containsAll(PER_BLOCK), "kernels found: " + seen);
    }
}
