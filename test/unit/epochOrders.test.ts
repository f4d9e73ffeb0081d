import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { streamLimitsSchema } from '../../src/core/config/streamLimits.js';
import type { AssembledBatch } from '../../src/core/fetch/AssembledBatch.js';
import { Offloader } from '../../src/core/offload/Offloader.js';
import { createPermutationCache } from '../../src/core/sampling/createPermutationCache.js';
import { createRemainderCache } from '../../src/core/sampling/createRemainderCache.js';
import { epochShard } from '../../src/core/sampling/epochShard.js';
import { permutation } from '../../src/core/sampling/permutation.js';
import type { SplitIds } from '../../src/core/splits/SplitIds.js';
import { type StreamPlanDeps, planStream } from '../../src/core/stream/planStream.js';
import type { StreamPlan } from '../../src/core/stream/StreamPlan.js';
import type { StreamRequest } from '../../src/core/stream/StreamRequest.js';

/** A split of `n` distinct ids. */
function splitOf(n: number): SplitIds {
  const ids = Buffer.alloc(n * 16);
  for (let i = 0; i < n; i++) ids.writeUInt32BE(i, i * 16);
  return { ids, count: n, contentHash: createHash('sha256').update(ids).digest('hex') };
}

const split = splitOf(23);

// Every order on a thread, however small, so the tests see where each one was made.
const pool = new Offloader({ maxThreads: 1, inlineBelow: 0 });
afterAll(() => pool.close());

function depsFor(over: Partial<StreamPlanDeps> = {}): StreamPlanDeps {
  return {
    splitIds: () => Promise.resolve(split),
    meanSampleBytes: () => Promise.resolve(undefined),
    permutations: createPermutationCache(1 << 20, 30_000, undefined, pool),
    remainders: createRemainderCache(1 << 20, 30_000, undefined, pool),
    datasetGeneration: () => Promise.resolve(undefined),
    limits: streamLimitsSchema.parse({}),
    resumeKey: Buffer.alloc(32, 1),
    transformer: () => {
      throw new Error('no transform');
    },
    ...over,
  };
}

const request: StreamRequest = {
  dataset: 'd',
  split: 'all',
  batchSize: 4,
  seed: 7n,
  firstEpoch: 0,
  epochs: 3,
  rank: 1,
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

const batch = (epoch: number, lastInEpoch: boolean): AssembledBatch => ({
  epoch,
  index: 0,
  samples: [],
  skippedMissing: 0,
  skippedUndecodable: 0,
  lastInEpoch,
  resume: { epoch, low: 0, deliveredAbove: [], nextBatchIndex: 0 },
  firstArrivalAt: 0,
});

/**
 * What the fetch engine does: starts each epoch (asking `shardOf` synchronously) when asked
 * for a batch after the last one of the epoch before, and records each epoch's positions.
 */
async function* engine(
  plan: StreamPlan,
  seen: number[][],
  batches = 2,
): AsyncGenerator<AssembledBatch> {
  for (let epoch = plan.fetch.firstEpoch; epoch < plan.fetch.endEpoch; epoch++) {
    const s = plan.fetch.shardOf(epoch);
    seen.push(Array.from({ length: s.length }, (_, j) => s.storedPosition(j)));
    for (let b = 0; b < batches; b++) yield batch(epoch, b === batches - 1);
  }
}

const shardOf = (req: StreamRequest, epoch: number): number[] => {
  const s = epochShard({ ...req, n: split.count, epoch }, permutation);
  return Array.from({ length: s.length }, (_, j) => s.storedPosition(j));
};

describe('epoch orders made ahead', () => {
  it('makes every epoch order off the event loop before the engine starts the epoch', async () => {
    const deps = depsFor();
    const memo = vi.spyOn(deps.permutations, 'memo');
    const before = pool.figures.offloaded;
    const plan = await planStream(deps, request);
    // The first epoch's order is made while planning.
    expect(pool.figures.offloaded - before).toBe(1);
    const seen: number[][] = [];
    for await (const b of plan.readyAhead(engine(plan, seen))) void b;
    expect(seen).toEqual([0, 1, 2].map((e) => shardOf(request, e)));
    // All three were made on the thread and found made when the engine asked: none inline.
    expect(pool.figures.offloaded - before).toBe(3);
    expect(memo).not.toHaveBeenCalled();
  });

  it('makes no order for epochs in which the rank has no positions', async () => {
    const deps = depsFor();
    const empty = { ...request, worldSize: 30, shardRule: 'drop' as const }; // 23 / 30 rounds to 0
    const plan = await planStream(deps, empty);
    const seen: number[][] = [];
    for await (const b of plan.readyAhead(engine(plan, seen))) void b;
    expect(seen).toEqual([[], [], []]);
    expect(deps.permutations.size).toBe(0);
  });

  it('stops waiting for a split when the call is cancelled', async () => {
    const reason = new Error('call cancelled');
    const calls = new AbortController();
    let loadSignal: AbortSignal | undefined;
    const deps = depsFor({
      splitIds: (_dataset, _split, signal) =>
        new Promise<SplitIds>((_resolve, reject) => {
          loadSignal = signal;
          signal?.addEventListener('abort', () => reject(signal.reason as Error));
        }),
    });
    const planned = planStream(deps, request, calls.signal);
    calls.abort(reason);
    await expect(planned).rejects.toBe(reason);
    expect(loadSignal?.aborted).toBe(true);
  });

  it('leaves a next epoch order that a cancelled stream was waiting for', async () => {
    const calls = new AbortController();
    const deps = depsFor();
    const plan = await planStream(deps, request, calls.signal);
    // The one thread is busy, so epoch 1's order waits in line when epoch 0 ends.
    const busy = new AbortController();
    const hog = pool.run('permutation', { n: 10_000_000, seed: 1n, epoch: 0 }, busy.signal);
    hog.catch(() => undefined);
    const seen: number[][] = [];
    const batches = plan.readyAhead(engine(plan, seen));
    expect((await batches.next()).value).toMatchObject({ epoch: 0, lastInEpoch: false });
    expect((await batches.next()).value).toMatchObject({ epoch: 0, lastInEpoch: true });
    const next = batches.next();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(deps.permutations.computing).toBe(1);
    const reason = new Error('call cancelled');
    calls.abort(reason);
    await expect(next).rejects.toBe(reason);
    expect(deps.permutations.computing).toBe(0);
    // The engine never started epoch 1.
    expect(seen).toHaveLength(1);
    busy.abort();
    await expect(hog).rejects.toMatchObject({ name: 'AbortError' });
  });
});
