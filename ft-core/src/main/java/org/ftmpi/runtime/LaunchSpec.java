package org.ftmpi.runtime;

import java.util.List;
import java.util.Map;

/**
 * A parsed ftmpirun command line.
 *
 * @param np            number of ranks
 * @param jvmOptions    options for every rank JVM (without the class path)
 * @param userClasspath the user's class path (never empty)
 * @param mainClass     the user's main class, or null when {@code jar} names it
 * @param jar           the jar given with {@code java -jar}, or null
 * @param programArgs   arguments for the user's main
 * @param tagOutput     prefix every output line with {@code [rank] }
 * @param verbose       controller logs to stderr
 * @param bindAddress   address the controller listens on
 * @param timeoutSeconds abort the job after this long; 0 means never
 * @param options       job options handed to every rank ({@link JobInfo#options()})
 * @param exportEnv     environment variables set in every rank ({@code -x})
 * @param help          {@code --help} was given
 * @param version       {@code --version} was given
 * @param injections    faults to inject ({@code --inject}), in command-line order
 */
public record LaunchSpec(int np, List<String> jvmOptions, String userClasspath, String mainClass,
                         String jar, List<String> programArgs, boolean tagOutput, boolean verbose,
                         String bindAddress, long timeoutSeconds, Map<String, String> options,
                         Map<String, String> exportEnv, boolean help, boolean version,
                         List<FaultInjection> injections) {}
