import { status } from '@grpc/grpc-js';

/**
 * The one error type the service throws on purpose. It carries a gRPC status code, a message a
 * person can act on, and the underlying cause (kept for logs, never sent to clients).
 */
export class LoaderError extends Error {
  override readonly name = 'LoaderError';

  constructor(
    readonly code: status,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Shorthand for an INVALID_ARGUMENT error: the caller gave something wrong. */
export function invalidArgument(message: string, cause?: unknown): LoaderError {
  return new LoaderError(status.INVALID_ARGUMENT, message, { cause });
}

/** Shorthand for a NOT_FOUND error: a named dataset, split or file does not exist. */
export function notFound(message: string, cause?: unknown): LoaderError {
  return new LoaderError(status.NOT_FOUND, message, { cause });
}

/** Shorthand for an UNAVAILABLE error: retryable trouble reaching the database. */
export function unavailable(message: string, cause?: unknown): LoaderError {
  return new LoaderError(status.UNAVAILABLE, message, { cause });
}
