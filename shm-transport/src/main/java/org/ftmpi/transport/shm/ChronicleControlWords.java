package org.ftmpi.transport.shm;

import net.openhft.chronicle.bytes.BytesStore;

/**
 * {@link ControlWords} through Chronicle Bytes' absolute accessors on the mapped file's
 * {@link BytesStore} ({@code writeOrdered*} = release store, {@code readVolatile*} = acquire
 * load, {@code compareAndSwap*} = CAS). Uses {@code sun.misc.Unsafe} inside Chronicle.
 */
final class ChronicleControlWords implements ControlWords {
    private final BytesStore<?, ?> store;

    ChronicleControlWords(BytesStore<?, ?> store) {
        this.store = store;
    }

    @Override public long getLongAcquire(long offset) { return store.readVolatileLong(offset); }
    @Override public void putLongRelease(long offset, long value) { store.writeOrderedLong(offset, value); }
    @Override public int getIntAcquire(long offset) { return store.readVolatileInt(offset); }
    @Override public void putIntRelease(long offset, int value) { store.writeOrderedInt(offset, value); }
    @Override public boolean compareAndSetInt(long offset, int expected, int value) {
        return store.compareAndSwapInt(offset, expected, value);
    }
    @Override public void putLongPlain(long offset, long value) { store.writeLong(offset, value); }
    @Override public void putIntPlain(long offset, int value) { store.writeInt(offset, value); }
    @Override public long getLongPlain(long offset) { return store.readLong(offset); }
    @Override public int getIntPlain(long offset) { return store.readInt(offset); }
}
