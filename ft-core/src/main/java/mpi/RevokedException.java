package mpi;

/**
 * The communicator has been revoked ({@code MPIX_Comm_revoke}, ULFM): every pending operation
 * on it completed with this error, and every later operation on it other than {@link
 * Comm#agree}, {@link Comm#iAgree}, {@link Comm#shrink}, {@link Comm#iShrink}, {@link
 * Comm#ackFailed()} and {@link Comm#getFailed} raises it. Error class {@link MPI#ERR_REVOKED}.
 */
public class RevokedException extends MPIException {
    private static final long serialVersionUID = 1L;

    RevokedException(String message) {
        super(MPI.ERR_REVOKED, MPI.ERR_REVOKED, message);
    }
}
