import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { bearerToken } from './bearerToken.js';
import { checkGrant, checkRole, type LoaderRpc } from './checkGrant.js';
import { findToken } from './findToken.js';
import { peekFirstMessage } from './peekFirstMessage.js';
import type { TokenGrant } from './TokenGrant.js';
import type { TokenStore } from './TokenStore.js';

/** Details of the UNAUTHENTICATED status a call without a token gets. */
export const NO_TOKEN_DETAILS =
  'no bearer token: this loader requires authorization metadata "Bearer <token>"';

/** Details of the UNAUTHENTICATED status a call with an `authorization` of another kind gets. */
export const MALFORMED_TOKEN_DETAILS =
  'authorization metadata is not a bearer token: send "Bearer <token>"';

/** Details of the UNAUTHENTICATED status a call with a token not in the tokens file gets. */
export const UNKNOWN_TOKEN_DETAILS =
  "unknown token: it is not in the loader's tokens file (revoked, mistyped, or for another loader)";

type Refusal = grpc.StatusObject;

/**
 * The gate every call passes through when the loader has a tokens file: each LoaderService
 * handler is wrapped with the check of its role and dataset grant, and every handler of a
 * service added through {@link AuthLayer.guardServer} (reflection) with a check that the token
 * is valid. The health service is not wrapped, so probes need no token. Without a tokens file
 * the wrappers return the handlers as they are.
 *
 * A refused call is answered before its handler runs, so it costs no stream slot nor database
 * work; it is logged with the token's name (never the token) at info level.
 */
export interface AuthLayer {
  /** Whether calls are checked. */
  readonly enabled: boolean;
  /** Wraps a unary LoaderService handler with its grant check. */
  unary<Req extends { dataset: string }, Res>(
    rpc: LoaderRpc,
    handler: grpc.handleUnaryCall<Req, Res>,
  ): grpc.handleUnaryCall<Req, Res>;
  /** Wraps a server-streaming LoaderService handler with its grant check. */
  serverStream<Req extends { dataset: string }, Res>(
    rpc: LoaderRpc,
    handler: grpc.handleServerStreamingCall<Req, Res>,
  ): grpc.handleServerStreamingCall<Req, Res>;
  /**
   * Wraps a bidirectional LoaderService handler whose dataset is named by its first message
   * (`datasetOf`; undefined: none named, left to the handler to refuse). The token and its
   * role are checked at once; the dataset grant once the first message has arrived, which is
   * then handed to the handler as the call's first message.
   */
  bidiStream<Req, Res>(
    rpc: LoaderRpc,
    datasetOf: (first: Req) => string | undefined,
    handler: grpc.handleBidiStreamingCall<Req, Res>,
  ): grpc.handleBidiStreamingCall<Req, Res>;
  /**
   * A stand-in for `server` whose `addService` adds the service with every handler behind
   * "any valid token": for services that register themselves (reflection).
   */
  guardServer(server: grpc.Server): Pick<grpc.Server, 'addService'>;
}

/**
 * Creates the {@link AuthLayer}; `store` undefined turns authorization off. `onRefused` is told
 * of every call it refuses (for `scylla_loader_calls_refused_total`).
 */
export function createAuthLayer(
  store: TokenStore | undefined,
  logger: Logger,
  onRefused: (rpc: string, code: 'UNAUTHENTICATED' | 'PERMISSION_DENIED') => void = () => undefined,
): AuthLayer {
  if (store === undefined) {
    return {
      enabled: false,
      unary: (_rpc, handler) => handler,
      serverStream: (_rpc, handler) => handler,
      bidiStream: (_rpc, _datasetOf, handler) => handler,
      guardServer: (server) => server,
    };
  }

  const authenticate = (
    call: { metadata: grpc.Metadata; getPeer(): string },
    rpc: string,
  ): TokenGrant | Refusal => {
    const presented = bearerToken(call.metadata);
    if (presented.kind !== 'token') {
      const details = presented.kind === 'missing' ? NO_TOKEN_DETAILS : MALFORMED_TOKEN_DETAILS;
      logger.info({ rpc, peer: call.getPeer(), reason: presented.kind }, 'call unauthenticated');
      onRefused(rpc, 'UNAUTHENTICATED');
      return { code: grpc.status.UNAUTHENTICATED, details, metadata: new grpc.Metadata() };
    }
    const grant = findToken(store.grants, presented.token);
    if (grant === undefined) {
      logger.info({ rpc, peer: call.getPeer(), reason: 'unknown' }, 'call unauthenticated');
      onRefused(rpc, 'UNAUTHENTICATED');
      return {
        code: grpc.status.UNAUTHENTICATED,
        details: UNKNOWN_TOKEN_DETAILS,
        metadata: new grpc.Metadata(),
      };
    }
    return grant;
  };

  const deny = (
    call: { getPeer(): string },
    rpc: LoaderRpc,
    grant: TokenGrant,
    dataset: string | undefined,
    details: string,
  ): Refusal => {
    logger.info({ rpc, dataset, token: grant.name, peer: call.getPeer() }, 'call denied');
    onRefused(rpc, 'PERMISSION_DENIED');
    return { code: grpc.status.PERMISSION_DENIED, details, metadata: new grpc.Metadata() };
  };

  const authorize = (
    call: { metadata: grpc.Metadata; getPeer(): string; request: { dataset: string } },
    rpc: LoaderRpc,
  ): Refusal | undefined => {
    const grant = authenticate(call, rpc);
    if (!isGrant(grant)) return grant;
    const dataset = call.request.dataset;
    const denied = checkGrant(grant, rpc, dataset);
    return denied === undefined ? undefined : deny(call, rpc, grant, dataset, denied);
  };

  return {
    enabled: true,
    unary: (rpc, handler) => (call, callback) => {
      const refusal = authorize(call, rpc);
      if (refusal) callback(refusal);
      else handler(call, callback);
    },
    serverStream: (rpc, handler) => (call) => {
      const refusal = authorize(call, rpc);
      if (refusal) call.emit('error', refusal);
      else return handler(call);
    },
    bidiStream: (rpc, datasetOf, handler) => (call) => {
      const grant = authenticate(call, rpc);
      if (!isGrant(grant)) {
        call.emit('error', grant);
        return;
      }
      const roleDenied = checkRole(grant, rpc);
      if (roleDenied !== undefined) {
        call.emit('error', deny(call, rpc, grant, undefined, roleDenied));
        return;
      }
      void peekFirstMessage<Parameters<typeof datasetOf>[0]>(call).then((first) => {
        if (first.kind === 'cancelled') return;
        const dataset = first.kind === 'message' ? datasetOf(first.message) : undefined;
        const denied = dataset === undefined ? undefined : checkGrant(grant, rpc, dataset);
        if (denied === undefined) handler(call);
        else call.emit('error', deny(call, rpc, grant, dataset, denied));
      });
    },
    guardServer: (server) => ({
      addService: (service, implementation) => {
        const guarded: grpc.UntypedServiceImplementation = {};
        for (const [name, handler] of Object.entries(implementation)) {
          guarded[name] = guardAny(name, handler, authenticate);
        }
        server.addService(service, guarded);
      },
    }),
  };
}

function isGrant(value: TokenGrant | Refusal): value is TokenGrant {
  return 'digest' in value;
}

/**
 * A handler of any kind behind "any valid token". grpc-js calls a unary or client-streaming
 * handler with a callback as its second argument; the others get the call alone and end it
 * on an emitted error.
 */
function guardAny(
  rpc: string,
  handler: grpc.UntypedHandleCall,
  authenticate: (
    call: { metadata: grpc.Metadata; getPeer(): string },
    rpc: string,
  ) => TokenGrant | Refusal,
): grpc.UntypedHandleCall {
  const run = handler as (call: grpc.ServerDuplexStream<unknown, unknown>, cb?: unknown) => void;
  return ((
    call: grpc.ServerDuplexStream<unknown, unknown>,
    callback?: grpc.sendUnaryData<unknown>,
  ) => {
    const result = authenticate(call, rpc);
    if (isGrant(result)) return run(call, callback);
    if (callback) callback(result);
    else call.emit('error', result);
    return undefined;
  }) as grpc.UntypedHandleCall;
}
