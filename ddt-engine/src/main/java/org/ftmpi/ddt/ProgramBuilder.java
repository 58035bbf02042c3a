package org.ftmpi.ddt;

import java.util.Arrays;

/**
 * Online compactor: receives the runs of a type map in order ({@link #run}) and compacts them in
 * three stages, each keeping one pending item:
 * <ol>
 *   <li>run: adjacent runs (next offset == end of pending run, same type if typed) merge;</li>
 *   <li>loop: equal-length runs at a constant stride become {off, len, stride, count};</li>
 *   <li>outer loop: equal loops at a constant distance become {.., ostride, ocount}.</li>
 * </ol>
 * Memory is proportional to the output program, time to the number of input runs.
 * Single-threaded, used only during commit.
 */
final class ProgramBuilder {
    private final boolean typed;

    // stage 1: pending run
    private boolean hasR;
    private long rOff, rLen;
    private BasicType rType;
    // stage 2: pending loop
    private boolean hasL;
    private long lOff, lLen, lStride, lCount;
    private BasicType lType;
    // stage 3: pending outer loop
    private boolean hasO;
    private long oOff, oLen, oStride, oCount, oOstride, oOcount;
    private BasicType oType;
    // output
    private int n;
    private long[] off = new long[4], len = new long[4], stride = new long[4], count = new long[4],
            ostride = new long[4], ocount = new long[4];
    private BasicType[] type = new BasicType[4];

    ProgramBuilder(boolean typed) {
        this.typed = typed;
    }

    /** Appends {@code elements} contiguous elements of {@code t} at byte offset {@code offset}. */
    void run(long offset, BasicType t, long elements) {
        long bytes = elements * t.size();
        if (bytes == 0) {
            return;
        }
        BasicType tt = typed ? t : null;
        if (hasR && offset == rOff + rLen && tt == rType) {
            rLen += bytes;
            return;
        }
        flushRun();
        hasR = true;
        rOff = offset;
        rLen = bytes;
        rType = tt;
    }

    private void flushRun() {
        if (!hasR) {
            return;
        }
        hasR = false;
        if (hasL && lLen == rLen && lType == rType && (lCount == 1 || rOff == lOff + lCount * lStride)) {
            if (lCount == 1) {
                lStride = rOff - lOff;
            }
            lCount++;
            return;
        }
        flushLoop();
        hasL = true;
        lOff = rOff;
        lLen = rLen;
        lType = rType;
        lStride = 0;
        lCount = 1;
    }

    private void flushLoop() {
        if (!hasL) {
            return;
        }
        hasL = false;
        if (hasO && oLen == lLen && oType == lType && oCount == lCount && (lCount == 1 || oStride == lStride)
                && (oOcount == 1 || lOff == oOff + oOcount * oOstride)) {
            if (oOcount == 1) {
                oOstride = lOff - oOff;
            }
            oOcount++;
            return;
        }
        flushOuter();
        hasO = true;
        oOff = lOff;
        oLen = lLen;
        oType = lType;
        oStride = lStride;
        oCount = lCount;
        oOstride = 0;
        oOcount = 1;
    }

    private void flushOuter() {
        if (!hasO) {
            return;
        }
        hasO = false;
        if (n == off.length) {
            int c = n * 2;
            off = Arrays.copyOf(off, c);
            len = Arrays.copyOf(len, c);
            stride = Arrays.copyOf(stride, c);
            count = Arrays.copyOf(count, c);
            ostride = Arrays.copyOf(ostride, c);
            ocount = Arrays.copyOf(ocount, c);
            type = Arrays.copyOf(type, c);
        }
        // A loop whose blocks are back to back is one block (cannot arise from stage 1, kept for safety).
        long l = oLen, c = oCount, s = oStride;
        if (c > 1 && s == l) {
            l *= c;
            c = 1;
            s = 0;
        }
        off[n] = oOff;
        len[n] = l;
        stride[n] = s;
        count[n] = c;
        ostride[n] = oOstride;
        ocount[n] = oOcount;
        type[n] = oType;
        n++;
    }

    Program build() {
        flushRun();
        flushLoop();
        flushOuter();
        return new Program(n, Arrays.copyOf(off, n), Arrays.copyOf(len, n), Arrays.copyOf(stride, n),
                Arrays.copyOf(count, n), Arrays.copyOf(ostride, n), Arrays.copyOf(ocount, n),
                typed ? Arrays.copyOf(type, n) : null);
    }
}
