import { cacheScope } from '../cache/cacheKey.js';
import type { SampleCache } from '../cache/SampleCache.js';
import type { SettingNames } from '../config/settingNames.js';
import type { StreamLimits } from '../config/streamLimits.js';
import { LoaderError } from '../errors/LoaderError.js';
import { adaptiveWindowMax } from '../fetch/adaptiveWindowMax.js';
import { RAMP_START } from '../fetch/FetchWindow.js';
import { groupReadSize } from '../fetch/groupReadSize.js';
import { describeSource } from '../mixing/MixSource.js';
import { planMixture } from '../mixing/planMixture.js';
import { resolveStart } from '../resume/resolveStart.js';
import { NO_BASE, type ResumeKeyring } from '../resume/resumeToken.js';
import type { PermutationCache } from '../sampling/createPermutationCache.js';
import type { RemainderCache } from '../sampling/createRemainderCache.js';
import { epochShard } from '../sampling/epochShard.js';
import { trimmedShard } from '../sampling/trimmedShard.js';
import type { SplitIds } from '../splits/SplitIds.js';
import type { StreamTransformer } from '../transform/StreamTransformer.js';
import { type TransformSpec, rawSampleShape } from '../transform/TransformSpec.js';
import { epochOrders } from './epochOrders.js';
import { permutationKey, remainderKey } from './streamCacheKeys.js';
import type { PlannedSource, StreamPlan } from './StreamPlan.js';
import type { StreamRequest } from './StreamRequest.js';

/** What a job checkpoint's stream continues from, for its log line. */
export interface CheckpointSummary {
  epoch: number;
  /** World sizes of the checkpoint's layers, oldest first. */
  worlds: number[];
  /** Positions of the epoch left to deliver at the new world size. */
  remaining: number;
}

/** What {@link planStream} reads and shares; the database is behind the first two. */
export interface StreamPlanDeps {
  /**
   * The ids a request's split names (the process's split cache in front of the database);
   * rejects with the signal's reason once `signal` fires.
   */
  splitIds(dataset: string, split: string, signal?: AbortSignal): Promise<SplitIds>;
  /** A dataset's mean sample bytes (cached): the byte bound's estimate of a read, and grouping. */
  meanSampleBytes(dataset: string): Promise<number | undefined>;
  /** Epoch orders shared by the process's streams, large ones made off the event loop. */
  permutations: PermutationCache;
  /** Re-sharded epochs' remainders shared by the process's streams, likewise. */
  remainders: RemainderCache;
  /** The process's sample cache (absent: none). */
  sampleCache?: SampleCache;
  /**
   * A dataset's generation (see `readDatasetGeneration`), asked once per stream when there is
   * a sample cache: what its entries are keyed by, so that a re-made dataset is never served
   * old bytes.
   */
  datasetGeneration(dataset: string): Promise<string | undefined>;
  limits: Pick<
    StreamLimits,
    | 'maxPrefetch'
    | 'maxWindowSamples'
    | 'maxWindowBytes'
    | 'maxInFlightPerStream'
    | 'readAttempts'
    | 'retryBaseMs'
    | 'groupReads'
    | 'groupReadsMaxBytes'
    | 'groupReadsSize'
    | 'maxMixedEpoch'
  >;
  /** Keys of the resume tokens' HMAC: the first signs, any verifies (key rotation). */
  resumeKey: ResumeKeyring;
  /** How refusals name the settings a person may change (default: their fields). */
  settingNames?: SettingNames;
  /** The stream's transformer (its slots, its seed, its cancellation). */
  transformer(spec: TransformSpec, seed: bigint): StreamTransformer;
  /** Told once a job checkpoint is resolved, before the plan reads anything further. */
  onCheckpoint?(summary: CheckpointSummary): void;
}

/**
 * Plans a stream from a validated request: resolves the split (or each source's, and the
 * mixture: see `planMixture`), fingerprints the job, checks the job checkpoint and the resume
 * token against it and works out where the stream starts, and derives the fetch engine's
 * options from the request and the server's limits. Every refusal is a LoaderError
 * (INVALID_ARGUMENT for a token or checkpoint that does not fit, NOT_FOUND for a split that
 * does not exist, naming the source in a mixture).
 *
 * A mixed epoch is a sequence of positions like a split's permutation: sharding, the
 * checkpoint's remainder, resume tokens and the fetch engine work on its positions unchanged.
 *
 * Work that grows with the split's size (its ids, the first epoch's order, a remainder) is
 * done off the event loop, shared with the process's other streams, and left (stopped when no
 * other stream waits for it) once `signal` (the call's) fires: the plan then rejects with the
 * signal's reason. Later epochs' orders are made while the stream runs (see
 * {@link StreamPlan.readyAhead}).
 */
export async function planStream(
  deps: StreamPlanDeps,
  req: StreamRequest,
  signal?: AbortSignal,
): Promise<StreamPlan> {
  const named = req.mix ? req.mix.sources : [{ dataset: req.dataset, split: req.split }];
  const splits = await Promise.all(
    named.map((s, i) =>
      deps.splitIds(s.dataset, s.split, signal).catch((err: unknown) => {
        throw req.mix && err instanceof LoaderError
          ? new LoaderError(err.code, `${describeSource(i, s)}: ${err.message}`, { cause: err })
          : err;
      }),
    ),
  );
  const mixture = req.mix
    ? planMixture(
        req.mix,
        splits,
        req.seed,
        req.shuffle,
        deps.permutations,
        deps.limits,
        deps.settingNames,
      )
    : undefined;
  const single = splits[0]!;
  /** Positions per epoch, and what tokens and cached orders are bound to. */
  const n = mixture ? mixture.length : single.count;
  const contentHash = mixture ? mixture.contentHash : single.contentHash;
  const transformer = req.transform ? deps.transformer(req.transform, req.seed) : undefined;
  const tensor = req.transform ? rawSampleShape(req.transform) : undefined;
  const start = resolveStart(deps.resumeKey, req, { positions: n, contentHash }, deps.settingNames);
  const { job, checkpoint: elastic, resume, resharded } = start;
  // The positions the checkpoint's world left of its epoch: computed once, used by that
  // epoch's shard only (later epochs shard the whole split at this world size).
  const remainder =
    elastic && resharded(elastic.epoch)
      ? await deps.remainders.lookup(
          remainderKey(contentHash, elastic.digest),
          { n, layers: elastic.layers, rules: req },
          { signal },
        )
      : undefined;
  if (elastic) {
    deps.onCheckpoint?.({
      epoch: elastic.epoch,
      worlds: elastic.layers.map((l) => l.worldSize),
      remaining: remainder?.length ?? n,
    });
  }
  // A mixture's epoch order is its sequence (each source shuffled, or not, within it).
  const shuffle = mixture ? 'uniform' : req.shuffle;
  const orders = epochOrders({
    permutations: deps.permutations,
    orderOf: (epoch) =>
      mixture
        ? mixture.order(epoch)
        : {
            key: permutationKey(contentHash, { n, seed: req.seed, epoch }),
            args: { n, seed: req.seed, epoch },
          },
    // Only an epoch with positions for this rank needs its order (see `epochShard`).
    needed: (epoch) =>
      shuffle === 'uniform' &&
      epoch < req.firstEpoch + req.epochs &&
      trimmedShard(
        resharded(epoch) ? remainder!.length : n,
        req.rank,
        req.worldSize,
        req.shardRule,
        req.batchSize,
        req.dropLast,
      ).length > 0,
    ...(signal ? { signal } : {}),
  });
  // The first epoch's order before the engine starts it; and the next one's when the first
  // has no positions for this rank (a re-sharded epoch's remainder can be that small).
  const first = resume?.epoch ?? req.firstEpoch;
  await orders.ready(first);
  if (!orders.needed(first)) await orders.ready(first + 1);
  const datasets = [...new Set(named.map((s) => s.dataset))];
  const { limits } = deps;
  // The mean sizes the byte bound's estimate of reads in flight, and grouping under auto.
  const meanBytes = await largestMeanSize(deps, datasets);
  const groupReads = groupReadSize(limits, limits.groupReads === 'auto' ? meanBytes : undefined);
  const scopes = deps.sampleCache
    ? await Promise.all(
        named.map(async (s) => {
          const generation = await deps.datasetGeneration(s.dataset);
          return generation === undefined ? undefined : cacheScope(s.dataset, generation);
        }),
      )
    : [];
  const cache =
    deps.sampleCache && scopes.length > 0 && scopes.every((x) => x !== undefined)
      ? { store: deps.sampleCache, scopes }
      : undefined;
  const sources: PlannedSource[] = named.map((s, i) => ({
    dataset: s.dataset,
    split: s.split,
    count: splits[i]!.count,
    quota: mixture ? mixture.quotas[i]! : splits[i]!.count,
  }));
  return {
    sources,
    positions: n,
    mixed: mixture !== undefined,
    job,
    contentHash,
    segmentOf: (epoch) => (elastic && resharded(epoch) ? elastic.digest : NO_BASE),
    ...(elastic ? { checkpoint: elastic } : {}),
    ...(remainder ? { remainder } : {}),
    ...(resume ? { resume } : {}),
    ...(tensor ? { tensor } : {}),
    fetch: {
      sources: named.map((s, i) => ({ keyspace: s.dataset, ids: splits[i]!.ids })),
      firstEpoch: req.firstEpoch,
      endEpoch: req.firstEpoch + req.epochs,
      shardOf: (epoch) =>
        epochShard(
          { ...req, shuffle, n, epoch },
          orders.permute,
          resharded(epoch) ? remainder : undefined,
        ),
      batchSize: req.batchSize,
      prefetch: req.prefetch,
      ...(req.adaptivePrefetch
        ? { adaptiveWindowMax: adaptiveWindowMax(req.batchSize, limits) }
        : {}),
      ordering: req.ordering,
      missing: req.missing,
      maxInFlight: limits.maxInFlightPerStream,
      // Sized by rate x round trip from two batches' reads (at least the ramp's start).
      inFlightFloor: Math.min(
        limits.maxInFlightPerStream,
        Math.max(RAMP_START, 2 * Math.ceil(req.batchSize / groupReads)),
      ),
      maxWindowBytes: limits.maxWindowBytes,
      ...(meanBytes !== undefined ? { meanSampleBytes: meanBytes } : {}),
      readAttempts: limits.readAttempts,
      retryBaseMs: limits.retryBaseMs,
      groupReads,
      ...(resume ? { resume } : {}),
      ...(transformer ? { transform: transformer } : {}),
      ...(mixture ? { mixed: true } : {}),
      ...(cache ? { cache } : {}),
    },
    readyAhead: orders.readyAhead,
    resumeToken: start.resumeToken,
  };
}

/**
 * The largest mean sample size of `datasets` (undefined when any is unknown): reads are
 * grouped only when every source's samples are small.
 */
async function largestMeanSize(
  deps: Pick<StreamPlanDeps, 'meanSampleBytes'>,
  datasets: readonly string[],
): Promise<number | undefined> {
  const means = await Promise.all(datasets.map((d) => deps.meanSampleBytes(d)));
  return means.some((m) => m === undefined) ? undefined : Math.max(...(means as number[]));
}
