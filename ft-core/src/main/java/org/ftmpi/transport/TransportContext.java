package org.ftmpi.transport;

import org.ftmpi.runtime.JobInfo;

/**
 * What a transport gets when it is opened.
 *
 * @param job  the job as known before the endpoint exchange (rank, size, secret, options)
 * @param sink where incoming frames go
 */
public record TransportContext(JobInfo job, FrameSink sink) {
}
