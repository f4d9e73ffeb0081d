import type { Metadata, ServiceError } from '@grpc/grpc-js';
import { ClientError } from './ClientError.js';

function isServiceError(error: unknown): error is ServiceError {
  return (
    error instanceof Error &&
    typeof (error as Partial<ServiceError>).code === 'number' &&
    typeof (error as Partial<ServiceError>).details === 'string'
  );
}

/**
 * Wraps a grpc-js status error in a {@link ClientError} naming `path`. A ClientError is
 * returned as it is, and anything else (a bug, a TypeError) unchanged, so it is never
 * mistaken for a status.
 *
 * @internal
 */
export function toClientError(error: unknown, path: string): unknown {
  if (error instanceof ClientError || !isServiceError(error)) {
    return error;
  }
  const metadata: Metadata | undefined = error.metadata;
  return new ClientError(path, error.code, error.details, { cause: error, metadata });
}
