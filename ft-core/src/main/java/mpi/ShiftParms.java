package mpi;

/** Source and destination ranks of a Cartesian shift ({@link CartComm#shift}). */
public final class ShiftParms {
    private final int rankSource;
    private final int rankDest;

    ShiftParms(int rankSource, int rankDest) {
        this.rankSource = rankSource;
        this.rankDest = rankDest;
    }

    /** Rank to receive from, or {@link MPI#PROC_NULL} past a non-periodic boundary. */
    public int getRankSource() {
        return rankSource;
    }

    /** Rank to send to, or {@link MPI#PROC_NULL} past a non-periodic boundary. */
    public int getRankDest() {
        return rankDest;
    }
}
