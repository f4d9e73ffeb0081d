import { status, type StatusObject } from '@grpc/grpc-js';
import { ZodError } from 'zod';
import { describeInvalidRequest, LoaderError, retryableDriverError } from '../../core/index.js';
import { cutText } from './cutText.js';

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
 * Maps anything a handler throws to the status a client sees. This is the only place that
 * decides it, so every RPC reports the same error the same way:
 *
 * - {@link LoaderError}: its own code and message (written for the client);
 * - `ZodError`: INVALID_ARGUMENT listing each invalid field;
 * - database errors that a retry can cure (the core's one list, `retryableDriverError`: no
 *   host, timeouts, unavailable or overloaded replicas, busy or dropped connections):
 *   UNAVAILABLE with what went wrong and a hint to retry;
 * - an `AbortError`: CANCELLED;
 * - anything else: INTERNAL with a generic message naming the stream or call id. The real
 *   error may hold hosts, CQL or stack traces, so it is never sent; the caller logs it.
 */
export function toGrpcStatus(err: unknown, origin: ErrorOrigin = {}): GrpcErrorStatus {
  if (err instanceof LoaderError) {
    return { code: status[err.code], details: capDetails(err.message) };
  }
  if (err instanceof ZodError) {
    return { code: status.INVALID_ARGUMENT, details: capDetails(describeInvalidRequest(err)) };
  }
  const trouble = retryableDriverError(err);
  if (trouble !== undefined) {
    return { code: status.UNAVAILABLE, details: `${trouble}; ${RETRY_HINT}` };
  }
  if (isAbortError(err)) return { code: status.CANCELLED, details: 'call cancelled' };
  return { code: status.INTERNAL, details: internalDetails(origin) };
}

/** Characters of details sent; the rest is cut (see {@link capDetails}). */
export const MAX_DETAILS_CHARS = 1024;

/**
 * Cuts details to {@link MAX_DETAILS_CHARS}. Messages quote the offending value, which may be a
 * megabyte-long name; details travel percent-encoded in the grpc-message trailer, and a
 * trailer over the client's header-list limit is dropped, so the client saw no status at all
 * (its call hung until its deadline) instead of INVALID_ARGUMENT.
 */
function capDetails(details: string): string {
  return cutText(details, MAX_DETAILS_CHARS, (left) => `${left} more characters cut`);
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
