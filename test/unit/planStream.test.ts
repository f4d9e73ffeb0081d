import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cacheScope } from '../../src/core/cache/cacheKey.js';
import { SampleCache } from '../../src/core/cache/SampleCache.js';
import { streamLimitsSchema } from '../../src/core/config/streamLimits.js';
import { createLoaderMetrics } from '../../src/core/metrics/loaderMetrics.js';
import type { JobCheckpoint } from '../../src/core/resume/jobCheckpoint.js';
import type { ResumeState } from '../../src/core/resume/resumeToken.js';
import { createPermutationCache } from '../../src/core/sampling/createPermutationCache.js';
import { createRemainderCache } from '../../src/core/sampling/createRemainderCache.js';
import { epochShard } from '../../src/core/sampling/epochShard.js';
import { permutation } from '../../src/core/sampling/permutation.js';
import type { SplitIds } from '../../src/core/splits/SplitIds.js';
import {
  type CheckpointSummary,
  type StreamPlanDeps,
  planStream,
} from '../../src/core/stream/planStream.js';
import type { StreamPlan } from '../../src/core/stream/StreamPlan.js';
import type { StreamRequest } from '../../src/core/stream/StreamRequest.js';
import { permutationKey, remainderKey } from '../../src/core/stream/streamCacheKeys.js';
import type { StreamTransformer } from '../../src/core/transform/StreamTransformer.js';
import type { TransformSpec } from '../../src/core/transform/TransformSpec.js';

const key = randomBytes(32);
const limits = streamLimitsSchema.parse({});

/** A split of `n` distinct ids (`salt` changes their contents, not their number). */
function splitOf(n: number, salt = 0): SplitIds {
  const ids = Buffer.alloc(n * 16);
  for (let i = 0; i < n; i++) {
    ids.writeUInt32BE(i, i * 16);
    ids.writeUInt32BE(salt, i * 16 + 4);
  }
  return { ids, count: n, contentHash: createHash('sha256').update(ids).digest('hex') };
}

const split = splitOf(23);

/** In-memory deps: the split given, a recorded mean-size lookup, fresh caches. */
function depsFor(
  over: Partial<StreamPlanDeps> = {},
): StreamPlanDeps & { sizeLookups: string[]; checkpoints: CheckpointSummary[] } {
  const sizeLookups: string[] = [];
  const checkpoints: CheckpointSummary[] = [];
  return {
    splitIds: () => Promise.resolve(split),
    meanSampleBytes: (dataset) => {
      sizeLookups.push(dataset);
      return Promise.resolve(undefined);
    },
    permutations: createPermutationCache(1 << 20),
    remainders: createRemainderCache(1 << 20),
    datasetGeneration: () => Promise.resolve('generation-1'),
    limits,
    resumeKey: key,
    transformer: () => {
      throw new Error('this request has no transform');
    },
    onCheckpoint: (s) => checkpoints.push(s),
    ...over,
    sizeLookups,
    checkpoints,
  };
}

const request: StreamRequest = {
  dataset: 'd',
  split: 'all',
  batchSize: 4,
  seed: 7n,
  firstEpoch: 0,
  epochs: 3,
  rank: 0,
  worldSize: 2,
  shardRule: 'uneven',
  shuffle: 'uniform',
  dropLast: false,
  ordering: 'out-of-order',
  prefetch: 2,
  adaptivePrefetch: false,
  missing: 'fail',
  resumeToken: Buffer.alloc(0),
};

/** The stored positions of the plan's shard of `epoch`. */
function positions(plan: StreamPlan, epoch: number): number[] {
  const s = plan.fetch.shardOf(epoch);
  return Array.from({ length: s.length }, (_, j) => s.storedPosition(j));
}

/** The stored positions of a rank's shard of `epoch` over the whole split, as epochShard says. */
function ordinaryShard(req: StreamRequest, epoch: number): number[] {
  const s = epochShard({ ...req, n: split.count, epoch }, permutation);
  return Array.from({ length: s.length }, (_, j) => s.storedPosition(j));
}

function at(epoch: number, low: number, deliveredAbove: number[] = []): ResumeState {
  return { epoch, low, deliveredAbove, nextBatchIndex: Math.ceil(low / 4) };
}

describe('planStream', () => {
  it("starts at first_epoch and serves the rank's shard of each epoch's permutation", async () => {
    const plan = await planStream(depsFor(), request);
    expect(plan.resume).toBeUndefined();
    expect(plan.fetch.resume).toBeUndefined();
    expect(plan.fetch).toMatchObject({ firstEpoch: 0, endEpoch: 3, batchSize: 4 });
    expect(plan.fetch.sources).toEqual([{ keyspace: 'd', ids: split.ids }]);
    expect(plan.fetch.sources[0]!.ids).toBe(split.ids);
    expect(plan.mixed).toBe(false);
    for (const epoch of [0, 1, 2])
      expect(positions(plan, epoch)).toEqual(ordinaryShard(request, epoch));
    expect(positions(plan, 1)).not.toEqual(positions(plan, 0));
  });

  it('continues from the position in a token the plan issued', async () => {
    const first = await planStream(depsFor(), request);
    const state = at(1, 6, [8, 11]);
    const again = await planStream(depsFor(), {
      ...request,
      resumeToken: first.resumeToken(state),
    });
    expect(again.resume).toEqual(state);
    expect(again.fetch.resume).toEqual(state);
    expect(again.job.equals(first.job)).toBe(true);
  });

  it("refuses a token of another job, or of the split before its contents changed, with today's words", async () => {
    const token = (await planStream(depsFor(), request)).resumeToken(at(1, 4));
    const message =
      'resume token belongs to another request: a resumed request must repeat dataset and ' +
      'split (or sources, with their weights and repeat, and samples_per_epoch), batch_size, ' +
      'seed, first_epoch, epochs, shard_rule, shuffle, drop_last and transform of the ' +
      "original one (and the splits' contents must not have changed)";
    await expect(
      planStream(depsFor(), { ...request, seed: 8n, resumeToken: token }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message });
    const changed = splitOf(23, 1);
    await expect(
      planStream(depsFor({ splitIds: () => Promise.resolve(changed) }), {
        ...request,
        resumeToken: token,
      }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message });
  });

  it('refuses the token of another rank', async () => {
    const token = (await planStream(depsFor(), request)).resumeToken(at(1, 4));
    await expect(
      planStream(depsFor(), { ...request, rank: 1, resumeToken: token }),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringMatching(
        /^resume token was issued to rank 0 of world size 2, not rank 1/,
      ) as unknown,
    });
  });

  describe('a job checkpoint at another world size', () => {
    /** World 2 delivered these own positions of epoch 1 (rank 0 out of order). */
    const delivered = [
      [0, 1, 2, 4],
      [0, 1, 2, 3, 4, 5, 6],
    ];

    async function checkpoint(): Promise<{ cp: JobCheckpoint; seen: number[] }> {
      const ranks = [];
      const seen: number[] = [];
      for (const rank of [0, 1]) {
        const plan = await planStream(depsFor(), { ...request, rank });
        const own = delivered[rank]!;
        let low = 0;
        while (own.includes(low)) low++;
        const state = at(
          1,
          low,
          own.filter((p) => p > low),
        );
        ranks.push({ rank, epoch: 1, resumeToken: plan.resumeToken(state) });
        const pos = positions(plan, 1);
        seen.push(...own.map((j) => pos[j]!));
      }
      return { cp: { worldSize: 2, ranks }, seen };
    }

    it('re-shards exactly the positions the old world left, then shards whole epochs', async () => {
      const { cp, seen } = await checkpoint();
      const deps = depsFor();
      const plans = await Promise.all(
        [0, 1, 2].map((rank) =>
          planStream(deps, { ...request, rank, worldSize: 3, jobCheckpoint: cp }),
        ),
      );
      const rest = plans.flatMap((p) => positions(p, 1));
      expect([...seen, ...rest].sort((a, b) => a - b)).toEqual(
        Array.from({ length: split.count }, (_, i) => i),
      );
      for (const [rank, plan] of plans.entries()) {
        expect(plan.resume).toEqual({ epoch: 1, low: 0, deliveredAbove: [], nextBatchIndex: 0 });
        expect(plan.checkpoint?.epoch).toBe(1);
        expect(plan.remainder?.length).toBe(split.count - seen.length);
        expect(positions(plan, 2)).toEqual(ordinaryShard({ ...request, rank, worldSize: 3 }, 2));
      }
      expect(deps.checkpoints).toEqual(
        [0, 1, 2].map(() => ({ epoch: 1, worlds: [2], remaining: split.count - seen.length })),
      );
      // The ranks of one job share one remainder, keyed by split and checkpoint.
      expect([...deps.remainders.keys()]).toEqual([
        remainderKey(split.contentHash, plans[0]!.checkpoint!.digest),
      ]);
    });

    it("binds the re-sharded epoch's tokens to the checkpoint, and later epochs' to none", async () => {
      const { cp } = await checkpoint();
      const plain: StreamRequest = { ...request, rank: 2, worldSize: 3 };
      const req: StreamRequest = { ...plain, jobCheckpoint: cp };
      const plan = await planStream(depsFor(), req);
      const inEpoch = plan.resumeToken(at(1, 2));
      expect((await planStream(depsFor(), { ...req, resumeToken: inEpoch })).resume).toEqual(
        at(1, 2),
      );
      await expect(planStream(depsFor(), { ...plain, resumeToken: inEpoch })).rejects.toMatchObject(
        {
          code: 'INVALID_ARGUMENT',
          message:
            'resume token continues an epoch re-sharded from a job checkpoint: repeat the ' +
            'job_checkpoint that stream was started with, unchanged, along with the token',
        },
      );
      const later = plan.resumeToken(at(2, 3));
      expect((await planStream(depsFor(), { ...plain, resumeToken: later })).resume).toEqual(
        at(2, 3),
      );
    });

    it("takes a checkpoint at the end of the request's epochs, refuses one past it", async () => {
      const bare = (epoch: number): JobCheckpoint => ({
        worldSize: 2,
        ranks: [0, 1].map((rank) => ({ rank, epoch, resumeToken: Buffer.alloc(0) })),
      });
      const done = await planStream(depsFor(), {
        ...request,
        worldSize: 3,
        jobCheckpoint: bare(3),
      });
      expect(done.resume).toEqual({ epoch: 3, low: 0, deliveredAbove: [], nextBatchIndex: 0 });
      await expect(
        planStream(depsFor(), { ...request, worldSize: 3, jobCheckpoint: bare(4) }),
      ).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: "job checkpoint is in epoch 4, outside the request's epochs 0 to 2",
      });
    });
  });

  describe('fetch options', () => {
    it('takes prefetch, ordering and missing from the request, in-flight and retries from the limits', async () => {
      const mine = { ...limits, maxInFlightPerStream: 17, readAttempts: 3, retryBaseMs: 9 };
      const plan = await planStream(depsFor({ limits: mine }), {
        ...request,
        ordering: 'in-order',
        missing: 'skip',
      });
      expect(plan.fetch).toMatchObject({
        prefetch: 2,
        ordering: 'in-order',
        missing: 'skip',
        maxInFlight: 17,
        readAttempts: 3,
        retryBaseMs: 9,
      });
      expect(plan.fetch.adaptiveWindowMax).toBeUndefined();
    });

    it('lets the window of a request that left prefetch to the server grow to the in-flight cap', async () => {
      // What validateStreamRequest makes of prefetch 0: the default, marked adaptive.
      const left = { ...request, batchSize: 128, prefetch: limits.defaultPrefetch };
      const plan = await planStream(depsFor(), { ...left, adaptivePrefetch: true });
      expect(plan.fetch.prefetch).toBe(limits.defaultPrefetch);
      // 1,024 reads in flight plus two batches, below 64 x 128 and the 65,536 window limit.
      expect(plan.fetch.adaptiveWindowMax).toBe(1024 + 2 * 128);
      const fixed = await planStream(depsFor(), left);
      expect(fixed.fetch.adaptiveWindowMax).toBeUndefined();
    });

    it("sizes reads in flight by rate x round trip from two batches' reads, within the ceiling", async () => {
      const floorOf = async (batchSize: number, over: Partial<typeof limits> = {}) =>
        (
          await planStream(depsFor({ limits: { ...limits, ...over } }), {
            ...request,
            batchSize,
          })
        ).fetch.inFlightFloor;
      expect(await floorOf(128)).toBe(256);
      expect(await floorOf(4)).toBe(32); // never below the ramp's first reads
      expect(await floorOf(4096)).toBe(1024); // the per-stream ceiling
      expect(await floorOf(128, { maxInFlightPerStream: 100 })).toBe(100);
      // Grouped reads: the floor counts queries, of up to 32 samples each.
      expect(await floorOf(128, { groupReads: 'on', groupReadsSize: 32 })).toBe(32);
      expect(await floorOf(4096, { groupReads: 'on', groupReadsSize: 32 })).toBe(256);
    });

    it('grows an adaptive window to the least of max prefetch, the window limit and the in-flight cap', async () => {
      const grow = async (over: Partial<typeof limits>): Promise<number | undefined> =>
        (
          await planStream(depsFor({ limits: { ...limits, ...over } }), {
            ...request,
            batchSize: 100,
            prefetch: 4,
            adaptivePrefetch: true,
          })
        ).fetch.adaptiveWindowMax;
      expect(
        await grow({ maxPrefetch: 8, maxWindowSamples: 10_000, maxInFlightPerStream: 5000 }),
      ).toBe(800);
      expect(
        await grow({ maxPrefetch: 64, maxWindowSamples: 700, maxInFlightPerStream: 5000 }),
      ).toBe(700);
      expect(
        await grow({ maxPrefetch: 64, maxWindowSamples: 10_000, maxInFlightPerStream: 50 }),
      ).toBe(250);
    });

    it('groups reads by the mean sample size under auto, always under on, never under off', async () => {
      const groupReads = async (
        mode: 'auto' | 'on' | 'off',
        mean: number | undefined,
      ): Promise<[number, number]> => {
        const deps = depsFor({ limits: { ...limits, groupReads: mode } });
        deps.meanSampleBytes = (dataset) => {
          deps.sizeLookups.push(dataset);
          return Promise.resolve(mean);
        };
        const plan = await planStream(deps, request);
        return [plan.fetch.groupReads, deps.sizeLookups.length];
      };
      expect(await groupReads('auto', 1000)).toEqual([limits.groupReadsSize, 1]);
      expect(await groupReads('auto', limits.groupReadsMaxBytes)).toEqual([
        limits.groupReadsSize,
        1,
      ]);
      expect(await groupReads('auto', limits.groupReadsMaxBytes + 1)).toEqual([1, 1]);
      expect(await groupReads('auto', undefined)).toEqual([1, 1]);
      // Asked whatever the mode: the mean is also the byte bound's estimate of a read.
      expect(await groupReads('on', 1 << 20)).toEqual([limits.groupReadsSize, 1]);
      expect(await groupReads('off', 10)).toEqual([1, 1]);
    });
  });

  it("keys the sample cache by the dataset's generation, asked only when there is a cache", async () => {
    const asked: string[] = [];
    const datasetGeneration = (dataset: string): Promise<string | undefined> => {
      asked.push(dataset);
      return Promise.resolve(`g-${asked.length}`);
    };
    const none = await planStream(depsFor({ datasetGeneration }), request);
    expect(none.fetch.cache).toBeUndefined();
    expect(asked).toEqual([]);
    const store = SampleCache.open(
      { cacheMemoryBytes: 1 << 20, cacheDiskBytes: 0 },
      createLoaderMetrics(),
      () => undefined,
    )!;
    const first = await planStream(depsFor({ datasetGeneration, sampleCache: store }), request);
    const second = await planStream(depsFor({ datasetGeneration, sampleCache: store }), request);
    expect(first.fetch.cache?.store).toBe(store);
    expect(first.fetch.cache?.scopes).toEqual([cacheScope('d', 'g-1')]);
    expect(second.fetch.cache?.scopes).toEqual([cacheScope('d', 'g-2')]);
    // No generation (no info row): the stream reads the database, uncached.
    const unknown = await planStream(
      depsFor({ datasetGeneration: () => Promise.resolve(undefined), sampleCache: store }),
      request,
    );
    expect(unknown.fetch.cache).toBeUndefined();
  });

  it('shares one permutation per split and epoch among the ranks of a process', async () => {
    const deps = depsFor();
    for (const rank of [0, 1]) positions(await planStream(deps, { ...request, rank }), 0);
    expect([...deps.permutations.keys()]).toEqual([
      permutationKey(split.contentHash, { n: split.count, seed: 7n, epoch: 0 }),
    ]);
    const other = splitOf(23, 2);
    positions(await planStream({ ...deps, splitIds: () => Promise.resolve(other) }, request), 0);
    expect(deps.permutations.size).toBe(2);
  });

  it("makes the stream's transformer and binds its tokens to the transform", async () => {
    const spec: TransformSpec = {
      channels: 3,
      resize: 0,
      crop: { kind: 'center', height: 8, width: 6 },
      flipProbability: 0,
      interpolation: 'bilinear',
      output: { format: 'raw' },
      badImage: 'fail',
    };
    const made: unknown[] = [];
    const transformer = { spec } as unknown as StreamTransformer;
    const deps = depsFor({
      transformer: (s, seed) => {
        made.push([s, seed]);
        return transformer;
      },
    });
    const plan = await planStream(deps, { ...request, transform: spec });
    expect(made).toEqual([[spec, 7n]]);
    expect(plan.fetch.transform).toBe(transformer);
    expect(plan.tensor).toEqual([8, 6, 3]);
    const plain = await planStream(depsFor(), request);
    expect(plain.tensor).toBeUndefined();
    await expect(
      planStream(depsFor(), { ...request, resumeToken: plan.resumeToken(at(0, 4)) }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});
