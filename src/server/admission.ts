import { randomUUID } from 'node:crypto';
import {
  status,
  type handleBidiStreamingCall,
  type handleServerStreamingCall,
  type ServerWritableStream,
} from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { logCallError } from './errors/logCallError.js';
import { toGrpcStatus, type GrpcErrorStatus } from './errors/toGrpcStatus.js';
import type { RpcMetrics } from './metrics/serverMetrics.js';

/** Settings of {@link createStreamAdmission}. */
export interface StreamAdmissionOptions {
  /** Open streams allowed at once; one more gets RESOURCE_EXHAUSTED. */
  limit: number;
  /**
   * Of those, how many one client may hold (default: `limit`); `clientOf` names a call's
   * client (default: its peer address without the port).
   */
  perClient?: number;
  clientOf?: (call: ServerWritableStream<unknown, unknown>) => string;
  metrics: Pick<RpcMetrics, 'activeStreams' | 'streamErrors'>;
  logger: Logger;
}

/**
 * The gate in front of the streaming calls (StreamBatches and IngestSamples, which share one
 * limit: both hold memory for as long as they are open). It owns what is true of a stream
 * from outside: whether it may start, that it is counted in `scylla_loader_active_streams`
 * while open, the code it ended with in `scylla_loader_stream_errors_total`, and ending it at
 * shutdown. The handler it wraps owns everything inside the stream.
 */
export interface StreamAdmission {
  /** Wraps a server-streaming handler with the limit, the metrics and the shutdown hooks. */
  wrap<Req, Res>(handler: handleServerStreamingCall<Req, Res>): handleServerStreamingCall<Req, Res>;
  /** {@link wrap} for a bidirectional handler; `rpc` names it in the safety net's log. */
  wrapBidi<Req, Res>(
    rpc: string,
    handler: handleBidiStreamingCall<Req, Res>,
  ): handleBidiStreamingCall<Req, Res>;
  /** Streams open now. */
  readonly openStreams: number;
  /** From now on, new streams get UNAVAILABLE: the loader is shutting down. */
  close(): void;
  /** Resolves true once no stream is open, or false when `timeoutMs` passes first. */
  whenIdle(timeoutMs: number): Promise<boolean>;
  /**
   * Ends every open stream with `sent` and tells its handler to stop (see {@link wrap}'s
   * contract). Returns how many streams it ended.
   */
  endAll(sent: GrpcErrorStatus): number;
}

/** Details of the RESOURCE_EXHAUSTED status a stream over the limit gets. */
export function admissionLimitDetails(limit: number): string {
  return `loader at its limit of ${limit} concurrent streams; retry later or add replicas`;
}

/** Details of the RESOURCE_EXHAUSTED status a client's stream over its own limit gets. */
export function clientLimitDetails(limit: number): string {
  return (
    `this client already holds ${limit} open streams, the most one client may hold ` +
    '(a token, or a peer address when tokens are off); end one, or retry later'
  );
}

/** Details of the UNAVAILABLE status a stream opened during shutdown gets. */
export const SHUTTING_DOWN_DETAILS =
  'loader shutting down; retry, or resume with the last resume token, on another replica';

interface OpenStream {
  call: ServerWritableStream<unknown, unknown>;
  client: string;
  /** Code the wrapper itself ended the stream with (shutdown), which beats later events. */
  forced?: status;
  /** Code of the first error the stream was ended with. */
  errorCode?: status;
}

/**
 * Creates the admission gate. Contract with the wrapped handler:
 *
 * - The handler ends the call itself (`call.end()`, or `call.emit('error', status)` with a
 *   status from `toGrpcStatus`); a handler that throws or returns a rejected promise has the
 *   error mapped by `toGrpcStatus` and logged here, as a safety net.
 * - It stops when the call emits `'cancelled'`, which the client's cancel or deadline causes,
 *   and which {@link StreamAdmission.endAll} also causes at shutdown after ending the call
 *   with UNAVAILABLE. Once `call.cancelled` is true it must neither write nor end the call:
 *   the status is already decided.
 */
export function createStreamAdmission(options: StreamAdmissionOptions): StreamAdmission {
  const { limit, metrics, logger } = options;
  const perClient = Math.min(options.perClient ?? limit, limit);
  const clientOf = options.clientOf ?? peerAddress;
  const open = new Set<OpenStream>();
  const byClient = new Map<string, number>();
  const idleWaiters = new Set<() => void>();
  let closed = false;

  const release = (entry: OpenStream, code: status): void => {
    if (!open.delete(entry)) return;
    const held = (byClient.get(entry.client) ?? 1) - 1;
    if (held <= 0) byClient.delete(entry.client);
    else byClient.set(entry.client, held);
    metrics.activeStreams.dec();
    const final = entry.forced ?? entry.errorCode ?? code;
    if (final !== status.OK) metrics.streamErrors.inc({ code: status[final] });
    if (open.size === 0) for (const wake of idleWaiters) wake();
  };

  const refuse = (call: ServerWritableStream<unknown, unknown>, sent: GrpcErrorStatus): void => {
    metrics.streamErrors.inc({ code: status[sent.code] });
    call.emit('error', sent);
  };

  // A bidirectional call has every member of a server-streaming one that is used here (events,
  // `cancelled`, `writableEnded`, the deadline), so both go through one gate.
  const admit = (
    rpc: string,
    handler: (call: ServerWritableStream<unknown, unknown>) => unknown,
    call: ServerWritableStream<unknown, unknown>,
  ): void => {
    const surface = call;
    if (closed) {
      refuse(surface, { code: status.UNAVAILABLE, details: SHUTTING_DOWN_DETAILS });
      return;
    }
    if (open.size >= limit) {
      refuse(surface, { code: status.RESOURCE_EXHAUSTED, details: admissionLimitDetails(limit) });
      return;
    }
    const client = clientOf(surface);
    const held = byClient.get(client) ?? 0;
    if (held >= perClient) {
      logger.info({ rpc, client, limit: perClient }, 'stream refused: client at its limit');
      refuse(surface, { code: status.RESOURCE_EXHAUSTED, details: clientLimitDetails(perClient) });
      return;
    }
    const entry: OpenStream = { call: surface, client };
    open.add(entry);
    byClient.set(client, held + 1);
    metrics.activeStreams.inc();
    // Count the first error the stream is ended with: one emitted after it (e.g. a write
    // after the end) is a consequence, not the reason the client is given.
    call.on('error', (err: unknown) => {
      entry.errorCode ??= statusCodeOf(err);
    });
    // 'finish' comes when the status is being sent. grpc-js also emits 'cancelled' after a
    // normal end (it reports every call end that way), so 'cancelled' only counts as a cancel
    // when nothing ended the stream before it.
    call.once('finish', () => release(entry, status.OK));
    call.once('cancelled', () =>
      release(entry, deadlinePassed(call) ? status.DEADLINE_EXCEEDED : status.CANCELLED),
    );
    call.once('close', () => release(entry, status.CANCELLED));

    const fail = (err: unknown): void => {
      const streamId = randomUUID();
      const sent = toGrpcStatus(err, { streamId });
      logCallError(logger.child({ streamId, rpc }), err, sent, 'stream handler failed');
      if (!call.cancelled && !call.writableEnded) call.emit('error', sent);
    };
    try {
      const result: unknown = handler(call);
      if (isPromiseLike(result)) result.then(undefined, fail);
    } catch (err) {
      fail(err);
    }
  };

  return {
    wrap: (handler) => (call) =>
      admit(
        'StreamBatches',
        handler as (call: ServerWritableStream<unknown, unknown>) => unknown,
        call as ServerWritableStream<unknown, unknown>,
      ),
    wrapBidi: (rpc, handler) => (call) =>
      admit(
        rpc,
        handler as unknown as (call: ServerWritableStream<unknown, unknown>) => unknown,
        call as unknown as ServerWritableStream<unknown, unknown>,
      ),
    get openStreams() {
      return open.size;
    },
    close() {
      closed = true;
    },
    whenIdle(timeoutMs) {
      if (open.size === 0) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const done = (idle: boolean): void => {
          clearTimeout(timer);
          idleWaiters.delete(wake);
          resolve(idle);
        };
        const wake = (): void => done(true);
        const timer = setTimeout(() => done(false), timeoutMs);
        idleWaiters.add(wake);
      });
    },
    endAll(sent) {
      const ending = [...open];
      for (const entry of ending) {
        const { call } = entry;
        entry.forced = sent.code;
        // Status first, so whatever the handler does on 'cancelled' cannot replace it.
        if (!call.writableEnded) call.emit('error', sent);
        call.cancelled = true;
        call.emit('cancelled', 'server shutting down');
      }
      return ending.length;
    },
  };
}

/**
 * A call's peer address without its port: grpc-js gives `address:port` for TCP peers
 * (`127.0.0.1:5678`, `::1:5678`), so the last `:digits` is the port.
 */
export function peerAddress(call: { getPeer(): string }): string {
  const peer = call.getPeer();
  return /:\d+$/.test(peer) ? peer.slice(0, peer.lastIndexOf(':')) : peer;
}

/** The code grpc-js will send for an error emitted on a call (its `serverErrorToStatus`). */
function statusCodeOf(err: unknown): status {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' && Number.isInteger(code) ? code : status.UNKNOWN;
}

function deadlinePassed(call: ServerWritableStream<unknown, unknown>): boolean {
  const deadline = call.getDeadline();
  const ms = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(ms) && ms <= Date.now();
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
