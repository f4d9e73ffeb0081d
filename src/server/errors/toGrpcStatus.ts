import { status, type StatusObject } from '@grpc/grpc-js';
import cassandra from 'cassandra-driver';
import { ZodError } from 'zod';
import { LoaderError } from '../../core/index.js';

/** What a client sees of an error: a status code and details a person can act on. */
export type GrpcErrorStatus = Pick<StatusObject, 'code' | 'details'>;

/** Where the error happened, so a generic INTERNAL message can point into the log. */
export interface ErrorOrigin {
  /** Id of the stream (StreamBatches) that the caller logs the real error with. */
  streamId?: string;
  /** Id of a unary call that the caller logs the real error with. */
  callId?: string;
}

const RETRY_HINT = 'retry with backoff (a stream resumes with its last resume token)';

/**
 * Driver response codes that say "the cluster is busy or missing replicas right now": the same
 * request is expected to succeed later, so clients get UNAVAILABLE and retry. Everything else
 * the server answers (syntax, schema, authorization) is our bug or misconfiguration: INTERNAL.
 */
const RETRYABLE_RESPONSES = new Map<number, string>([
  [
    cassandra.types.responseErrorCodes.unavailableException,
    'not enough database replicas are alive for the read',
  ],
  [
    cassandra.types.responseErrorCodes.overloaded,
    'the database is overloaded (fewer streams or a smaller prefetch lower its load)',
  ],
  [cassandra.types.responseErrorCodes.isBootstrapping, 'a database node is still bootstrapping'],
  [cassandra.types.responseErrorCodes.readTimeout, 'database replicas timed out on a read'],
  [cassandra.types.responseErrorCodes.writeTimeout, 'database replicas timed out on a write'],
  [cassandra.types.responseErrorCodes.truncateError, 'a database truncate failed'],
]);

/**
 * Maps anything a handler throws to the status a client sees. This is the only place that
 * decides it, so every RPC reports the same error the same way:
 *
 * - {@link LoaderError}: its own code and message (written for the client);
 * - `ZodError`: INVALID_ARGUMENT listing each invalid field;
 * - driver errors that a retry can cure (no host, timeouts, unavailable or overloaded
 *   replicas, busy connections): UNAVAILABLE;
 * - an `AbortError`: CANCELLED;
 * - anything else: INTERNAL with a generic message naming the stream or call id. The real
 *   error may hold hosts, CQL or stack traces, so it is never sent; the caller logs it.
 */
export function toGrpcStatus(err: unknown, origin: ErrorOrigin = {}): GrpcErrorStatus {
  if (err instanceof LoaderError) return { code: status[err.code], details: err.message };
  if (err instanceof ZodError) {
    const issues = err.issues.map((i) => `${i.path.join('.') || 'request'}: ${i.message}`);
    return { code: status.INVALID_ARGUMENT, details: `invalid request: ${issues.join('; ')}` };
  }
  const driver = driverErrorDetails(err);
  if (driver !== undefined) return { code: status.UNAVAILABLE, details: driver };
  if (isAbortError(err)) return { code: status.CANCELLED, details: 'call cancelled' };
  return { code: status.INTERNAL, details: internalDetails(origin) };
}

/** Actionable text for a retryable driver error, or undefined when it is not one. */
function driverErrorDetails(err: unknown): string | undefined {
  const { errors } = cassandra;
  if (err instanceof errors.NoHostAvailableError) {
    return `no database host could be reached; check the database and the loader's contact points, then ${RETRY_HINT}`;
  }
  if (err instanceof errors.OperationTimedOutError) {
    return `a database request timed out; ${RETRY_HINT}`;
  }
  if (err instanceof errors.BusyConnectionError) {
    return `every database connection is busy; ${RETRY_HINT}`;
  }
  if (err instanceof errors.ResponseError) {
    const what = RETRYABLE_RESPONSES.get(err.code);
    return what === undefined ? undefined : `${what}; ${RETRY_HINT}`;
  }
  return undefined;
}

/** `AbortSignal.abort()` rejects with a DOMException named AbortError; so do Node's APIs. */
function isAbortError(err: unknown): boolean {
  return (
    typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'AbortError'
  );
}

function internalDetails(origin: ErrorOrigin): string {
  if (origin.streamId !== undefined) {
    return `internal error; see the loader's log (stream id ${origin.streamId})`;
  }
  if (origin.callId !== undefined) {
    return `internal error; see the loader's log (call id ${origin.callId})`;
  }
  return "internal error; see the loader's log";
}
