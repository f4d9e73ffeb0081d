import type { SampleCache } from '../cache/SampleCache.js';
import type { BatchColumn } from '../columns/BatchColumn.js';
import { ColumnReader } from '../columns/ColumnReader.js';
import { type ColumnPlan, planColumns } from '../columns/planColumns.js';
import { withColumns } from '../columns/withColumns.js';
import type { SettingNames } from '../config/settingNames.js';
import type { DbPath } from '../db/DbPath.js';
import type { AssembledBatch } from '../fetch/AssembledBatch.js';
import { BatchFetcher } from '../fetch/BatchFetcher.js';
import type { ByteBudget } from '../fetch/ByteBudget.js';
import type { ReadSlots } from '../fetch/ReadSlots.js';
import { LoaderError } from '../errors/LoaderError.js';
import type { Ledger, LedgerStream } from '../ledger/Ledger.js';
import type { ResumeState } from '../resume/resumeToken.js';
import { openLedgerStream } from '../ledger/openLedgerStream.js';
import { replayPlanRequest, replayRows, replayShard } from '../ledger/planReplay.js';
import type { LoaderMetrics } from '../metrics/loaderMetrics.js';
import type { ResumeKeyring } from '../resume/resumeToken.js';
import { createPermutationCache } from '../sampling/createPermutationCache.js';
import { createRemainderCache } from '../sampling/createRemainderCache.js';
import { meanSampleBytes } from '../schema/meanSampleBytes.js';
import { readDatasetGeneration, readDatasetInfo } from '../schema/datasetInfo.js';
import { createSplitIdsCache } from '../splits/createSplitIdsCache.js';
import { resolveSplit } from '../splits/resolveSplit.js';
import type { StreamTransformer } from '../transform/StreamTransformer.js';
import type { TransformPool } from '../transform/TransformPool.js';
import { createMeanSizeCache } from './createMeanSizeCache.js';
import { type CheckpointSummary, type StreamPlanDeps, planStream } from './planStream.js';
import type { StreamPlan } from './StreamPlan.js';
import type { StreamRequest } from './StreamRequest.js';

/** What a process's streams are opened with (see {@link createStreamDeps}). */
export interface StreamDepsOptions {
  /** The database routes, the primary first: splits, sizes and generations are read over it. */
  paths: readonly DbPath[];
  /** The limits every stream is held to. */
  limits: StreamPlanDeps['limits'];
  /** Bytes each of the process's caches of split ids, epoch orders and remainders may hold. */
  idCacheBytes: number;
  /** Keys of the resume tokens' HMAC: the first signs, any verifies (key rotation). */
  resumeKey: ResumeKeyring;
  /** How refusals name the settings a person may change (default: their fields). */
  settingNames?: SettingNames;
  /** The process's sample cache (absent: none). */
  sampleCache?: SampleCache | undefined;
  metrics: LoaderMetrics;
  /** The bytes the process's streams hold together. */
  heldBytes: ByteBudget;
  /** The process's cap on queries in flight, shared by its streams (absent: none). */
  readSlots?: ReadSlots | undefined;
  /** The process's transform slots, shared by its streams. */
  transforms: TransformPool;
  /** The training ledger streams that name a job record into (absent: such a stream is refused). */
  ledger?: Ledger | undefined;
}

/**
 * What every stream of a process shares: the caches in front of the database (split ids, mean
 * sizes, epoch orders, remainders), the routes, the metrics, the held-bytes budget and the
 * transform pool. Made once per process by {@link createStreamDeps}.
 */
export interface StreamDeps {
  plan: Omit<StreamPlanDeps, 'transformer' | 'onCheckpoint'>;
  /** A dataset's typed metadata columns (name to CQL type): what a stream's columns are checked against. */
  datasetColumns(dataset: string): Promise<Readonly<Record<string, string>>>;
  paths: readonly DbPath[];
  metrics: LoaderMetrics;
  heldBytes: ByteBudget;
  readSlots?: ReadSlots | undefined;
  transforms: TransformPool;
  ledger?: Ledger | undefined;
}

/** Makes the {@link StreamDeps} of a process: its caches, each bounded, and its routes. */
export function createStreamDeps(options: StreamDepsOptions): StreamDeps {
  const primary = options.paths[0];
  if (primary === undefined) throw new Error('a stream needs at least one database path');
  const splits = createSplitIdsCache(options.idCacheBytes);
  return {
    plan: {
      splitIds: (dataset, split, signal) =>
        resolveSplit(primary.client, splits, dataset, split, signal),
      meanSampleBytes: createMeanSizeCache((dataset) => meanSampleBytes(primary.client, dataset)),
      ...(options.sampleCache ? { sampleCache: options.sampleCache } : {}),
      datasetGeneration: (dataset) => readDatasetGeneration(primary.client, dataset),
      permutations: createPermutationCache(options.idCacheBytes),
      remainders: createRemainderCache(options.idCacheBytes),
      limits: options.limits,
      resumeKey: options.resumeKey,
      ...(options.settingNames ? { settingNames: options.settingNames } : {}),
    },
    datasetColumns: async (dataset) => (await readDatasetInfo(primary.client, dataset)).columns,
    paths: options.paths,
    metrics: options.metrics,
    heldBytes: options.heldBytes,
    ...(options.readSlots ? { readSlots: options.readSlots } : {}),
    transforms: options.transforms,
    ...(options.ledger ? { ledger: options.ledger } : {}),
  };
}

/** What a stream's caller hears of it while it is planned. */
export interface StreamHooks {
  /** Told once a job checkpoint is resolved (see {@link CheckpointSummary}). */
  onCheckpoint?(summary: CheckpointSummary): void;
}

/** A batch with the resume token that continues the stream right after it: ready to encode. */
export interface ReadyBatch {
  batch: AssembledBatch;
  resumeToken: Buffer;
  /** The request's metadata columns for the batch's samples (absent: it asked for none). */
  columns?: BatchColumn[];
  /**
   * With a job named: the batch's ledger row being written, started when the batch was handed
   * out. The batch may be sent once it resolves; it rejects (UNAVAILABLE) when the row could
   * not be written, and the batch must then not be sent.
   */
  recorded?: Promise<void>;
}

/**
 * What a stream has delivered: the batches and samples its caller took, the positions left
 * out, the transforms' thread time, the fetch window, the read grouping, the sample cache's
 * look ups (with a cache) and each source's samples (a mixture's).
 */
export interface StreamFigures {
  batches: number;
  samples: number;
  skippedMissing: number;
  skippedUndecodable: number;
  /** Seconds this stream's transforms ran on the thread pool (one thread each: CPU time). */
  transformSeconds: number;
  /** The fetch window in positions at the last batch (an adaptive one may have grown). */
  windowPositions: number;
  /** Samples per read query (1: single-row reads). */
  groupReads: number;
  cacheHits?: number;
  /** Samples read from the database. */
  cacheMisses?: number;
  /** Samples taken from another stream's read. */
  cacheSharedReads?: number;
  /** Hits over look ups (0 without any). */
  cacheHitRatio?: number;
  /** Samples delivered from each source of a mixture, in the request's order. */
  sources?: { dataset: string; split: string; samples: number }[];
}

/** The figures of a stream that delivered nothing (one refused before it was opened). */
export function emptyStreamFigures(): StreamFigures {
  return {
    batches: 0,
    samples: 0,
    skippedMissing: 0,
    skippedUndecodable: 0,
    transformSeconds: 0,
    windowPositions: 0,
    groupReads: 1,
  };
}

/** An open stream (see {@link openStream}). */
export interface OpenedStream {
  plan: StreamPlan;
  /**
   * The stream's batches, each with its resume token. A batch counts as delivered (in the
   * figures and in `scylla_loader_source_samples_sent_total`) once the caller asks for the
   * next one, or ends the iteration having taken them all: one the caller drops by leaving
   * the loop is not counted.
   */
  batches: AsyncIterable<ReadyBatch>;
  /** The stream's figures so far. */
  figures(): StreamFigures;
}

/**
 * The core's entry for a stream, end to end: plans `request` (see {@link planStream}), starts
 * the fetch engine over the process's routes, and hands out the batches ready to encode, while
 * keeping the stream's figures and each source's count. Rejects as `planStream` does; once
 * `signal` fires the engine issues no further reads and the batches reject with its reason.
 */
export async function openStream(
  request: StreamRequest,
  deps: StreamDeps,
  signal: AbortSignal,
  hooks: StreamHooks = {},
): Promise<OpenedStream> {
  const replayed =
    request.replay && request.jobId !== undefined
      ? { ...request, jobId: request.jobId, replay: request.replay }
      : undefined;
  // Columns are checked first: a misspelt one is refused before the split is read.
  const columnPlan = request.columns?.length ? await checkColumns(request, deps) : undefined;
  let transformer: StreamTransformer | undefined;
  const plan = await planStream(
    {
      ...deps.plan,
      transformer: (spec, seed) => {
        transformer = deps.transforms.forStream(spec, seed, signal);
        return transformer;
      },
      ...(hooks.onCheckpoint ? { onCheckpoint: hooks.onCheckpoint } : {}),
    },
    replayed ? replayPlanRequest(replayed) : request,
    signal,
  );
  // A replay streams recorded batches again and records nothing.
  const replay = replayed ? await replayRows(ledgerOf(deps, replayed), replayed, plan) : undefined;
  const ledger =
    request.jobId === undefined || replayed
      ? undefined
      : await openLedger({ ...request, jobId: request.jobId }, plan, deps);
  const fetcher = new BatchFetcher({
    ...plan.fetch,
    ...(replay
      ? { shardOf: (epoch: number) => replayShard(plan.fetch.shardOf(epoch), replay) }
      : {}),
    // A resume that skips recorded batches starts with their samples counted as delivered.
    ...(ledger?.resume ? { resume: ledger.resume } : {}),
    budget: deps.heldBytes,
    ...(deps.readSlots ? { readSlots: deps.readSlots } : {}),
    paths: deps.paths,
    metrics: deps.metrics,
    signal,
  });
  const figures = { ...emptyStreamFigures(), groupReads: plan.fetch.groupReads };
  const sent = plan.sources.map(() => 0);
  const counters = plan.sources.map((s) =>
    deps.metrics.sourceSamplesSent.labels({ dataset: s.dataset, split: s.split }),
  );
  const delivered = (batch: AssembledBatch): void => {
    figures.batches++;
    figures.samples += batch.samples.length;
    figures.skippedMissing += batch.skippedMissing;
    figures.skippedUndecodable += batch.skippedUndecodable;
    figures.windowPositions = fetcher.windowPositions;
    if (!plan.mixed) {
      sent[0]! += batch.samples.length;
      counters[0]!.inc(batch.samples.length);
      return;
    }
    const counts = new Array<number>(sent.length).fill(0);
    for (const s of batch.samples) counts[s.source]!++;
    counts.forEach((c, i) => {
      if (c === 0) return;
      sent[i]! += c;
      counters[i]!.inc(c);
    });
  };
  async function* batches(): AsyncGenerator<ReadyBatch> {
    // Each next epoch's order is made off the event loop before the engine starts the epoch.
    const assembled = plan.readyAhead(fetcher.batches());
    // The epoch's shard, for the ledger's epoch positions (made once per epoch).
    let shardEpoch = -1;
    let shard: ReturnType<typeof plan.fetch.shardOf> | undefined;
    const shardOf = (epoch: number) => {
      if (shard === undefined || shardEpoch !== epoch) {
        shard = plan.fetch.shardOf(epoch);
        shardEpoch = epoch;
      }
      return shard;
    };
    let replays = 0;
    const ready = (batch: AssembledBatch, columns?: BatchColumn[]): ReadyBatch => {
      if (replay) {
        // The recorded batch's own index and token (the engine numbers the replay from 0).
        const row = replay[replays++]!;
        const again = { ...batch, index: row.index };
        return { batch: again, resumeToken: row.resumeToken, ...(columns ? { columns } : {}) };
      }
      const resumeToken = plan.resumeToken(batch.resume);
      if (ledger === undefined) return { batch, resumeToken, ...(columns ? { columns } : {}) };
      const shard = shardOf(batch.epoch);
      const recorded = ledger.stream.record({
        epoch: batch.epoch,
        index: batch.index,
        ids: batch.samples.map((s) => s.id),
        ...(plan.mixed ? { sources: batch.samples.map((s) => s.source) } : {}),
        positions: batch.samples.map((s) => s.position),
        epochPositions: batch.samples.map((s) => shard.epochPosition(s.position)),
        resumeToken,
      });
      // A batch the caller drops (the call ended) leaves its write unawaited.
      recorded.catch(() => undefined);
      return { batch, resumeToken, ...(columns ? { columns } : {}), recorded };
    };
    if (columnPlan === undefined) {
      for await (const batch of assembled) {
        yield ready(batch);
        delivered(batch);
      }
      return;
    }
    const reader = new ColumnReader({
      client: deps.paths[0]!.client,
      datasets: plan.sources.map((s) => s.dataset),
      plan: columnPlan,
      readAttempts: plan.fetch.readAttempts,
      retryBaseMs: plan.fetch.retryBaseMs,
      signal,
    });
    const read = (batch: AssembledBatch) => reader.read(batch.samples);
    for await (const { batch, columns } of withColumns(assembled, read, deps.heldBytes)) {
      yield ready(batch, columns);
      delivered(batch);
    }
  }
  return {
    plan,
    // A job's batches are handed out ahead of the caller, so that each one's ledger write
    // runs while the batches before it are still being sent.
    batches: ledger
      ? handedAhead(batches(), RECORD_AHEAD, (ready, held) =>
          // Batches waiting ahead of the caller are held bytes like the window's.
          deps.heldBytes.add(held ? readyBytes(ready) : -readyBytes(ready)),
        )
      : batches(),
    figures: () => ({
      ...figures,
      ...(transformer ? { transformSeconds: Number(transformer.threadSeconds.toFixed(3)) } : {}),
      ...(plan.fetch.cache ? cacheFigures(fetcher.cacheFigures) : {}),
      ...(plan.mixed
        ? {
            sources: plan.sources.map((s, i) => ({
              dataset: s.dataset,
              split: s.split,
              samples: sent[i]!,
            })),
          }
        : {}),
    }),
  };
}

/** Batches of a job's stream whose ledger writes may run ahead of their sending. */
export const RECORD_AHEAD = 2;

/**
 * `source`'s items, with up to `depth` more asked for while the caller holds one: the work
 * that producing an item starts (a batch's ledger write) overlaps the caller's on the items
 * before it. An item asked for ahead that fails fails when the caller reaches it; when the
 * caller stops, `source` is closed once the items asked for ahead have settled (without
 * holding the caller up: a stream that ends in error reports it at once). `held(item, true)`
 * is told when an item arrives ahead of the caller, `held(item, false)` when the caller takes
 * it or it is dropped. A job stream's figures count the batches asked for ahead as delivered
 * when they are asked for.
 */
export async function* handedAhead<T>(
  source: AsyncGenerator<T>,
  depth: number,
  held: (item: T, ahead: boolean) => void = () => undefined,
): AsyncGenerator<T> {
  const ahead: Promise<IteratorResult<T>>[] = [];
  const ask = (): void => {
    const next = source.next();
    // Settled by the caller in turn; until then a rejection must not go unhandled.
    next.then(
      (r) => {
        if (!r.done) held(r.value, true);
      },
      () => undefined,
    );
    ahead.push(next);
  };
  try {
    for (;;) {
      while (ahead.length <= depth) ask();
      const item = await ahead.shift()!;
      if (item.done) return;
      held(item.value, false);
      yield item.value;
    }
  } finally {
    // What arrived ahead and was never taken stops counting once it has arrived.
    const dropped = ahead.splice(0);
    void Promise.allSettled(dropped)
      .then((results) => {
        for (const r of results) {
          if (r.status === 'fulfilled' && !r.value.done) held(r.value.value, false);
        }
        return source.return(undefined);
      })
      .catch(() => undefined);
  }
}

/** Bytes of a ready batch's samples (data and label blobs), as the window counts them. */
function readyBytes(ready: ReadyBatch): number {
  let bytes = 0;
  for (const s of ready.batch.samples) bytes += s.data.length + (s.labelBlob?.length ?? 0);
  return bytes;
}

/** The stream's job in the ledger, its stale rows superseded (see `openLedgerStream`). */
async function openLedger(
  request: StreamRequest & { jobId: string },
  plan: StreamPlan,
  deps: StreamDeps,
): Promise<{ stream: LedgerStream; resume?: ResumeState }> {
  return openLedgerStream(ledgerOf(deps, request), request, plan, deps.plan.resumeKey);
}

/** The process's ledger; FAILED_PRECONDITION for a stream naming a job when there is none. */
function ledgerOf(deps: StreamDeps, request: { jobId: string }): Ledger {
  if (deps.ledger === undefined) {
    throw new LoaderError(
      'FAILED_PRECONDITION',
      `the stream names job ${request.jobId}, but this loader keeps no training ledger`,
    );
  }
  return deps.ledger;
}

/** Checks the request's columns against its sources' datasets (see {@link planColumns}). */
async function checkColumns(request: StreamRequest, deps: StreamDeps): Promise<ColumnPlan> {
  const datasets = request.mix ? request.mix.sources.map((s) => s.dataset) : [request.dataset];
  const sources = await Promise.all(
    datasets.map(async (dataset) => ({ dataset, columns: await deps.datasetColumns(dataset) })),
  );
  return planColumns(request.columns ?? [], sources);
}

/** The cache's figures: hits, misses, shared reads and the hit ratio of the look ups. */
function cacheFigures(cache: {
  hits: number;
  misses: number;
  shared: number;
}): Pick<StreamFigures, 'cacheHits' | 'cacheMisses' | 'cacheSharedReads' | 'cacheHitRatio'> {
  const lookups = cache.hits + cache.misses + cache.shared;
  return {
    cacheHits: cache.hits,
    cacheMisses: cache.misses,
    cacheSharedReads: cache.shared,
    cacheHitRatio: lookups > 0 ? Number((cache.hits / lookups).toFixed(4)) : 0,
  };
}
