import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { LoaderError } from '../../core/index.js';
import { bearerToken } from './bearerToken.js';
import { capName } from './capName.js';
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
   * Wraps a unary LoaderService handler whose datasets are known only once it has read
   * something (GetLedger: a job's sources). The token and its role are checked at once; the
   * handler is given `allowed(datasets)`, which throws PERMISSION_DENIED naming the first
   * dataset outside the token's grant (and accepts all when authorization is off).
   */
  unaryLate<Req, Res>(
    rpc: LoaderRpc,
    handler: (
      call: grpc.ServerUnaryCall<Req, Res>,
      callback: grpc.sendUnaryData<Res>,
      allowed: (datasets: readonly string[]) => void,
    ) => void,
  ): grpc.handleUnaryCall<Req, Res>;
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
  /**
   * The grpc-js server interceptor that checks the bearer token from a call's metadata before
   * any of its body is read: a call without a valid token is answered UNAUTHENTICATED while
   * its request is still unread in the HTTP/2 stream (then discarded undecoded), so it costs
   * the loader its headers whatever it sends. The health service passes unchecked. Undefined
   * when authorization is off.
   */
  readonly interceptor: grpc.ServerInterceptor | undefined;
  /**
   * The grant the interceptor found for a call (looked up by the call's metadata object), or
   * undefined: authorization off, or a call that did not pass the interceptor.
   */
  grantOf(metadata: grpc.Metadata): TokenGrant | undefined;
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
      unaryLate: (_rpc, handler) => (call, callback) => handler(call, callback, () => undefined),
      bidiStream: (_rpc, _datasetOf, handler) => handler,
      guardServer: (server) => server,
      interceptor: undefined,
      grantOf: () => undefined,
    };
  }

  // Grants of the calls the interceptor let through, keyed by the metadata object grpc-js
  // hands on to the handler as `call.metadata`: the handlers' wrappers find the token checked.
  const checked = new WeakMap<grpc.Metadata, TokenGrant>();

  const authenticate = (
    call: { metadata: grpc.Metadata; getPeer(): string },
    rpc: string,
  ): TokenGrant | Refusal => {
    const known = checked.get(call.metadata);
    if (known !== undefined) return known;
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
    logger.info(
      {
        rpc,
        ...(dataset === undefined ? {} : { dataset: capName(dataset) }),
        token: grant.name,
        peer: call.getPeer(),
      },
      'call denied',
    );
    onRefused(rpc, 'PERMISSION_DENIED');
    return { code: grpc.status.PERMISSION_DENIED, details, metadata: new grpc.Metadata() };
  };

  const authorize = (
    call: { metadata: grpc.Metadata; getPeer(): string; request: { dataset: string } },
    rpc: LoaderRpc,
  ): Refusal | undefined => {
    const grant = authenticate(call, rpc);
    if (!isGrant(grant)) return grant;
    // Every dataset the request touches: a mixture names its datasets source by source.
    for (const dataset of requestDatasets(call.request)) {
      const denied = checkGrant(grant, rpc, dataset);
      if (denied !== undefined) return deny(call, rpc, grant, dataset, denied);
    }
    return undefined;
  };

  const interceptor: grpc.ServerInterceptor = (method, call) => {
    const rpc = rpcOfPath(method.path);
    if (rpc === undefined) return new grpc.ServerInterceptingCall(call);
    return new grpc.ServerInterceptingCall(call, {
      start: (next) => {
        next({
          onReceiveMetadata: (metadata, pass) => {
            const result = authenticate({ metadata, getPeer: () => call.getPeer() }, rpc);
            if (!isGrant(result)) {
              // The handler never sees the call, so it never asks for the body: grpc-js keeps
              // the HTTP/2 stream paused until then, and drops what arrives after the status.
              call.sendStatus(result);
              return;
            }
            checked.set(metadata, result);
            pass(metadata);
          },
        });
      },
    });
  };

  return {
    enabled: true,
    interceptor,
    grantOf: (metadata) => checked.get(metadata),
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
    unaryLate: (rpc, handler) => (call, callback) => {
      const grant = authenticate(call, rpc);
      if (!isGrant(grant)) {
        callback(grant);
        return;
      }
      const roleDenied = checkRole(grant, rpc);
      if (roleDenied !== undefined) {
        callback(deny(call, rpc, grant, undefined, roleDenied));
        return;
      }
      handler(call, callback, (datasets) => {
        for (const dataset of datasets) {
          const denied = checkGrant(grant, rpc, dataset);
          if (denied === undefined) continue;
          const refusal = deny(call, rpc, grant, dataset, denied);
          throw new LoaderError('PERMISSION_DENIED', refusal.details ?? denied);
        }
      });
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

/** Path prefix of the health service, whose probes carry no token. */
const HEALTH_PREFIX = '/grpc.health.v1.Health/';

/**
 * The name a call is logged and counted under, or undefined for a call that needs no token
 * (health). `/scylla_loader.v1.LoaderService/StreamBatches` is `StreamBatches`; other services'
 * methods keep their full path.
 */
function rpcOfPath(path: string): string | undefined {
  if (path.startsWith(HEALTH_PREFIX)) return undefined;
  const slash = path.lastIndexOf('/');
  return path.startsWith('/scylla_loader.') && slash >= 0 ? path.slice(slash + 1) : path;
}

/**
 * The datasets a request touches: those of its mixture's sources when it names any, else its
 * `dataset` (empty for none, which the handler refuses). Repeats are checked once.
 */
function requestDatasets(request: { dataset: string; sources?: unknown }): string[] {
  const sources = Array.isArray(request.sources)
    ? (request.sources as unknown[]).map((s) => (s as { dataset?: unknown }).dataset)
    : [];
  if (sources.length === 0) return [request.dataset];
  return [...new Set(sources.map((d) => (typeof d === 'string' ? d : '')))];
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
