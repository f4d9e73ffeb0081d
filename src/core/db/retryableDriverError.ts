import cassandra from 'cassandra-driver';
import { consistencyOfError } from './consistency.js';

const { errors } = cassandra;
const codes = cassandra.types.responseErrorCodes;

/**
 * Coordinator answers that mean "not now": the same request is expected to succeed once
 * replicas are back, a node has finished bootstrapping or the load has dropped. Left out on
 * purpose: `writeFailure` (a replica refused the mutation, most often because it is larger
 * than the commit log accepts, which a retry cannot cure), `truncateError` (the loader never
 * truncates, so one would be our bug), and every syntax, schema and authorization answer.
 * `readFailure` stays in: a replica that failed a read (a bad disk, a node going down) is
 * usually not the one a retry or a hedged read asks next.
 */
const RETRYABLE_RESPONSES = new Map<number, string>([
  [
    codes.unavailableException,
    'not enough database replicas are alive for the consistency level; bring the missing ' +
      'nodes back',
  ],
  [
    codes.overloaded,
    'the database is overloaded; fewer streams, a smaller prefetch or a lower ingest ' +
      'concurrency lower its load',
  ],
  [codes.isBootstrapping, 'a database node is still bootstrapping'],
  [codes.readTimeout, 'database replicas timed out on a read'],
  [codes.writeTimeout, 'database replicas timed out on a write'],
  [codes.readFailure, 'a database replica failed a read'],
]);

/** Socket errors of a connection the database (or the network) dropped or refused. */
const RETRYABLE_ERRNO = new Map<string, string>([
  ['ECONNRESET', 'the database closed the connection (ECONNRESET)'],
  ['ECONNREFUSED', 'the database refused the connection (ECONNREFUSED); is it up?'],
  ['EPIPE', 'the connection to the database broke (EPIPE)'],
]);

/**
 * The one list of database errors worth another attempt later. Returns undefined for any other
 * error, else a description a person can act on. The description never contains the driver's
 * message, which names hosts and addresses a client must not see; callers add what a retry
 * means for them (resume a stream with its token, run the same ingest again).
 *
 * The fetch engine retries on it, the gRPC layer answers UNAVAILABLE with it, and ingest
 * reports UNAVAILABLE with it; everything else is a user's mistake (reported as such) or a bug
 * (INTERNAL).
 */
export function retryableDriverError(err: unknown): string | undefined {
  if (err instanceof errors.NoHostAvailableError) {
    // Every host tried answered "unavailable" (the retry policy moves on to the next host).
    const unavailable = Object.values(err.innerErrors as Record<string, unknown>).find(
      (e) => e instanceof errors.ResponseError && e.code === codes.unavailableException,
    );
    if (unavailable !== undefined) return retryableDriverError(unavailable);
    return "no database host could be reached; check the database and the loader's contact points";
  }
  if (err instanceof errors.OperationTimedOutError) {
    return 'a database request got no answer in time; the database may be overloaded or unreachable';
  }
  if (err instanceof errors.BusyConnectionError) {
    return 'every database connection is busy; lower the concurrency or add connections';
  }
  if (err instanceof errors.ResponseError) {
    const level = consistencyOfError(err);
    if (err.code === codes.unavailableException && level !== undefined) {
      // The level tells which setting asks for more replicas than are alive.
      return (
        `not enough database replicas are alive for consistency ${level}; bring the missing ` +
        'nodes back or lower that consistency setting'
      );
    }
    return RETRYABLE_RESPONSES.get(err.code);
  }
  // The driver's own error for a request whose connection closed under it (a node killed
  // mid-request): the socket's error is inside it.
  if (err instanceof errors.DriverError && (err as { isSocketError?: boolean }).isSocketError) {
    const inner = (err as { innerError?: unknown }).innerError;
    return (
      (inner === undefined ? undefined : retryableDriverError(inner)) ??
      'the connection to a database node closed during a request'
    );
  }
  const code = (err as NodeJS.ErrnoException | null | undefined)?.code;
  return typeof code === 'string' ? RETRYABLE_ERRNO.get(code) : undefined;
}
