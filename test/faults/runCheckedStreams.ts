import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { emptyHistory, type FaultHistory } from './checkHistory.js';

/**
 * A `StreamBatchesRequest` as the checker sends it: field names as in `proto/` (the checker
 * loads the proto with `keepCase`, so it shares no naming or decoding choice with the SDK).
 *
 * @internal
 */
export interface CheckerRequest {
  dataset: string;
  split: string;
  batch_size: number;
  seed: string;
  first_epoch: number;
  epochs: number;
  rank: number;
  world_size: number;
  shard_rule: 'SHARD_RULE_UNEVEN';
  resume_token?: Buffer;
}

/** The fields of a `Batch` the checker reads. @internal */
export interface CheckerBatch {
  epoch: number;
  ids: Buffer;
  resume_token: Buffer;
}

/** A `LoaderService` client made from `proto/` by proto-loader, for one call. @internal */
export interface CheckerServiceClient extends grpc.Client {
  StreamBatches(
    request: CheckerRequest,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<{ batch: CheckerBatch | null }>;
}

let LoaderService: grpc.ServiceClientConstructor | undefined;

/**
 * Opens a client of `scylla_loader.v1.LoaderService` at `address`, built from the `.proto`
 * files by proto-loader: the fault checker's own client, independent of the SDK in
 * `src/client` (whose reconnect and resume logic is what is under test). Each call gets its
 * own subchannel, so a new client after a fault never waits on a broken connection's backoff.
 */
function checkerClient(address: string): CheckerServiceClient {
  if (!LoaderService) {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../proto');
    const definition = protoLoader.loadSync('scylla_loader/v1/loader.proto', {
      keepCase: true,
      longs: String,
      enums: String,
      bytes: Buffer,
      defaults: true,
      includeDirs: [root],
    });
    const loaded = grpc.loadPackageDefinition(definition) as unknown as {
      scylla_loader: { v1: { LoaderService: grpc.ServiceClientConstructor } };
    };
    LoaderService = loaded.scylla_loader.v1.LoaderService;
  }
  return new LoaderService(address, grpc.credentials.createInsecure(), {
    'grpc.use_local_subchannel_pool': 1,
    'grpc.max_receive_message_length': 256 * 1024 * 1024,
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 1000,
  }) as unknown as CheckerServiceClient;
}

/** What {@link runCheckedStreams} streams and how it copes. @internal */
export interface CheckedStreamsOptions {
  /** The loader to call, asked again before every call (it may move after a fault). */
  address: () => string;
  dataset: string;
  split: string;
  batchSize: number;
  seed: number;
  epochs: number;
  worldSize: number;
  /**
   * The trainer's step after each batch, ms (a function, so a scenario can slow training
   * while it injects faults and let it run free afterwards). Default 0.
   */
  stepMs?: () => number;
  /** The whole run gives up after this long; ranks still going fail. */
  deadlineMs: number;
  /** Ends every rank (each records an `ABORTED` failure): the run was given up. */
  signal?: AbortSignal;
}

/** A running {@link runCheckedStreams}. @internal */
export interface CheckedStreams {
  /** The history so far (live: it grows while the run goes on). */
  history: FaultHistory;
  /** Samples delivered so far, all ranks and epochs. */
  delivered(): number;
  /** performance.now() when the ranks started: the zero of the history's `atMs`. */
  startedAt: number;
  /** Resolves with the history once every rank has finished or given up. */
  done: Promise<FaultHistory>;
}

/** A call whose connection is not up after this long is given up and tried afresh. */
const CONNECT_TIMEOUT_MS = 1000;
/** A call that delivers nothing for this long is cancelled and resumed. */
const IDLE_MS = 30_000;
/** Reconnects per rank before it gives up. */
const MAX_RECONNECTS = 1000;

/** Statuses a trainer gives up on: retrying cannot change the answer. */
const FINAL = new Set<number>([
  grpc.status.INVALID_ARGUMENT,
  grpc.status.NOT_FOUND,
  grpc.status.ALREADY_EXISTS,
  grpc.status.PERMISSION_DENIED,
  grpc.status.UNAUTHENTICATED,
  grpc.status.FAILED_PRECONDITION,
  grpc.status.OUT_OF_RANGE,
  grpc.status.UNIMPLEMENTED,
  grpc.status.DATA_LOSS,
]);

/**
 * Streams ranks 0..worldSize-1 of one job at once through the checker's own client, each
 * reconnecting by itself when its call fails: a new client (so no broken connection's backoff
 * is inherited), the same request fields, and the resume token of the last batch it received.
 * Every delivered id, every wait between batches and every reconnect goes into the history;
 * judging it is {@link checkHistory}'s business.
 *
 * @internal
 */
export function runCheckedStreams(options: CheckedStreamsOptions): CheckedStreams {
  const history = emptyHistory();
  const started = performance.now();
  const deadline = started + options.deadlineMs;
  let delivered = 0;

  const runRank = async (rank: number): Promise<void> => {
    let token: Buffer | undefined;
    let lastStepEnd: number | undefined;
    let failuresInARow = 0;
    let reconnects = 0;
    const callStarted = performance.now();
    for (;;) {
      if (options.signal?.aborted) {
        history.failures.push({ rank, code: 'ABORTED', details: 'the run was given up' });
        return;
      }
      if (performance.now() > deadline) {
        history.failures.push({ rank, code: 'DEADLINE', details: 'run deadline passed' });
        return;
      }
      const request: CheckerRequest = {
        dataset: options.dataset,
        split: options.split,
        batch_size: options.batchSize,
        seed: String(options.seed),
        first_epoch: 0,
        epochs: options.epochs,
        rank,
        world_size: options.worldSize,
        shard_rule: 'SHARD_RULE_UNEVEN',
        ...(token ? { resume_token: token } : {}),
      };
      const client = checkerClient(options.address());
      const call = client.StreamBatches(request);
      let idle = false;
      let unconnected = false;
      let watchdog = setTimeout(() => ((idle = true), call.cancel()), IDLE_MS);
      // grpc-js keeps a call waiting for ~10 s when its connection attempt is reset (seen
      // with a reset while reconnecting): a trainer would rather try a new connection.
      const connectCheck = setTimeout(() => {
        if (client.getChannel().getConnectivityState(false) !== grpc.connectivityState.READY) {
          unconnected = true;
          call.cancel();
        }
      }, CONNECT_TIMEOUT_MS);
      const abort = (): void => call.cancel();
      options.signal?.addEventListener('abort', abort);
      try {
        for await (const message of call as AsyncIterable<{ batch: CheckerBatch | null }>) {
          const { batch } = message;
          const now = performance.now();
          clearTimeout(watchdog);
          clearTimeout(connectCheck);
          if (!batch) throw new Error('a response without a batch');
          if (lastStepEnd === undefined) {
            history.firstBatchMs[String(rank)] = now - callStarted;
          } else {
            history.waits.push({
              rank,
              epoch: batch.epoch,
              atMs: now - started,
              ms: now - lastStepEnd,
            });
          }
          const key = `${batch.epoch}/${rank}`;
          const ids = (history.deliveries[key] ??= []);
          for (let o = 0; o + 16 <= batch.ids.length; o += 16) {
            ids.push(batch.ids.toString('hex', o, o + 16));
          }
          delivered += batch.ids.length / 16;
          token = Buffer.from(batch.resume_token);
          failuresInARow = 0;
          const step = options.stepMs?.() ?? 0;
          if (step > 0) await sleep(step);
          lastStepEnd = performance.now();
          watchdog = setTimeout(() => ((idle = true), call.cancel()), IDLE_MS);
        }
        return;
      } catch (err) {
        const e = err as { code?: number; details?: string; message?: string };
        const [code, details] = idle
          ? ['IDLE', `no batch for ${IDLE_MS} ms`]
          : unconnected
            ? ['CONNECT', `not connected after ${CONNECT_TIMEOUT_MS} ms`]
            : [
                e.code === undefined ? 'CLIENT' : (grpc.status[e.code] ?? String(e.code)),
                e.details ?? e.message ?? '',
              ];
        if (e.code !== undefined && FINAL.has(e.code) && !idle && !unconnected) {
          history.failures.push({ rank, code, details });
          return;
        }
        history.reconnects.push({ rank, code, atMs: performance.now() - started, details });
        if (++reconnects > MAX_RECONNECTS) {
          history.failures.push({ rank, code: 'RECONNECTS', details: 'too many reconnects' });
          return;
        }
        // Short and capped: a trainer that waits longer than needed would inflate the stalls
        // the run measures; the loader's admission and the database are what push back.
        await sleep(
          Math.min(50 * 2 ** failuresInARow++, 1000) * (0.5 + Math.random() / 2),
          undefined,
          options.signal ? { signal: options.signal } : {},
        ).catch(() => undefined);
      } finally {
        clearTimeout(watchdog);
        clearTimeout(connectCheck);
        options.signal?.removeEventListener('abort', abort);
        client.close();
      }
    }
  };

  const done = Promise.all(
    Array.from({ length: options.worldSize }, (_, rank) =>
      runRank(rank).catch((err: unknown) => {
        history.failures.push({ rank, code: 'CLIENT', details: String(err) });
      }),
    ),
  ).then(() => history);
  return { history, delivered: () => delivered, startedAt: started, done };
}
