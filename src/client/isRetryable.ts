import { status } from '@grpc/grpc-js';
import type { ClientError } from './ClientError.js';

/**
 * Whether a broken stream is worth resuming from its last token: only statuses that say the
 * connection or the loader went away, never one about the request itself (INVALID_ARGUMENT,
 * NOT_FOUND, DATA_LOSS, DEADLINE_EXCEEDED...), which a new call would meet again.
 *
 * - UNAVAILABLE: a dropped connection (grpc-js: "Connection dropped", also when the server
 *   process is killed), a refused connect, a server shutting down, retryable database trouble.
 * - CANCELLED that this client did not cause (the caller checks its own signal first):
 *   grpc-js reports a server's `forceShutdown()` as CANCELLED "Call cancelled", because Node
 *   turns the session's destruction into RST_STREAM(CANCEL) before it notices the drop.
 * - INTERNAL "Received RST_STREAM with code ...": the stream was reset below gRPC (a proxy,
 *   a dying connection) without a status from the service.
 * - RESOURCE_EXHAUSTED when `retryOnResourceExhausted`: the loader's admission limit, which
 *   frees up as other streams end; but not grpc-js's own "Received/Sent message larger than max",
 *   which the same request would hit again.
 *
 * @internal
 */
export function isRetryable(error: ClientError, retryOnResourceExhausted: boolean): boolean {
  switch (error.code) {
    case status.UNAVAILABLE:
      return true;
    case status.CANCELLED:
      return error.details !== 'Cancelled on client';
    case status.INTERNAL:
      return error.details.startsWith('Received RST_STREAM');
    case status.RESOURCE_EXHAUSTED:
      return (
        retryOnResourceExhausted &&
        !error.details.startsWith('Received message larger') &&
        !error.details.startsWith('Sent message larger')
      );
    default:
      return false;
  }
}
