import { randomUUID } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import { logCallError } from '../errors/logCallError.js';
import { toGrpcStatus } from '../errors/toGrpcStatus.js';
import type { ServerContext } from '../ServerContext.js';

/**
 * Wraps an async unary handler: its result is the response, and whatever it throws reaches the
 * client through {@link toGrpcStatus} while the real error is logged under a call id (the id
 * an INTERNAL status names).
 *
 * @internal
 */
export function unaryHandler<Req, Res>(
  ctx: ServerContext,
  rpc: string,
  run: (call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res>,
  logFields: (request: Req) => Record<string, unknown> = () => ({}),
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    run(call).then(
      (response) => callback(null, response),
      (err: unknown) => {
        const callId = randomUUID();
        const sent = toGrpcStatus(err, { callId });
        logCallError(
          ctx.logger.child({ callId, rpc, ...logFields(call.request) }),
          err,
          sent,
          `${rpc} failed`,
        );
        callback(sent);
      },
    );
  };
}

/** The primary path's database client (splits are read and written over it). @internal */
export function primaryClient(ctx: ServerContext): ServerContext['paths'][number]['client'] {
  const primary = ctx.paths[0];
  if (primary === undefined) throw new Error('server context has no database path');
  return primary.client;
}
