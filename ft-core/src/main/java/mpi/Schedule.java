package mpi;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import org.ftmpi.coll.Channel;
import org.ftmpi.p2p.Engine;
import org.ftmpi.p2p.ErrorClass;
import org.ftmpi.p2p.P2pException;

/**
 * The non-blocking collectives of one communicator: each call checks its arguments on the
 * caller's thread, takes an engine request ({@link Engine#externalRequest}) and queues its
 * algorithm; one collective-progress thread per communicator (virtual, started when there is
 * work, gone when the queue is empty) runs the queued algorithms in call order and completes
 * each request. The caller never blocks.
 *
 * <p>Every member starts the collectives of a communicator in the same order (MPI's rule), so
 * running them one after another is deadlock-free, and consecutive ones need no sequence
 * numbers (the same FIFO argument as for blocking collectives). Their traffic travels on the
 * communicator's collective context with tags offset by {@link #TAG_OFFSET}, so it never matches
 * point-to-point traffic (another context) nor a blocking collective started meanwhile
 * (tags below the offset).
 *
 * <p><b>Note:</b> {@link #submit} is thread-safe; the drain loop owns the queued bodies.
 */
final class Schedule {
    /** Added to every tag of a non-blocking collective; blocking collectives use smaller tags. */
    static final int TAG_OFFSET = 1 << 24;

    /** The body of one queued collective. */
    @FunctionalInterface
    interface Body {
        void run(Channel c) throws P2pException, MPIException;
    }

    private final Engine engine;
    private final Channel channel;
    private final ArrayDeque<Runnable> queue = new ArrayDeque<>();
    private boolean draining;

    Schedule(Comm comm) {
        this.engine = comm.engine;
        // comm-mode BLANK: over the non-blank members only, as the blocking forms (Comm.cc())
        this.channel = comm.dense(offsetChannel(comm));
    }

    /** A channel over {@code c}'s collective context with tags offset by {@link #TAG_OFFSET}. */
    static Channel offsetChannel(Comm c) {
        return new OffsetChannel(c.engine, c.context + 1, c.epoch, c.rank, c.world, TAG_OFFSET);
    }

    /**
     * A channel over {@code c}'s collective context among the processes {@code members} (world
     * ranks, a subset of {@code c}'s group; this process is member {@code rank}) with tags offset
     * by {@code tagOffset}: a collective over a subgroup that the other members do not join
     * ({@code Intracomm.createGroup}).
     */
    static Channel subgroupChannel(Comm c, int[] members, int rank, int tagOffset) {
        return new OffsetChannel(c.engine, c.context + 1, c.epoch, rank, members, tagOffset);
    }

    /**
     * Queues {@code body}; the returned request completes when it has run, with its error if any.
     * Not for ATOMIC communicators: their collectives go through {@link #submitColl}.
     */
    Request submit(Comm comm, String op, Body body) throws MPIException {
        org.ftmpi.p2p.Request req = engine.externalRequest();
        return queue(comm, req, () -> complete(req, op, body));
    }

    /**
     * Queues an intracommunicator collective whose buffers were made by {@code NbColls}. Under
     * FT-MPI ATOMIC (spec 5.2) the algorithm runs into the scratch copies registered with {@link
     * Comm#nbOut}, then the members agree (an agreement instance numbered at this call, in call
     * order) whether every part succeeded: only then are the results copied out and the request
     * completed with success; otherwise every survivor's request completes with the error and no
     * receive buffer changed.
     */
    Request submitColl(Comm comm, String op, Body body) throws MPIException {
        if (!comm.atomic) return submit(comm, op, body);
        return submitColl(comm, op, body, comm.takeNbScratch());
    }

    /**
     * {@link #submitColl(Comm, String, Body)} under ATOMIC whose scratch buffers to copy out are
     * {@code outs}, a list the body may still add to while it runs (intercommunicator plans).
     */
    Request submitColl(Comm comm, String op, Body body, java.util.List<Comm.Buf> outs) throws MPIException {
        int id = comm.atomicAgreementId();
        org.ftmpi.p2p.Request req = engine.externalRequest();
        return queue(comm, req, () -> {
            Outcome o = run(op, body);
            try {
                P2pException other = comm.atomicVote(id, o.ok());
                if (o.ok() && other == null) {
                    for (Comm.Buf b : outs) b.done();
                } else if (o.ok()) {
                    o = new Outcome(other.errorClass(), op + ": " + other.getMessage(), other.failedRank());
                }
            } catch (P2pException e) {
                o = new Outcome(e.errorClass(), op + ": " + e.getMessage(), e.failedRank());
            } catch (MPIException e) {
                o = new Outcome(e.getErrorClass(), e.getMessage(), -1);
            }
            engine.completeExternal(req, o.errorClass(), o.message(), o.failedRank());
        });
    }

    private Request queue(Comm comm, org.ftmpi.p2p.Request req, Runnable task) {
        synchronized (this) {
            queue.add(task);
            if (draining) return new Request(req, comm, null);
            draining = true;
        }
        Thread.ofVirtual().name("ftmpi-icoll-" + engine.rank()).start(this::drain);
        return new Request(req, comm, null);
    }

    private void drain() {
        while (true) {
            Runnable t;
            synchronized (this) {
                t = queue.poll();
                if (t == null) {
                    draining = false;
                    return;
                }
            }
            t.run();
        }
    }

    private void complete(org.ftmpi.p2p.Request req, String op, Body body) {
        Outcome o = run(op, body);
        engine.completeExternal(req, o.errorClass(), o.message(), o.failedRank());
    }

    /** How a queued collective ended: the request's error class, message and failed rank. */
    private record Outcome(int errorClass, String message, int failedRank) {
        boolean ok() {
            return errorClass == ErrorClass.SUCCESS;
        }
    }

    private Outcome run(String op, Body body) {
        try {
            body.run(channel);
            return new Outcome(ErrorClass.SUCCESS, null, -1);
        } catch (P2pException e) {
            if (e.getCause() instanceof MPIException m) {
                return new Outcome(m.getErrorClass(), op + ": user operation failed: " + m.getMessage(), -1);
            }
            return new Outcome(e.errorClass(), op + ": " + e.getMessage(), e.failedRank());
        } catch (MPIException e) {
            return new Outcome(e.getErrorClass(), e.getMessage(), -1);
        } catch (RuntimeException e) {
            return new Outcome(ErrorClass.ERR_OTHER, op + ": " + e, -1);
        }
    }

    /** A collective channel over the processes {@code world} whose tags are shifted by {@code offset}. */
    private record OffsetChannel(Engine engine, int context, int epoch, int rank, int[] world, int offset)
            implements Channel {
        @Override public int size() { return world.length; }

        @Override
        public org.ftmpi.p2p.Request send(int dest, int tag, MemorySegment data) {
            return engine.send(context, epoch, rank, dest, world[dest], offset + tag, data, 0, data.byteSize(),
                    org.ftmpi.p2p.Request.STANDARD);
        }

        @Override
        public org.ftmpi.p2p.Request receive(int source, int tag, MemorySegment into) {
            return engine.receive(context, epoch, source, world[source], offset + tag, into, 0, into.byteSize());
        }

        @Override
        public void waitAll(org.ftmpi.p2p.Request... rs) throws P2pException {
            Comm.awaitAll(engine, rs);
        }
    }
}
