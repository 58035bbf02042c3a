package org.ftmpi.runtime;

import java.util.Map;

/** Placeholder until the launcher branch lands: singleton (size 1) runtime only. */
public final class RankRuntimes {
    private RankRuntimes() {}

    public static RankRuntime fromEnvironment() {
        return new LocalJobRuntime(1, Map.of()).rank(0);
    }
}
