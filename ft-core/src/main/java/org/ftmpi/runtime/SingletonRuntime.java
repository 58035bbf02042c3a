package org.ftmpi.runtime;

import java.util.List;
import java.util.Map;

/**
 * The runtime of a process started without ftmpirun: a job of one rank. Thread-safe (immutable
 * apart from the unused listener).
 */
final class SingletonRuntime implements RankRuntime {
    private final JobInfo info;

    SingletonRuntime(long jobId, byte[] secret, String host) {
        info = new JobInfo(jobId, 0, 1, new long[] {1}, new String[] {host}, List.of(Map.of()),
                secret, Map.of("comm-mode", LauncherOptions.COMM_MODE_ABORT));
    }

    @Override
    public JobInfo preliminaryInfo() {
        return info;
    }

    @Override
    public JobInfo exchange(Map<String, byte[]> myEndpoints) {
        return new JobInfo(info.jobId(), 0, 1, info.procIds(), info.hosts(),
                List.of(Map.copyOf(myEndpoints)), info.secret(), info.options());
    }

    @Override
    public void setListener(ControlListener listener) {
        // nothing will ever fail but this process itself
    }

    @Override
    public void abort(int exitCode, String reason) {
        System.err.println("ftmpi: MPI_Abort with code " + exitCode + ": " + reason);
        System.err.flush();
        System.exit(exitCode);
    }

    @Override
    public void finalizeBarrier() {
        // one rank: nobody to wait for
    }

    @Override
    public void close() {
        // nothing held
    }
}
