package org.ftmpi.p2p;

import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * A first-in first-out list of posted receives or unexpected messages whose links live in the
 * elements themselves ({@link Link}), so that posting, matching and removing allocate nothing
 * on the message path. An element is in at most one list at a time.
 *
 * <p><b>Note:</b> not thread-safe; guarded by the engine's progress lock.
 */
final class MatchList<T extends MatchList.Link> implements Iterable<T> {
    /** The links of an element of a {@link MatchList}. */
    abstract static class Link {
        Link prev, next;
        MatchList<?> list;
    }

    private Link head, tail;
    private int size;

    boolean isEmpty() { return size == 0; }

    int size() { return size; }

    /** The first element, or null; walk on with {@link #next}. */
    @SuppressWarnings("unchecked")
    T first() { return (T) head; }

    /** The element after {@code e} in this list, or null. */
    @SuppressWarnings("unchecked")
    T next(T e) { return (T) e.next; }

    void add(T e) {
        if (e.list != null) throw new IllegalStateException("already queued");
        e.list = this;
        e.prev = tail;
        e.next = null;
        if (tail == null) head = e;
        else tail.next = e;
        tail = e;
        size++;
    }

    /** Removes {@code e}; false when it is not in this list. */
    boolean remove(T e) {
        if (e.list != this) return false;
        if (e.prev == null) head = e.next;
        else e.prev.next = e.next;
        if (e.next == null) tail = e.prev;
        else e.next.prev = e.prev;
        e.prev = e.next = null;
        e.list = null;
        size--;
        return true;
    }

    void clear() {
        for (Link e = head; e != null; ) {
            Link n = e.next;
            e.prev = e.next = null;
            e.list = null;
            e = n;
        }
        head = tail = null;
        size = 0;
    }

    /** Iterates over a snapshot of the links: elements removed or added meanwhile are not seen twice. */
    @Override
    public Iterator<T> iterator() {
        return new Iterator<>() {
            private Link at = head;

            @Override public boolean hasNext() { return at != null; }

            @SuppressWarnings("unchecked")
            @Override
            public T next() {
                if (at == null) throw new NoSuchElementException();
                Link e = at;
                at = e.next;
                return (T) e;
            }
        };
    }
}
