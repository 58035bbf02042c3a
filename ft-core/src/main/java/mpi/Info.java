package mpi;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * MPI_Info: an ordered set of (key, value) string hints, local to the process. Keys are at
 * most {@link MPI#MAX_INFO_KEY} characters, values at most {@link MPI#MAX_INFO_VAL}.
 *
 * <p><b>Note:</b> not thread-safe; an info object belongs to the thread that uses it.
 */
public final class Info implements Freeable, Cloneable {
    private Map<String, String> entries;
    private final boolean predefined;

    /** MPI_INFO_CREATE: an empty info object. */
    public Info() throws MPIException {
        this(new LinkedHashMap<>(), false);
    }

    private Info(Map<String, String> entries, boolean predefined) {
        this.entries = entries;
        this.predefined = predefined;
    }

    /** MPI_INFO_NULL. */
    static Info nullInfo() {
        return new Info(null, true);
    }

    /** MPI_INFO_ENV: the process's start-up information (read-only). */
    static Info env(String command, String host) {
        Map<String, String> m = new LinkedHashMap<>();
        if (command != null) m.put("command", command);
        if (host != null) m.put("host", host);
        m.put("maxprocs", "1");
        return new Info(m, true);
    }

    /** MPI_INFO_SET. */
    public void set(String key, String value) throws MPIException {
        usable("set", true);
        checkKey("set", key);
        if (value == null) throw MPIException.of(MPI.ERR_INFO_VALUE, "Info.set: value of key \"" + key + "\" is null");
        if (value.length() > MPI.MAX_INFO_VAL) {
            throw MPIException.of(MPI.ERR_INFO_VALUE, "Info.set: value of key \"" + key + "\" is longer than "
                    + MPI.MAX_INFO_VAL + " characters");
        }
        entries.put(key, value);
    }

    /** MPI_INFO_GET: the value of {@code key}, or {@code null} if it is not set. */
    public String get(String key) throws MPIException {
        usable("get", false);
        checkKey("get", key);
        return entries.get(key);
    }

    /** MPI_INFO_DELETE. */
    public void delete(String key) throws MPIException {
        usable("delete", true);
        checkKey("delete", key);
        if (entries.remove(key) == null) {
            throw MPIException.of(MPI.ERR_INFO_NOKEY, "Info.delete: key \"" + key + "\" is not set");
        }
    }

    /** MPI_INFO_GET_NKEYS. */
    public int size() throws MPIException {
        usable("size", false);
        return entries.size();
    }

    /** MPI_INFO_GET_NTHKEY: keys in the order they were first set. */
    public String getKey(int i) throws MPIException {
        usable("getKey", false);
        if (i < 0 || i >= entries.size()) {
            throw MPIException.of(MPI.ERR_ARG, "Info.getKey: index " + i + " is outside 0.." + (entries.size() - 1));
        }
        List<String> keys = new ArrayList<>(entries.keySet());
        return keys.get(i);
    }

    /** MPI_INFO_DUP. */
    public Info dup() throws MPIException {
        usable("dup", false);
        return new Info(new LinkedHashMap<>(entries), false);
    }

    /** Same as {@link #dup()} (as in Open MPI's bindings). */
    @Override
    public Info clone() {
        try {
            return dup();
        } catch (MPIException e) {
            throw new RuntimeException(e.getMessage(), e);
        }
    }

    /** MPI_INFO_FREE; predefined info objects cannot be freed. */
    @Override
    public void free() throws MPIException {
        usable("free", true);
        entries = null;
    }

    /** Whether this is MPI_INFO_NULL or a freed info object. */
    public boolean isNull() {
        return entries == null;
    }

    /** A copy of the entries (for communicators' hints); empty for MPI_INFO_NULL. */
    Map<String, String> entries() {
        return entries == null ? new LinkedHashMap<>() : new LinkedHashMap<>(entries);
    }

    static Info of(Map<String, String> m) {
        return new Info(new LinkedHashMap<>(m), false);
    }

    private void usable(String op, boolean modifies) throws MPIException {
        if (entries == null) throw MPIException.of(MPI.ERR_INFO, "Info." + op + ": the info object is null or freed");
        if (modifies && predefined) throw MPIException.of(MPI.ERR_INFO, "Info." + op + ": MPI.INFO_ENV is read-only");
    }

    private static void checkKey(String op, String key) throws MPIException {
        if (key == null || key.isEmpty()) throw MPIException.of(MPI.ERR_INFO_KEY, "Info." + op + ": key is null or empty");
        if (key.length() > MPI.MAX_INFO_KEY) {
            throw MPIException.of(MPI.ERR_INFO_KEY, "Info." + op + ": key \"" + key + "\" is longer than "
                    + MPI.MAX_INFO_KEY + " characters");
        }
    }
}
