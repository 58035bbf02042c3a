package org.ftmpi.runtime;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;

/**
 * Entry point of every rank JVM started by ftmpirun:
 * {@code java [jvm-options] -cp <lib>:<user> org.ftmpi.runtime.RankMain MainClass [args]}.
 * Reads the job secret line from stdin first, then runs the user's main method.
 */
public final class RankMain {
    private RankMain() {}

    public static void main(String[] args) {
        try {
            SecretLine.setProcessSecret(SecretLine.read(System.in));
        } catch (IOException e) {
            System.err.println("ftmpi: " + e.getMessage() + "; " + RankMain.class.getName()
                    + " must be started by ftmpirun");
            System.exit(1);
        }
        DeathWatch.startHoldFromEnv(System.getenv()); // held before the controller hears of this process (awaitHeld)
        if (args.length == 0) {
            System.err.println("ftmpi: usage: " + RankMain.class.getName() + " MainClass [args]");
            System.exit(1);
        }
        String[] userArgs = Arrays.copyOfRange(args, 1, args.length);
        Method main;
        try {
            Class<?> c = Class.forName(args[0], false, Thread.currentThread().getContextClassLoader());
            main = findMain(c);
        } catch (ClassNotFoundException | LinkageError e) {
            System.err.println("Error: could not find or load main class " + args[0]);
            System.err.println("Caused by: " + e);
            System.exit(1);
            return;
        }
        if (main == null) {
            System.err.println("Error: main method not found in class " + args[0]
                    + ", please define the main method as:\n   public static void main(String[] args)");
            System.exit(1);
            return;
        }
        java.util.Map<String, String> options = RuntimeEnv.decodeOptions(System.getenv(RuntimeEnv.OPTIONS));
        long pid = ProcessHandle.current().pid();
        if ("1".equals(System.getenv(RuntimeEnv.SPARE))) { // ftmpirun -sp: wait to take over a rank
            Spare.warmUp(Thread.currentThread().getContextClassLoader());
            int rank = Spare.awaitAssignment(System.getenv(), SecretLine.processSecret());
            if (rank >= 0) Binding.applyFromOptions(options, rank, pid); // the failed rank's CPU (--bind-to core)
            RankRuntimes.assign(rank);
        } else {
            // before any thread of the library or the user starts: they inherit the binding
            String rank = System.getenv(RuntimeEnv.RANK);
            if (rank != null) Binding.applyFromOptions(options, Integer.parseInt(rank), pid);
            if (WarmUp.wanted(options)) WarmUp.inBackground(options); // the first failure should not run cold code
        }
        org.ftmpi.p2p.FtTrace.early(org.ftmpi.p2p.FtTrace.MAIN, 0);
        try {
            main.setAccessible(true);
            Object target = null;
            if (!Modifier.isStatic(main.getModifiers())) {
                var ctor = main.getDeclaringClass().getDeclaredConstructor();
                ctor.setAccessible(true);
                target = ctor.newInstance();
            }
            if (main.getParameterCount() == 1) {
                main.invoke(target, (Object) userArgs);
            } else {
                main.invoke(target);
            }
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            trimLauncherFrames(cause);
            System.err.print("Exception in thread \"" + Thread.currentThread().getName() + "\" ");
            cause.printStackTrace();
            System.err.flush();
            System.exit(1);
        } catch (ReflectiveOperationException e) {
            System.err.println("ftmpi: cannot run " + args[0] + ".main: " + e);
            System.exit(1);
        }
    }

    /** Drops the reflective frames below the user's main, so the trace reads as with plain java. */
    private static void trimLauncherFrames(Throwable t) {
        StackTraceElement[] st = t.getStackTrace();
        int end = st.length;
        while (end > 0 && (st[end - 1].getClassName().equals(RankMain.class.getName())
                || st[end - 1].getClassName().startsWith("jdk.internal.reflect.")
                || st[end - 1].getClassName().equals("java.lang.reflect.Method"))) {
            end--;
        }
        if (end > 0 && end < st.length) {
            t.setStackTrace(Arrays.copyOf(st, end));
        }
    }

    /** public/protected/package static or instance main(String[]), else main() (JEP 512). */
    private static Method findMain(Class<?> c) {
        for (Class<?>[] params : new Class<?>[][] {{String[].class}, {}}) {
            for (Class<?> k = c; k != null; k = k.getSuperclass()) {
                try {
                    Method m = k.getDeclaredMethod("main", params);
                    if (!Modifier.isPrivate(m.getModifiers()) && m.getReturnType() == void.class) {
                        return m;
                    }
                } catch (NoSuchMethodException ignored) {
                    // try the superclass or the next signature
                }
            }
        }
        return null;
    }
}
