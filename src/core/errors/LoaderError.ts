/**
 * What went wrong, in the canonical error space every RPC system shares (the names of
 * `google.rpc.Code`). The core speaks only these; the gRPC layer maps them to statuses in one
 * place (`src/server/errors/toGrpcStatus.ts`), and the CLI prints the message.
 */
export type ErrorCode =
  | 'CANCELLED'
  | 'INVALID_ARGUMENT'
  | 'DEADLINE_EXCEEDED'
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  | 'PERMISSION_DENIED'
  | 'UNAUTHENTICATED'
  | 'RESOURCE_EXHAUSTED'
  | 'FAILED_PRECONDITION'
  | 'ABORTED'
  | 'OUT_OF_RANGE'
  | 'UNAVAILABLE'
  | 'DATA_LOSS'
  | 'INTERNAL';

/**
 * The one error type the project throws on purpose. It carries an {@link ErrorCode}, a message a
 * person can act on, and the underlying cause (kept for logs, never sent to clients).
 */
export class LoaderError extends Error {
  override readonly name = 'LoaderError';

  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Shorthand for an INVALID_ARGUMENT error: the caller gave something wrong. */
export function invalidArgument(message: string, cause?: unknown): LoaderError {
  return new LoaderError('INVALID_ARGUMENT', message, { cause });
}

/** Shorthand for a NOT_FOUND error: a named dataset, split or file does not exist. */
export function notFound(message: string, cause?: unknown): LoaderError {
  return new LoaderError('NOT_FOUND', message, { cause });
}

/** Shorthand for an UNAVAILABLE error: retryable trouble reaching the database. */
export function unavailable(message: string, cause?: unknown): LoaderError {
  return new LoaderError('UNAVAILABLE', message, { cause });
}
