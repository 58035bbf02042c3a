package org.ftmpi.bench;

import java.io.PrintStream;
import mpi.MPI;
import mpi.MPIException;

/**
 * Entry point of the OSU-style point-to-point benchmarks:
 * {@code bin/ftmpirun -np 2 bench latency|bandwidth|bw|bibw [options]}; see {@link P2POptions#usage()}.
 * The fault-tolerance benchmarks are {@code bench ft-overhead|ft-detect|ft-agree|ft-sim|ft-agree-sim|ft-coll|ft-recover|ft-after|ft-teardown}
 * ({@link org.ftmpi.bench.ft.FtBench}, {@link org.ftmpi.bench.ft.DetectorSim}, {@link org.ftmpi.bench.ft.AgreementSim}, {@link org.ftmpi.bench.ft.CollModeBench},
 * {@link org.ftmpi.bench.ft.RecoveryBench}, {@link org.ftmpi.bench.ft.TeardownBench}).
 */
public final class Main {
    /** Exit status for a command-line error. */
    static final int EXIT_USAGE = 2;
    /** Exit status for a run-time error (wrong number of ranks, MPI failure). */
    static final int EXIT_FAILURE = 1;

    private Main() {}

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs the benchmark and returns the process exit status. */
    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            err.println("bench: no benchmark given");
            err.print(P2POptions.usage());
            return EXIT_USAGE;
        }
        if (args[0].startsWith("ft-")) {
            try {
                return switch (args[0]) {
                    case "ft-sim" -> org.ftmpi.bench.ft.DetectorSim.run(args, out, err);
                    case "ft-agree-sim" -> org.ftmpi.bench.ft.AgreementSim.run(args, out, err);
                    case "ft-coll" -> org.ftmpi.bench.ft.CollModeBench.run(args, out, err);
                    case "ft-recover" -> org.ftmpi.bench.ft.RecoveryBench.run(args, out, err);
                    case "ft-after" -> org.ftmpi.bench.ft.AfterRecoveryBench.run(args, out, err);
                    case "ft-teardown" -> org.ftmpi.bench.ft.TeardownBench.run(args, out, err);
                    default -> org.ftmpi.bench.ft.FtBench.run(args, out, err);
                };
            } catch (MPIException e) {
                err.println("bench " + args[0] + ": MPI error: " + e.getMessage());
                return EXIT_FAILURE;
            } catch (java.io.IOException e) {
                err.println("bench " + args[0] + ": " + e.getMessage());
                return EXIT_FAILURE;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return EXIT_FAILURE;
            }
        }
        for (String a : args) {
            if (a.equals("-h") || a.equals("--help")) {
                out.print(P2POptions.usage());
                return 0;
            }
        }
        P2POptions options;
        try {
            options = P2POptions.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("bench: " + e.getMessage());
            err.println("Try 'bench --help'.");
            return EXIT_USAGE;
        }
        try {
            MPI.Init(args);
            int status;
            try {
                int size = MPI.COMM_WORLD.getSize();
                int rank = MPI.COMM_WORLD.getRank();
                if (size != 2 && options.benchmark().pairOnly()) {
                    if (rank == 0) {
                        err.println("bench " + options.benchmark().cliName()
                                + ": this benchmark requires exactly 2 processes, got " + size
                                + " (run: bin/ftmpirun -np 2 bench " + options.benchmark().cliName() + ")");
                    }
                    status = EXIT_FAILURE;
                } else {
                    new P2PRunner(options, MPI.COMM_WORLD, rank, out).run();
                    status = 0;
                }
            } finally {
                out.flush();
                MPI.Finalize();
            }
            return status;
        } catch (MPIException e) {
            err.println("bench " + options.benchmark().cliName() + ": MPI error: " + e.getMessage());
            return EXIT_FAILURE;
        }
    }
}
