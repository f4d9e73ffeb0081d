import { cacheScope } from '../cache/cacheKey.js';
import type { SampleCache } from '../cache/SampleCache.js';
import type { StreamLimits } from '../config/streamLimits.js';
import { adaptiveWindowMax } from '../fetch/adaptiveWindowMax.js';
import { groupReadSize } from '../fetch/groupReadSize.js';
import { resolveJobCheckpoint } from '../resume/jobCheckpoint.js';
import {
  NO_BASE,
  type ResumeState,
  encodeResumeToken,
  jobFingerprint,
  requestFingerprint,
} from '../resume/resumeToken.js';
import type { PermutationCache } from '../sampling/createPermutationCache.js';
import type { RemainderCache } from '../sampling/createRemainderCache.js';
import { epochShard } from '../sampling/epochShard.js';
import type { SplitIds } from '../splits/SplitIds.js';
import type { StreamTransformer } from '../transform/StreamTransformer.js';
import { type TransformSpec, rawSampleShape } from '../transform/TransformSpec.js';
import { checkCheckpointEpoch } from './checkCheckpointEpoch.js';
import { startingPoint } from './startingPoint.js';
import { permutationKey, remainderKey } from './streamCacheKeys.js';
import type { StreamPlan } from './StreamPlan.js';
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
  /** The ids a request's split names (the process's split cache in front of the database). */
  splitIds(dataset: string, split: string): Promise<SplitIds>;
  /** A dataset's mean sample bytes (cached), asked only when `limits.groupReads` is `auto`. */
  meanSampleBytes(dataset: string): Promise<number | undefined>;
  permutations: PermutationCache;
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
    | 'maxInFlightPerStream'
    | 'readAttempts'
    | 'retryBaseMs'
    | 'groupReads'
    | 'groupReadsMaxBytes'
    | 'groupReadsSize'
  >;
  /** Key of the resume tokens' HMAC. */
  resumeKey: Buffer;
  /** The stream's transformer (its slots, its seed, its cancellation). */
  transformer(spec: TransformSpec, seed: bigint): StreamTransformer;
  /** Told once a job checkpoint is resolved, before the plan reads anything further. */
  onCheckpoint?(summary: CheckpointSummary): void;
}

/**
 * Plans a stream from a validated request: resolves the split, fingerprints the job, checks
 * the job checkpoint and the resume token against it and works out where the stream starts,
 * and derives the fetch engine's options from the request and the server's limits. Every
 * refusal is a LoaderError (INVALID_ARGUMENT for a token or checkpoint that does not fit,
 * NOT_FOUND for a split that does not exist).
 */
export async function planStream(deps: StreamPlanDeps, req: StreamRequest): Promise<StreamPlan> {
  const split = await deps.splitIds(req.dataset, req.split);
  const job = jobFingerprint({ ...req, splitContentHash: split.contentHash });
  const legacyFor = (owner: { rank: number; worldSize: number }): Buffer =>
    requestFingerprint({ ...req, splitContentHash: split.contentHash, ...owner });
  const transformer = req.transform ? deps.transformer(req.transform, req.seed) : undefined;
  const tensor = req.transform ? rawSampleShape(req.transform) : undefined;
  const elastic = req.jobCheckpoint
    ? resolveJobCheckpoint(req.jobCheckpoint, {
        key: deps.resumeKey,
        job,
        legacyFor,
        n: split.count,
        rules: req,
      })
    : undefined;
  if (elastic) checkCheckpointEpoch(elastic, req.firstEpoch, req.epochs);
  const resume = startingPoint(
    deps.resumeKey,
    { job, legacy: legacyFor(req), rank: req.rank, worldSize: req.worldSize },
    req.resumeToken,
    elastic,
  );
  // The positions the checkpoint's world left of its epoch: computed once, used by that
  // epoch's shard only (later epochs shard the whole split at this world size).
  const remainder =
    elastic && elastic.layers.length > 0
      ? deps.remainders.memo(remainderKey(split.contentHash, elastic.digest), {
          context: { n: split.count, layers: elastic.layers, rules: req },
        })
      : undefined;
  const resharded = (epoch: number): boolean => remainder !== undefined && epoch === elastic!.epoch;
  if (elastic) {
    deps.onCheckpoint?.({
      epoch: elastic.epoch,
      worlds: elastic.layers.map((l) => l.worldSize),
      remaining: remainder?.length ?? split.count,
    });
  }
  const permute = (n: number, seed: bigint, epoch: number): Uint32Array =>
    deps.permutations.memo(permutationKey(split.contentHash, { n, seed, epoch }), {
      context: { n, seed, epoch },
    });
  const { limits } = deps;
  const groupReads = groupReadSize(
    limits,
    limits.groupReads === 'auto' ? await deps.meanSampleBytes(req.dataset) : undefined,
  );
  const generation = deps.sampleCache ? await deps.datasetGeneration(req.dataset) : undefined;
  const cache =
    deps.sampleCache && generation !== undefined
      ? { store: deps.sampleCache, scope: cacheScope(req.dataset, generation) }
      : undefined;
  return {
    split,
    job,
    ...(elastic ? { checkpoint: elastic } : {}),
    ...(remainder ? { remainder } : {}),
    ...(resume ? { resume } : {}),
    ...(tensor ? { tensor } : {}),
    fetch: {
      keyspace: req.dataset,
      ids: split.ids,
      firstEpoch: req.firstEpoch,
      endEpoch: req.firstEpoch + req.epochs,
      shardOf: (epoch) =>
        epochShard(
          { ...req, n: split.count, epoch },
          permute,
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
      readAttempts: limits.readAttempts,
      retryBaseMs: limits.retryBaseMs,
      groupReads,
      ...(resume ? { resume } : {}),
      ...(transformer ? { transform: transformer } : {}),
      ...(cache ? { cache } : {}),
    },
    resumeToken: (state: ResumeState) =>
      encodeResumeToken(
        deps.resumeKey,
        {
          job,
          rank: req.rank,
          worldSize: req.worldSize,
          base: resharded(state.epoch) ? elastic!.digest : NO_BASE,
        },
        state,
      ),
  };
}
