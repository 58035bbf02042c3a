package org.ftmpi.ddt;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;

/**
 * Packs {@code count} instances of a committed datatype from a user buffer into a packed stream,
 * or unpacks a stream into a user buffer, <em>one segment at a time</em>: each {@link #packNext}
 * / {@link #unpackNext} call moves up to the given number of bytes and remembers where it
 * stopped (op, outer/inner loop index, byte within block, partial element), so a transport can
 * send segment k while segment k+1 is being packed, with no intermediate copy of the message.
 *
 * <pre>
 *   stream = pass_0 | pass_1 | ...      (one pass; REORDERED: one pass per basic type present)
 *   pass   = instance_0 | instance_1 ...  (instances at user offset + k * extent)
 *   instance = blocks of the pass program in order (ALIGNED: zero padding before each block to
 *              the element alignment and after the instance to the type's alignment)
 * </pre>
 *
 * <b>Note:</b> not thread-safe; one convertor belongs to one request and is driven by the thread
 * that owns that request. No allocation after construction.
 */
public final class Convertor {
    private static final ValueLayout.OfLong L8 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt L4 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfShort L2 = ValueLayout.JAVA_SHORT_UNALIGNED;
    /**
     * Raw native copies are used only when this module may call restricted methods
     * ({@code --enable-native-access}); they address memory through one constant all-of-memory
     * segment so C2 folds the per-access bounds and liveness checks. Ranges are checked once
     * per call against the real segments before any raw access.
     */
    static final boolean RAW = Convertor.class.getModule().isNativeAccessEnabled()
            && !Boolean.getBoolean("org.ftmpi.ddt.noRaw");

    private final boolean unpack;
    private final Datatype type;
    private final long count;
    /** The user buffer as given (array, buffer or segment). */
    private final Object buf;
    /**
     * The user buffer as a segment, created on first use ({@link #userSeg()}): the raw and
     * {@code double[]} paths never need it, and a heap segment costs two allocations per convertor.
     */
    private MemorySegment user;
    /** Size of the user buffer in bytes. */
    private final long userBytes;
    /** Whether the user buffer is native memory (direct buffer, native segment). */
    private final boolean userNative;
    private final long base;
    private final boolean swap;
    private final boolean aligned;
    private final int maxAlign;
    private final Program[] passes;
    private final long[] passInstances;
    private final long extent;
    private final long total;
    /** Single pass, no padding, no byte swapping: the bulk-copy fast path. */
    private final boolean plain;
    /**
     * The user's double[] when every block is 8-byte aligned in it: the plain path then indexes the
     * array directly (no heap-segment access, immune to segment-class profile pollution).
     */
    private final double[] userDoubles;
    /** Native user buffer base address when the raw native path may be used, else -1. */
    private final long userAddress;
    /** Flat word index of the plain program ({@link WordIndex}), or null. */
    private final WordIndex words;
    /** Scratch for the spacer stores of far-strided 8-byte runs ({@link Spacer}), or null when the program has none. */
    private final long[] spacer;
    /** Holds one element split across segments (byte-swapping encodings only). */
    private final MemorySegment scratch;

    // resumable cursor
    private long pos;
    private int pass;
    private long inst;
    private int op;
    private long oi;
    private long ii;
    private long b;

    private Convertor(boolean unpack, Datatype type, long count, Object buf, long offset, PackOptions opts) {
        if (count < 0) {
            throw DatatypeException.count("count must be >= 0, was " + count);
        }
        if (type == null) {
            throw new DatatypeException(DatatypeException.Kind.TYPE, "datatype must not be null");
        }
        if (opts == null) {
            throw DatatypeException.arg("options must not be null");
        }
        Datatype.Layout l = type.layout();
        this.unpack = unpack;
        this.type = type;
        this.count = count;
        this.buf = buf;
        long arrayBytes = Buffers.arrayBytes(buf);
        if (arrayBytes < 0) { // not a primitive array: buffers and segments are looked at once here
            this.user = Buffers.segment(buf);
            this.userBytes = user.byteSize();
            this.userNative = user.isNative();
        } else {
            this.userBytes = arrayBytes;
            this.userNative = false;
        }
        this.base = Buffers.byteOffset(buf, offset);
        this.extent = type.extent();
        this.swap = opts.encoding().swaps();
        this.aligned = opts.padding() == Padding.ALIGNED;
        this.maxAlign = l.maxAlign;
        this.scratch = swap ? MemorySegment.ofArray(new long[1]) : null;
        if (offset < 0) {
            throw DatatypeException.buffer("offset must be >= 0, was " + offset);
        }
        if (unpack) {
            if (user != null && user.isReadOnly()) { // arrays are never read-only
                throw DatatypeException.buffer("receive buffer is read-only");
            }
            type.checkReceive(count);
        }
        checkUserRange();
        switch (opts.padding()) {
            case NONE -> {
                Program p = swap ? l.typed : l.bytes;
                Program f = p.foldInstances(count, extent);
                passes = new Program[] {f != null ? f : p};
                passInstances = new long[] {f != null ? 1 : count};
            }
            case ALIGNED -> {
                passes = new Program[] {l.typed};
                passInstances = new long[] {count};
            }
            default -> {
                int k = 0;
                Program[] ps = new Program[BasicType.REORDER_SEQUENCE.length];
                long[] ins = new long[ps.length];
                for (BasicType t : BasicType.REORDER_SEQUENCE) {
                    if (l.signature.elements(t) > 0) {
                        Program p = l.typed.filter(t);
                        Program f = p.foldInstances(count, extent);
                        ps[k] = f != null ? f : p;
                        ins[k++] = f != null ? 1 : count;
                    }
                }
                passes = java.util.Arrays.copyOf(ps, k);
                passInstances = java.util.Arrays.copyOf(ins, k);
            }
        }
        this.total = type.packSize(count, opts);
        this.plain = passes.length == 1 && !aligned && !swap;
        this.userAddress = plain && RAW && userNative ? user.address() : -1;
        this.userDoubles = plain && buf instanceof double[] a && base % 8 == 0 && extent % 8 == 0
                && passes[0].allMultiplesOf8() ? a : null;
        this.words = plain && RAW ? passes[0].wordIndex() : null;
        this.spacer = plain && RAW && Spacer.ENABLED && passes[0].farStrided() ? Spacer.scratch() : null;
    }

    /** The user buffer as a segment (created on first use). */
    private MemorySegment userSeg() {
        MemorySegment s = user;
        if (s == null) {
            user = s = Buffers.segment(buf);
        }
        return s;
    }

    private void checkUserRange() {
        if (type.size == 0 || count == 0) {
            return;
        }
        long span = Math.multiplyExact(count - 1, extent);
        long lo = base + type.trueLb + Math.min(0, span);
        long hi = base + type.trueUb + Math.max(0, span);
        if (lo < 0 || hi > userBytes) {
            throw DatatypeException.buffer((unpack ? "receive" : "send") + " buffer too small: " + count + " x "
                    + type + " at byte offset " + base + " touches bytes [" + lo + ", " + hi + ") of a "
                    + userBytes + "-byte buffer");
        }
    }

    /** Convertor that packs {@code count} instances at {@code offset} (elements for arrays, else bytes) of {@code buf}. */
    public static Convertor forPack(Datatype type, long count, Object buf, long offset, PackOptions opts) {
        return new Convertor(false, type, count, buf, offset, opts);
    }

    public static Convertor forPack(Datatype type, long count, Object buf, long offset) {
        return forPack(type, count, buf, offset, PackOptions.NATIVE);
    }

    /** Convertor that unpacks into {@code count} instances at {@code offset} of {@code buf}. */
    public static Convertor forUnpack(Datatype type, long count, Object buf, long offset, PackOptions opts) {
        return new Convertor(true, type, count, buf, offset, opts);
    }

    public static Convertor forUnpack(Datatype type, long count, Object buf, long offset) {
        return forUnpack(type, count, buf, offset, PackOptions.NATIVE);
    }

    /** Whether the plain path moves far-strided 8-byte runs with spacer stores ({@link Spacer}); for tests. */
    boolean usesSpacer() {
        return spacer != null;
    }

    /** Whether the plain path may use the flat word index ({@link WordIndex}); for tests. */
    boolean usesWordIndex() {
        return words != null;
    }

    /** Bytes of packed stream produced or consumed so far. */
    public long position() {
        return pos;
    }

    /** Total bytes of the packed stream. */
    public long size() {
        return total;
    }

    public long remaining() {
        return total - pos;
    }

    public boolean done() {
        return pos == total;
    }

    /** Rewinds to the start of the stream (same type, buffer and options). */
    public Convertor reset() {
        pos = 0;
        pass = 0;
        inst = 0;
        op = 0;
        oi = 0;
        ii = 0;
        b = 0;
        return this;
    }

    /**
     * Packs the next {@code min(maxBytes, remaining())} bytes of the stream into {@code dst} at
     * {@code dstOffset}. Returns the number of bytes written.
     */
    public long packNext(MemorySegment dst, long dstOffset, long maxBytes) {
        requireMode(false);
        if (maxBytes < 0) {
            throw DatatypeException.count("maxBytes must be >= 0, was " + maxBytes);
        }
        checkExt(dst, dstOffset, Math.min(maxBytes, total - pos), "destination");
        if (dst.isReadOnly()) {
            throw DatatypeException.buffer("destination buffer is read-only");
        }
        long n = Math.min(maxBytes, total - pos);
        return plain ? packPlain(dst, dstOffset, n) : transfer(dst, dstOffset, n);
    }

    /** Packs into {@code dst} at its position (advanced by the bytes written), at most {@code maxBytes}. */
    public long packNext(ByteBuffer dst, long maxBytes) {
        long k = packNext(Buffers.segment(dst), dst.position(), Math.min(maxBytes, dst.remaining()));
        dst.position(dst.position() + (int) k);
        return k;
    }

    /** Packs into {@code dst[off, off + maxBytes)}. */
    public long packNext(byte[] dst, int off, int maxBytes) {
        return packNext(MemorySegment.ofArray(dst), off, maxBytes);
    }

    /**
     * Unpacks the next {@code bytes} bytes of the stream from {@code src} at {@code srcOffset}.
     * If {@code bytes} exceeds {@link #remaining()}, what fits is unpacked and a TRUNCATE error
     * is raised.
     */
    public long unpackNext(MemorySegment src, long srcOffset, long bytes) {
        requireMode(true);
        checkExt(src, srcOffset, bytes, "source");
        long n = Math.min(bytes, total - pos);
        long k = plain ? unpackPlain(src, srcOffset, n) : transfer(src, srcOffset, n);
        if (k < bytes) {
            throw new DatatypeException(DatatypeException.Kind.TRUNCATE, "message truncated: " + (bytes - k)
                    + " bytes beyond the " + total + "-byte receive of " + count + " x " + type);
        }
        return k;
    }

    /** Unpacks {@code bytes} bytes from {@code src} at its position (advanced). */
    public long unpackNext(ByteBuffer src, long bytes) {
        if (bytes > src.remaining()) {
            throw DatatypeException.buffer("bytes (" + bytes + ") exceeds source remaining (" + src.remaining() + ")");
        }
        long k = unpackNext(Buffers.segment(src), src.position(), bytes);
        src.position(src.position() + (int) k);
        return k;
    }

    public long unpackNext(byte[] src, int off, int bytes) {
        return unpackNext(MemorySegment.ofArray(src), off, bytes);
    }

    private void requireMode(boolean wantUnpack) {
        if (unpack != wantUnpack) {
            throw new DatatypeException(DatatypeException.Kind.OTHER,
                    "convertor was created for " + (unpack ? "unpack" : "pack"));
        }
    }

    private static void checkExt(MemorySegment s, long off, long len, String what) {
        if (s == null) {
            throw DatatypeException.buffer(what + " buffer must not be null");
        }
        if (len < 0) {
            throw DatatypeException.count("byte count must be >= 0, was " + len);
        }
        if (off < 0 || off > s.byteSize() || len > s.byteSize() - off) {
            throw DatatypeException.buffer(what + " range [" + off + ", " + (off + len) + ") exceeds its "
                    + s.byteSize() + "-byte buffer");
        }
    }

    // ------------------------------------------------------------------ engine

    /**
     * Whether this call may address the transport segment raw ({@link Raw}): it is native, alive
     * and accessible from this thread now, and so is the user segment if native. (As in MPI, freeing a buffer while an
     * operation on it is in progress is erroneous; the raw path does not guard against a
     * concurrent close during the copy.)
     */
    private boolean rawUsable(MemorySegment ext) {
        Thread t = Thread.currentThread();
        return ext.isNative() && ext.scope().isAlive() && ext.isAccessibleBy(t)
                && (!userNative || (user.scope().isAlive() && user.isAccessibleBy(t)));
    }

    /**
     * Fast path, pack and unpack compiled as separate methods so each has its own type profile (one pass, no padding, no swapping): the cursor lives in locals for the whole
     * call and is written back once; whole blocks are bulk or word copies, strided runs of whole
     * blocks go to the tight {@link #gather}/{@link #scatter} loops.
     */
    private long packPlain(MemorySegment ext, long extOff, long max) {
        Program g = passes[0];
        final long[] offs = g.off, lens = g.len, strides = g.stride, counts = g.count, ostrides = g.ostride,
                ocounts = g.ocount;
        final int n = g.n;
        final boolean singles = g.singles;
        final long instances = passInstances[0];
        final double[] ud = userDoubles;
        // raw native path: both sides native and range-checked already (constructor / packNext)
        final boolean rawExt = RAW && rawUsable(ext);
        final boolean raw = rawExt && userAddress >= 0;
        final long ua = userAddress, ea = rawExt ? ext.address() : 0;
        // flat word index: raw paths only (native user, or double[] user with a native stream)
        final WordIndex wi = words != null && (raw || (ud != null && rawExt)) ? words : null;
        final boolean up = false; // constant: javac drops the unpack branches
        long inst = this.inst, oi = this.oi, ii = this.ii, b = this.b;
        int op = this.op;
        long done = 0;
        while (done < max) {
            if (op == n) {
                op = 0;
                inst++;
                continue;
            }
            if (wi != null && (b & 7) == 0) { // irregular short blocks: the flat word index
                int w0 = wi.first[op] + (int) (b >>> 3);
                int w1 = moveWords(up, wi, w0, base + inst * extent, ea + extOff + done, max - done, raw ? ua : -1, ud);
                if (w1 > w0) {
                    done += 8L * (w1 - w0);
                    op = wi.blockOf(w1);
                    b = 8L * (w1 - wi.first[op]);
                    continue;
                }
            }
            if (singles && b == 0 && (raw || (ud != null && rawExt))) {
                // irregular single blocks: one tight loop over the ops (no two-level cursor, no
                // per-block dispatch); a block that does not fit is left to the general path
                long at = base + inst * extent, e = extOff + done, room = max - done;
                int j = op;
                if (raw) {
                    for (long l; j < n && (l = lens[j]) <= room; j++, e += l, room -= l) {
                        Raw.copy(ua + at + offs[j], ea + e, l);
                    }
                } else {
                    for (long l; j < n && (l = lens[j]) <= room; j++, e += l, room -= l) {
                        Raw.copyOutD(ud, at + offs[j], ea + e, l);
                    }
                }
                done = max - room;
                op = j;
                if (op == n || done == max) {
                    continue;
                }
            }
            long len = lens[op];
            long addr = base + inst * extent + offs[op] + oi * ostrides[op] + ii * strides[op];
            long room = max - done;
            long e = extOff + done;
            if (b == 0 && room >= len) {
                long cnt = counts[op];
                if (cnt == 1) {
                    if (raw) {
                        if (up) {
                            Raw.copy(ea + e, ua + addr, len);
                        } else {
                            Raw.copy(ua + addr, ea + e, len);
                        }
                    } else if (ud != null) {
                        if (rawExt) {
                            if (up) {
                                Raw.copyInD(ea + e, ud, addr, len);
                            } else {
                                Raw.copyOutD(ud, addr, ea + e, len);
                            }
                        } else if (up) {
                            copyInD(ext, e, ud, addr, len);
                        } else {
                            copyOutD(ud, addr, ext, e, len);
                        }
                    } else if (up) {
                        copyIn(ext, e, userSeg(), addr, len);
                    } else {
                        copyOut(userSeg(), addr, ext, e, len);
                    }
                    done += len;
                } else {
                    long nb = Math.min(Math.min(cnt - ii, room / len), Integer.MAX_VALUE);
                    if (raw) {
                        if (up) {
                            Raw.scatter(ea + e, ua + addr, strides[op], len, (int) nb, spacer);
                        } else {
                            Raw.gather(ua + addr, strides[op], len, (int) nb, ea + e, spacer);
                        }
                    } else if (ud != null) {
                        if (rawExt) {
                            if (up) {
                                Raw.scatterD(ea + e, ud, addr, strides[op], len, (int) nb, spacer);
                            } else {
                                Raw.gatherD(ud, addr, strides[op], len, (int) nb, ea + e, spacer);
                            }
                        } else if (up) {
                            scatterD(ext, e, ud, addr, strides[op], len, (int) nb);
                        } else {
                            gatherD(ud, addr, strides[op], len, (int) nb, ext, e);
                        }
                    } else if (up) {
                        scatter(ext, e, userSeg(), addr, strides[op], len, nb);
                    } else {
                        gather(userSeg(), addr, strides[op], len, nb, ext, e);
                    }
                    done += nb * len;
                    ii += nb;
                    if (ii != cnt) {
                        continue;
                    }
                }
            } else {
                long k = Math.min(len - b, room);
                if (up) {
                    copyIn(ext, e, userSeg(), addr + b, k);
                } else {
                    copyOut(userSeg(), addr + b, ext, e, k);
                }
                done += k;
                b += k;
                if (b != len) {
                    continue;
                }
                b = 0;
                if (++ii != counts[op]) {
                    continue;
                }
            }
            ii = 0;
            if (++oi == ocounts[op]) {
                oi = 0;
                op++;
            }
        }
        if (op == n && inst + 1 == instances) { // normalise the end-of-stream cursor
            op = 0;
            inst++;
        }
        this.inst = inst;
        this.op = op;
        this.oi = oi;
        this.ii = ii;
        this.b = b;
        this.pos += done;
        if (this.inst == instances) {
            this.pass = 1;
        }
        return done;
    }


    private long unpackPlain(MemorySegment ext, long extOff, long max) {
        Program g = passes[0];
        final long[] offs = g.off, lens = g.len, strides = g.stride, counts = g.count, ostrides = g.ostride,
                ocounts = g.ocount;
        final int n = g.n;
        final boolean singles = g.singles;
        final long instances = passInstances[0];
        final double[] ud = userDoubles;
        // raw native path: both sides native and range-checked already (constructor / packNext)
        final boolean rawExt = RAW && rawUsable(ext);
        final boolean raw = rawExt && userAddress >= 0;
        final long ua = userAddress, ea = rawExt ? ext.address() : 0;
        // flat word index: raw paths only (native user, or double[] user with a native stream)
        final WordIndex wi = words != null && (raw || (ud != null && rawExt)) ? words : null;
        final boolean up = true; // constant: javac drops the pack branches
        long inst = this.inst, oi = this.oi, ii = this.ii, b = this.b;
        int op = this.op;
        long done = 0;
        while (done < max) {
            if (op == n) {
                op = 0;
                inst++;
                continue;
            }
            if (wi != null && (b & 7) == 0) { // irregular short blocks: the flat word index
                int w0 = wi.first[op] + (int) (b >>> 3);
                int w1 = moveWords(up, wi, w0, base + inst * extent, ea + extOff + done, max - done, raw ? ua : -1, ud);
                if (w1 > w0) {
                    done += 8L * (w1 - w0);
                    op = wi.blockOf(w1);
                    b = 8L * (w1 - wi.first[op]);
                    continue;
                }
            }
            if (singles && b == 0 && (raw || (ud != null && rawExt))) {
                // irregular single blocks: one tight loop over the ops (no two-level cursor, no
                // per-block dispatch); a block that does not fit is left to the general path
                long at = base + inst * extent, e = extOff + done, room = max - done;
                int j = op;
                if (raw) {
                    for (long l; j < n && (l = lens[j]) <= room; j++, e += l, room -= l) {
                        Raw.copy(ea + e, ua + at + offs[j], l);
                    }
                } else {
                    for (long l; j < n && (l = lens[j]) <= room; j++, e += l, room -= l) {
                        Raw.copyInD(ea + e, ud, at + offs[j], l);
                    }
                }
                done = max - room;
                op = j;
                if (op == n || done == max) {
                    continue;
                }
            }
            long len = lens[op];
            long addr = base + inst * extent + offs[op] + oi * ostrides[op] + ii * strides[op];
            long room = max - done;
            long e = extOff + done;
            if (b == 0 && room >= len) {
                long cnt = counts[op];
                if (cnt == 1) {
                    if (raw) {
                        if (up) {
                            Raw.copy(ea + e, ua + addr, len);
                        } else {
                            Raw.copy(ua + addr, ea + e, len);
                        }
                    } else if (ud != null) {
                        if (rawExt) {
                            if (up) {
                                Raw.copyInD(ea + e, ud, addr, len);
                            } else {
                                Raw.copyOutD(ud, addr, ea + e, len);
                            }
                        } else if (up) {
                            copyInD(ext, e, ud, addr, len);
                        } else {
                            copyOutD(ud, addr, ext, e, len);
                        }
                    } else if (up) {
                        copyIn(ext, e, userSeg(), addr, len);
                    } else {
                        copyOut(userSeg(), addr, ext, e, len);
                    }
                    done += len;
                } else {
                    long nb = Math.min(Math.min(cnt - ii, room / len), Integer.MAX_VALUE);
                    if (raw) {
                        if (up) {
                            Raw.scatter(ea + e, ua + addr, strides[op], len, (int) nb, spacer);
                        } else {
                            Raw.gather(ua + addr, strides[op], len, (int) nb, ea + e, spacer);
                        }
                    } else if (ud != null) {
                        if (rawExt) {
                            if (up) {
                                Raw.scatterD(ea + e, ud, addr, strides[op], len, (int) nb, spacer);
                            } else {
                                Raw.gatherD(ud, addr, strides[op], len, (int) nb, ea + e, spacer);
                            }
                        } else if (up) {
                            scatterD(ext, e, ud, addr, strides[op], len, (int) nb);
                        } else {
                            gatherD(ud, addr, strides[op], len, (int) nb, ext, e);
                        }
                    } else if (up) {
                        scatter(ext, e, userSeg(), addr, strides[op], len, nb);
                    } else {
                        gather(userSeg(), addr, strides[op], len, nb, ext, e);
                    }
                    done += nb * len;
                    ii += nb;
                    if (ii != cnt) {
                        continue;
                    }
                }
            } else {
                long k = Math.min(len - b, room);
                if (up) {
                    copyIn(ext, e, userSeg(), addr + b, k);
                } else {
                    copyOut(userSeg(), addr + b, ext, e, k);
                }
                done += k;
                b += k;
                if (b != len) {
                    continue;
                }
                b = 0;
                if (++ii != counts[op]) {
                    continue;
                }
            }
            ii = 0;
            if (++oi == ocounts[op]) {
                oi = 0;
                op++;
            }
        }
        if (op == n && inst + 1 == instances) { // normalise the end-of-stream cursor
            op = 0;
            inst++;
        }
        this.inst = inst;
        this.op = op;
        this.oi = oi;
        this.ii = ii;
        this.b = b;
        this.pos += done;
        if (this.inst == instances) {
            this.pass = 1;
        }
        return done;
    }

    /**
     * Moves the words {@code [w0, w0 + room / 8)} (at most to the end of the instance) of the
     * instance at user byte offset {@code at} through the flat word index, between the native
     * stream at address {@code e} and the user buffer (native at address {@code ua} if
     * {@code ua >= 0}, else the double[] {@code ud}); returns the word after the last one moved.
     * A partial word is left to the caller.
     */
    private static int moveWords(boolean up, WordIndex wi, int w0, long at, long e, long room, long ua, double[] ud) {
        int w1 = (int) Math.min(wi.word.length, w0 + room / 8);
        if (w1 > w0) {
            if (ua >= 0) {
                if (up) {
                    Raw.scatterWords(e, ua + at, wi.word, w0, w1);
                } else {
                    Raw.gatherWords(ua + at, wi.word, w0, w1, e);
                }
            } else if (up) {
                Raw.scatterWordsD(e, ud, (int) (at >> 3), wi.word, w0, w1);
            } else {
                Raw.gatherWordsD(ud, (int) (at >> 3), wi.word, w0, w1, e);
            }
        }
        return w1;
    }

    private long transfer(MemorySegment ext, long extOff, long max) {
        long done = 0;
        while (done < max) {
            Program g = passes[pass];
            if (inst == passInstances[pass]) {
                pass++;
                inst = 0;
                op = 0;
                continue;
            }
            if (op == g.n) {
                if (aligned) {
                    long k = pad(ext, extOff + done, max - done, maxAlign);
                    if (k > 0) {
                        done += k;
                        continue;
                    }
                }
                inst++;
                op = 0;
                continue;
            }
            if (b == 0 && aligned) {
                long k = pad(ext, extOff + done, max - done, g.type[op].alignment());
                if (k > 0) {
                    done += k;
                    continue;
                }
            }
            long len = g.len[op];
            long stride = g.stride[op];
            long addr = base + inst * extent + g.off[op] + oi * g.ostride[op] + ii * stride;
            long room = max - done;
            int esize = swap ? g.type[op].size() : 1;
            if (b == 0 && room >= len && esize == 1) {
                long nb = Math.min(g.count[op] - ii, room / len);
                if (unpack) {
                    scatter(ext, extOff + done, userSeg(), addr, stride, len, nb);
                } else {
                    gather(userSeg(), addr, stride, len, nb, ext, extOff + done);
                }
                long k = nb * len;
                done += k;
                pos += k;
                ii += nb;
                if (ii == g.count[op]) {
                    nextOuter(g);
                }
                continue;
            }
            long k = esize == 1 ? copyPart(addr, len, ext, extOff + done, room)
                    : swapPart(addr, esize, len, ext, extOff + done, room);
            done += k;
            pos += k;
            b += k;
            if (b == len) {
                b = 0;
                if (++ii == g.count[op]) {
                    nextOuter(g);
                }
            }
        }
        return done;
    }

    private void nextOuter(Program g) {
        ii = 0;
        if (++oi == g.ocount[op]) {
            oi = 0;
            op++;
        }
    }

    /** Writes (pack) or skips (unpack) zero padding up to the next multiple of {@code a}. */
    private long pad(MemorySegment ext, long extOff, long room, int a) {
        long need = Math.floorMod(-pos, (long) a);
        long k = Math.min(need, room);
        if (k > 0 && !unpack) {
            ext.asSlice(extOff, k).fill((byte) 0);
        }
        pos += k;
        return k;
    }

    private long copyPart(long addr, long len, MemorySegment ext, long extOff, long room) {
        long k = Math.min(len - b, room);
        if (unpack) {
            copyIn(ext, extOff, userSeg(), addr + b, k);
        } else {
            copyOut(userSeg(), addr + b, ext, extOff, k);
        }
        return k;
    }

    /** Threshold below which word loops beat {@link MemorySegment#copy}'s fixed setup cost. */
    private static final long SMALL_COPY = 128;

    /**
     * Copies {@code len} bytes. Small copies are word moves: whole 8-byte words, then one final
     * word overlapping the previous one (so a 36-byte block is 5 moves, not 4 words + 4 bytes).
     */
    // copyOut (user -> stream) and copyIn (stream -> user) are the same code kept apart on purpose:
    // C2 specialises MemorySegment accesses on the segment classes seen at each call site, and one
    // site seeing heap-array, native and heap-byte segments in both roles turns megamorphic
    // (measured 10-25x slower). Separate sites keep each at one or two classes.
    static void copyOut(MemorySegment src, long so, MemorySegment dst, long d, long len) {
        if (len >= 8 && len <= 72) {
            copyOutWords(src, so, dst, d, len);
        } else if (len >= SMALL_COPY) {
            MemorySegment.copy(src, so, dst, d, len);
        } else if (len > 72) {
            int last = (int) len - 8;
            for (int i = 0; i < last; i += 8) {
                dst.set(L8, d + i, src.get(L8, so + i));
            }
            dst.set(L8, d + last, src.get(L8, so + last));
        } else if (len >= 4) {
            dst.set(L4, d, src.get(L4, so));
            dst.set(L4, d + len - 4, src.get(L4, so + len - 4));
        } else {
            for (int i = 0; i < (int) len; i++) {
                dst.set(ValueLayout.JAVA_BYTE, d + i, src.get(ValueLayout.JAVA_BYTE, so + i));
            }
        }
    }

    /** 8 <= len <= 72: straight-line word moves (measured ~30% faster than a loop for 2-9 words). */
    private static void copyOutWords(MemorySegment src, long so, MemorySegment dst, long d, long len) {
        switch ((int) (len >>> 3)) {
            case 9: dst.set(L8, d + 64, src.get(L8, so + 64)); // fall through
            case 8: dst.set(L8, d + 56, src.get(L8, so + 56)); // fall through
            case 7: dst.set(L8, d + 48, src.get(L8, so + 48)); // fall through
            case 6: dst.set(L8, d + 40, src.get(L8, so + 40)); // fall through
            case 5: dst.set(L8, d + 32, src.get(L8, so + 32)); // fall through
            case 4: dst.set(L8, d + 24, src.get(L8, so + 24)); // fall through
            case 3: dst.set(L8, d + 16, src.get(L8, so + 16)); // fall through
            case 2: dst.set(L8, d + 8, src.get(L8, so + 8)); // fall through
            default: dst.set(L8, d, src.get(L8, so));
        }
        long last = len - 8;
        dst.set(L8, d + last, src.get(L8, so + last));
    }


    static void copyIn(MemorySegment src, long so, MemorySegment dst, long d, long len) {
        if (len >= 8 && len <= 72) {
            copyInWords(src, so, dst, d, len);
        } else if (len >= SMALL_COPY) {
            MemorySegment.copy(src, so, dst, d, len);
        } else if (len > 72) {
            int last = (int) len - 8;
            for (int i = 0; i < last; i += 8) {
                dst.set(L8, d + i, src.get(L8, so + i));
            }
            dst.set(L8, d + last, src.get(L8, so + last));
        } else if (len >= 4) {
            dst.set(L4, d, src.get(L4, so));
            dst.set(L4, d + len - 4, src.get(L4, so + len - 4));
        } else {
            for (int i = 0; i < (int) len; i++) {
                dst.set(ValueLayout.JAVA_BYTE, d + i, src.get(ValueLayout.JAVA_BYTE, so + i));
            }
        }
    }

    /** 8 <= len <= 72: straight-line word moves (measured ~30% faster than a loop for 2-9 words). */
    private static void copyInWords(MemorySegment src, long so, MemorySegment dst, long d, long len) {
        switch ((int) (len >>> 3)) {
            case 9: dst.set(L8, d + 64, src.get(L8, so + 64)); // fall through
            case 8: dst.set(L8, d + 56, src.get(L8, so + 56)); // fall through
            case 7: dst.set(L8, d + 48, src.get(L8, so + 48)); // fall through
            case 6: dst.set(L8, d + 40, src.get(L8, so + 40)); // fall through
            case 5: dst.set(L8, d + 32, src.get(L8, so + 32)); // fall through
            case 4: dst.set(L8, d + 24, src.get(L8, so + 24)); // fall through
            case 3: dst.set(L8, d + 16, src.get(L8, so + 16)); // fall through
            case 2: dst.set(L8, d + 8, src.get(L8, so + 8)); // fall through
            default: dst.set(L8, d, src.get(L8, so));
        }
        long last = len - 8;
        dst.set(L8, d + last, src.get(L8, so + last));
    }


    /** Byte-reversing transfer of part of a block of {@code s}-byte elements; handles split elements. */
    private long swapPart(long addr, int s, long len, MemorySegment ext, long extOff, long room) {
        long done = 0;
        while (done < room && b + done < len) {
            long cur = b + done;
            long within = cur % s;
            if (within == 0 && room - done >= s) {
                long m = Math.min((len - cur) / s, (room - done) / s);
                if (unpack) {
                    swapElems(ext, extOff + done, userSeg(), addr + cur, s, m);
                } else {
                    swapElems(userSeg(), addr + cur, ext, extOff + done, s, m);
                }
                done += m * s;
            } else {
                long k = Math.min(s - within, room - done);
                long elem = addr + cur - within;
                if (unpack) {
                    MemorySegment.copy(ext, extOff + done, scratch, within, k);
                    if (within + k == s) {
                        swapElems(scratch, 0, userSeg(), elem, s, 1);
                    }
                } else {
                    swapElems(userSeg(), elem, scratch, 0, s, 1);
                    MemorySegment.copy(scratch, within, ext, extOff + done, k);
                }
                done += k;
            }
        }
        return done;
    }

    private static void swapElems(MemorySegment from, long fo, MemorySegment to, long to0, int s, long m) {
        switch (s) {
            case 8 -> {
                for (long i = 0; i < m; i++) {
                    to.set(L8, to0 + 8 * i, Long.reverseBytes(from.get(L8, fo + 8 * i)));
                }
            }
            case 4 -> {
                for (long i = 0; i < m; i++) {
                    to.set(L4, to0 + 4 * i, Integer.reverseBytes(from.get(L4, fo + 4 * i)));
                }
            }
            case 2 -> {
                for (long i = 0; i < m; i++) {
                    to.set(L2, to0 + 2 * i, Short.reverseBytes(from.get(L2, fo + 2 * i)));
                }
            }
            default -> MemorySegment.copy(from, fo, to, to0, s * m);
        }
    }

    /** Pack: {@code nb} blocks of {@code len} bytes at {@code stride} from src into contiguous dst. */
    static void gather(MemorySegment src, long so, long stride, long len, long nb, MemorySegment dst, long d) {
        while (nb > Integer.MAX_VALUE) { // int-counted loops below; C2 optimises those best
            gather(src, so, stride, len, Integer.MAX_VALUE, dst, d);
            so += Integer.MAX_VALUE * stride;
            d += Integer.MAX_VALUE * len;
            nb -= Integer.MAX_VALUE;
        }
        int n = (int) nb;
        if (n == 1) {
            copyOut(src, so, dst, d, len);
        } else if (len == 8) {
            for (int i = 0; i < n; i++) {
                dst.set(L8, d + 8L * i, src.get(L8, so + i * stride));
            }
        } else if (len == 4) {
            for (int i = 0; i < n; i++) {
                dst.set(L4, d + 4L * i, src.get(L4, so + i * stride));
            }
        } else if (len == 16) {
            for (int i = 0; i < n; i++) {
                long s = so + i * stride;
                dst.set(L8, d + 16L * i, src.get(L8, s));
                dst.set(L8, d + 16L * i + 8, src.get(L8, s + 8));
            }
        } else {
            for (int i = 0; i < n; i++) {
                copyOut(src, so + i * stride, dst, d + i * len, len);
            }
        }
    }

    /** Unpack: {@code nb} contiguous blocks of {@code len} bytes from src into dst at {@code stride}. */
    static void scatter(MemorySegment src, long s, MemorySegment dst, long d0, long stride, long len, long nb) {
        while (nb > Integer.MAX_VALUE) {
            scatter(src, s, dst, d0, stride, len, Integer.MAX_VALUE);
            s += Integer.MAX_VALUE * len;
            d0 += Integer.MAX_VALUE * stride;
            nb -= Integer.MAX_VALUE;
        }
        int n = (int) nb;
        if (n == 1) {
            copyIn(src, s, dst, d0, len);
        } else if (len == 8) {
            for (int i = 0; i < n; i++) {
                dst.set(L8, d0 + i * stride, src.get(L8, s + 8L * i));
            }
        } else if (len == 4) {
            for (int i = 0; i < n; i++) {
                dst.set(L4, d0 + i * stride, src.get(L4, s + 4L * i));
            }
        } else if (len == 16) {
            for (int i = 0; i < n; i++) {
                long d = d0 + i * stride;
                dst.set(L8, d, src.get(L8, s + 16L * i));
                dst.set(L8, d + 8, src.get(L8, s + 16L * i + 8));
            }
        } else {
            for (int i = 0; i < n; i++) {
                copyIn(src, s + i * len, dst, d0 + i * stride, len);
            }
        }
    }

    // ---- double[] kernels: offsets/lengths/strides are multiples of 8 (checked at construction);
    // a double[] holds at most 2^31-1 elements, so element indices fit in int.
    private static final ValueLayout.OfDouble D8 = ValueLayout.JAVA_DOUBLE_UNALIGNED;

    static void copyOutD(double[] a, long so, MemorySegment dst, long d, long len) {
        int idx = (int) (so >>> 3), w = (int) (len >>> 3);
        if (w >= 16) {
            MemorySegment.copy(a, idx, dst, D8, d, w);
        } else {
            for (int i = 0; i < w; i++) {
                dst.set(D8, d + 8L * i, a[idx + i]);
            }
        }
    }

    static void copyInD(MemorySegment src, long s, double[] a, long d, long len) {
        int idx = (int) (d >>> 3), w = (int) (len >>> 3);
        if (w >= 16) {
            MemorySegment.copy(src, D8, s, a, idx, w);
        } else {
            for (int i = 0; i < w; i++) {
                a[idx + i] = src.get(D8, s + 8L * i);
            }
        }
    }

    static void gatherD(double[] a, long so, long stride, long len, int n, MemorySegment dst, long d) {
        int idx = (int) (so >>> 3);
        int st = (int) (stride / 8);
        if (len == 8) {
            for (int i = 0; i < n; i++) {
                dst.set(D8, d + 8L * i, a[idx + i * st]);
            }
        } else {
            for (int i = 0; i < n; i++) {
                copyOutD(a, so + i * stride, dst, d + i * len, len);
            }
        }
    }

    static void scatterD(MemorySegment src, long s, double[] a, long d0, long stride, long len, int n) {
        int idx = (int) (d0 >>> 3);
        int st = (int) (stride / 8);
        if (len == 8) {
            for (int i = 0; i < n; i++) {
                a[idx + i * st] = src.get(D8, s + 8L * i);
            }
        } else {
            for (int i = 0; i < n; i++) {
                copyInD(src, s + i * len, a, d0 + i * stride, len);
            }
        }
    }
}
