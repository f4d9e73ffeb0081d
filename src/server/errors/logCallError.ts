import { status } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { GrpcErrorStatus } from './toGrpcStatus.js';

/**
 * Logs the real error behind a status sent to a client, at a level that matches who must act:
 * INTERNAL is our bug (error, with the stack), UNAVAILABLE is database trouble an operator may
 * need to see (warn), and the rest are the caller's mistakes or choices (debug), which would
 * flood the log at scale.
 */
export function logCallError(
  logger: Logger,
  err: unknown,
  sent: GrpcErrorStatus,
  message: string,
): void {
  const fields = { err, code: status[sent.code], details: sent.details };
  if (sent.code === status.INTERNAL || sent.code === status.UNKNOWN) logger.error(fields, message);
  else if (sent.code === status.UNAVAILABLE) logger.warn(fields, message);
  else logger.debug(fields, message);
}
