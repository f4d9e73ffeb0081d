import cassandra from 'cassandra-driver';

const { responseErrorCodes } = cassandra.types;
const RETRYABLE_CODES = new Set<number>([
  responseErrorCodes.unavailableException,
  responseErrorCodes.overloaded,
  responseErrorCodes.isBootstrapping,
  responseErrorCodes.readTimeout,
  responseErrorCodes.readFailure,
]);

/**
 * True for database errors worth another attempt: timeouts, no host reachable, and the
 * coordinator's unavailable/overloaded/read-timeout answers. Syntax or schema errors are not.
 */
export function isRetryable(err: unknown): boolean {
  if (err instanceof cassandra.errors.OperationTimedOutError) return true;
  if (err instanceof cassandra.errors.NoHostAvailableError) return true;
  if (err instanceof cassandra.errors.BusyConnectionError) return true;
  if (err instanceof cassandra.errors.ResponseError) return RETRYABLE_CODES.has(err.code);
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === 'ECONNRESET' || code === 'ECONNREFUSED' || code === 'EPIPE';
}
