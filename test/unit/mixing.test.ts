import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { streamLimitsSchema } from '../../src/core/config/streamLimits.js';
import { LoaderError } from '../../src/core/errors/LoaderError.js';
import { mixQuotas } from '../../src/core/mixing/mixQuotas.js';
import { mixSchedule } from '../../src/core/mixing/mixSchedule.js';
import { type MixedPart, mixedEpoch, sourceSeed } from '../../src/core/mixing/mixedEpoch.js';
import { planMixture } from '../../src/core/mixing/planMixture.js';
import { validateMix } from '../../src/core/mixing/validateMix.js';
import { createPermutationCache } from '../../src/core/sampling/createPermutationCache.js';
import { createRemainderCache } from '../../src/core/sampling/createRemainderCache.js';
import { permutation } from '../../src/core/sampling/permutation.js';
import { RandomStream } from '../../src/core/sampling/randomStream.js';
import type { SplitIds } from '../../src/core/splits/SplitIds.js';
import { type StreamPlanDeps, planStream } from '../../src/core/stream/planStream.js';
import type { StreamPlan } from '../../src/core/stream/StreamPlan.js';
import type { StreamRequest } from '../../src/core/stream/StreamRequest.js';

function splitOf(n: number, salt: number): SplitIds {
  const ids = Buffer.alloc(n * 16);
  for (let i = 0; i < n; i++) {
    ids.writeUInt32BE(i, i * 16);
    ids.writeUInt32BE(salt, i * 16 + 4);
  }
  return { ids, count: n, contentHash: createHash('sha256').update(ids).digest('hex') };
}

/** Three sources, 5:3:2 over an epoch of 10,000: a, sub-sampled; b, small and repeated; c, sub-sampled. */
const three = {
  sources: [
    { dataset: 'a', split: 'all', weight: 5, repeat: false },
    { dataset: 'b', split: 'all', weight: 3, repeat: true },
    { dataset: 'c', split: 'all', weight: 2, repeat: false },
  ],
  samplesPerEpoch: 10_000,
};
const threeSplits = [splitOf(6_000, 1), splitOf(1_300, 2), splitOf(9_000, 3)];
const offsets = [0, 6_000, 7_300];

function plan3(seed = 11n, shuffle: 'uniform' | 'none' = 'uniform') {
  return planMixture(three, threeSplits, seed, shuffle, createPermutationCache(1 << 26), {
    maxMixedEpoch: 1_000_000,
  });
}

/** (source, index in the source's split) of each position of a mixed epoch. */
function decode(sequence: Uint32Array): { source: number; local: number }[] {
  return Array.from(sequence, (g) => {
    const source = g >= offsets[2]! ? 2 : g >= offsets[1]! ? 1 : 0;
    return { source, local: g - offsets[source]! };
  });
}

describe('mixed epochs', () => {
  it('hold 5:3:2 within 2% in every window of 1,000 positions, not only on average', () => {
    const p = plan3();
    expect(p.quotas).toEqual([5_000, 3_000, 2_000]);
    for (const epoch of [0, 1, 7]) {
      const sources = decode(p.sequence(epoch)).map((d) => d.source);
      expect(sources).toHaveLength(10_000);
      // Prefix counts per source, then every window [i, i + 1000).
      const prefix = [0, 1, 2].map(() => new Int32Array(sources.length + 1));
      sources.forEach((s, i) => {
        for (const k of [0, 1, 2]) prefix[k]![i + 1] = prefix[k]![i]! + (s === k ? 1 : 0);
      });
      let worst = 0;
      for (let i = 0; i + 1_000 <= sources.length; i++) {
        [0.5, 0.3, 0.2].forEach((w, k) => {
          const share = (prefix[k]![i + 1_000]! - prefix[k]![i]!) / 1_000;
          worst = Math.max(worst, Math.abs(share - w));
        });
      }
      expect(worst).toBeLessThanOrEqual(0.02);
      // Tighter than coin flips could be (their sd alone is 1.6% for 0.5 over 1,000).
      expect(worst).toBeLessThanOrEqual(0.005);
    }
  });

  it('delivers each sample of a repeated small source once per pass, a fresh order each pass', () => {
    const draws = decode(plan3().sequence(2))
      .filter((d) => d.source === 1)
      .map((d) => d.local);
    expect(draws).toHaveLength(3_000);
    const passes = [draws.slice(0, 1_300), draws.slice(1_300, 2_600), draws.slice(2_600)];
    expect(new Set(passes[0]).size).toBe(1_300);
    expect(new Set(passes[1]).size).toBe(1_300);
    expect(new Set(passes[2]).size).toBe(400); // the last pass, cut short: no repeats in it
    expect(passes[1]).not.toEqual(passes[0]);
  });

  it('never repeats a sample of a sub-sampled source within an epoch, and covers it in each pass', () => {
    const p = plan3();
    // Source c: 2,000 of 9,000 per epoch, so a pass is 5 epochs: the fifth takes the last
    // 1,000 of the permutation and tops up with its first 1,000.
    for (const pass of [0, 1]) {
      const seen = new Map<number, number>();
      for (let epoch = 5 * pass; epoch < 5 * pass + 5; epoch++) {
        const draws = decode(p.sequence(epoch))
          .filter((d) => d.source === 2)
          .map((d) => d.local);
        expect(new Set(draws).size).toBe(2_000);
        for (const d of draws) seen.set(d, (seen.get(d) ?? 0) + 1);
      }
      expect(seen.size).toBe(9_000);
      expect([...seen.values()].filter((c) => c === 2)).toHaveLength(1_000);
      expect(Math.max(...seen.values())).toBe(2);
    }
  });

  it('covers a source whose size is just under twice its quota in every two epochs', () => {
    // 1,999 samples, 1,000 a epoch: a fresh half each epoch would leave some out for long.
    const parts: MixedPart[] = [{ size: 1_999, quota: 1_000, offset: 0, seed: 5n }];
    for (const pass of [0, 3]) {
      const twoEpochs = [2 * pass, 2 * pass + 1].map((epoch) =>
        Array.from(
          mixedEpoch(parts, mixSchedule([1_000], 5n, epoch), epoch, (part, p) =>
            permutation(part.size, part.seed, p),
          ),
        ),
      );
      for (const e of twoEpochs) expect(new Set(e).size).toBe(1_000);
      expect(new Set(twoEpochs.flat()).size).toBe(1_999);
    }
  });

  it('holds odd weights in every window too, and places draws as a naive earliest-due merge', () => {
    const quotas = [7_001, 2_999, 977, 13];
    const schedule = mixSchedule(quotas, 99n, 4);
    const total = quotas.reduce((a, q) => a + q, 0);
    // The same schedule by scanning every source for the earliest due draw (ties: lower index).
    const phases = (() => {
      const rng = new RandomStream('scylla-loader/mix-schedule/v1', 99n, 4, quotas.join(','));
      return quotas.map(() => rng.nextUint32() / 2 ** 32);
    })();
    const drawn = quotas.map(() => 0);
    const naive: number[] = [];
    for (let p = 0; p < total; p++) {
      let best = -1;
      for (let s = 0; s < quotas.length; s++) {
        if (drawn[s]! >= quotas[s]!) continue;
        const due = (drawn[s]! + phases[s]!) / quotas[s]!;
        if (best < 0 || due < (drawn[best]! + phases[best]!) / quotas[best]!) best = s;
      }
      naive.push(best);
      drawn[best]!++;
    }
    expect(Array.from(schedule)).toEqual(naive);
    // Every window of 1,000: each source within 3 samples of its share.
    const prefix = quotas.map(() => new Int32Array(total + 1));
    schedule.forEach((s, i) => {
      quotas.forEach((_, k) => (prefix[k]![i + 1] = prefix[k]![i]! + (s === k ? 1 : 0)));
    });
    for (let i = 0; i + 1_000 <= total; i += 7) {
      quotas.forEach((q, k) => {
        const got = prefix[k]![i + 1_000]! - prefix[k]![i]!;
        expect(Math.abs(got - (1_000 * q) / total)).toBeLessThanOrEqual(3);
      });
    }
  });

  it('is a pure function of sources, weights, seed and epoch', () => {
    expect(plan3(11n).sequence(3)).toEqual(plan3(11n).sequence(3));
    expect(plan3(11n).sequence(3)).not.toEqual(plan3(12n).sequence(3));
    expect(plan3(11n).sequence(3)).not.toEqual(plan3(11n).sequence(4));
    // Unshuffled: each source in stored order (slices for sub-sampled ones), still mixed.
    const plain = decode(plan3(11n, 'none').sequence(0));
    expect(plain.filter((d) => d.source === 0).map((d) => d.local)).toEqual(
      Array.from({ length: 5_000 }, (_, i) => i),
    );
  });

  it('uses the order each source would have alone, from the source seed', () => {
    const parts: MixedPart[] = [{ size: 50, quota: 50, offset: 0, seed: sourceSeed(3n, 0) }];
    const got = mixedEpoch(parts, mixSchedule([50], 3n, 0), 0, (part, pass) =>
      permutation(part.size, part.seed, pass),
    );
    expect(Array.from(got)).toEqual(Array.from(permutation(50, sourceSeed(3n, 0), 0)));
  });
});

describe('mixQuotas', () => {
  const src = (size: number, weight: number, repeat = false) => ({
    dataset: 'd',
    split: 'all',
    size,
    weight,
    repeat,
  });

  it('by default, runs until the source with the largest weight per sample is used once', () => {
    // Weight per sample: 1/1000 against 1/5000: the first is used up first.
    expect(mixQuotas([src(1_000, 1), src(5_000, 1)], 0)).toEqual([1_000, 1_000]);
    expect(mixQuotas([src(9_000, 1), src(1_000, 3)], 0)).toEqual([333, 1_000]);
  });

  it('apportions samples_per_epoch by largest remainder', () => {
    expect(mixQuotas([src(10, 1, true), src(10, 1, true), src(10, 1, true)], 10)).toEqual([
      4, 3, 3,
    ]);
  });

  it('refuses a share larger than its source without repeat, naming the source', () => {
    const err = (() => {
      try {
        mixQuotas([src(100, 1), { ...src(10, 1), dataset: 'small', split: 'x/train' }], 100);
      } catch (e) {
        return e as LoaderError;
      }
      return undefined;
    })();
    expect(err?.code).toBe('INVALID_ARGUMENT');
    expect(err?.message).toContain('source 1 (dataset "small", split "x/train")');
    expect(err?.message).toContain('set repeat on it');
    expect(() => mixQuotas([src(0, 1)], 0)).toThrow(/source 0 .* has no samples/);
    // A share that rounds to nothing: the source would never be seen.
    expect(() => mixQuotas([src(1_000, 1), src(1_000, 1_000)], 100)).toThrow(
      /source 0 .* would fill no position of the mixed epoch .*raise its weight or samples_per_epoch/,
    );
    // Weights near the largest number: their ratios still count.
    expect(mixQuotas([src(100, 1e300, true), src(100, 1e300, true)], 10)).toEqual([5, 5]);
    // A tiny source with a huge share would take a permutation per pass: bounded.
    expect(() => mixQuotas([src(1, 1, true), src(1_000, 1, true)], 30_000)).toThrow(
      /source 0 .* would be read 15000 times in one mixed epoch \(at most 10000\)/,
    );
  });
});

describe('validateMix', () => {
  it('names the offending source', () => {
    const base = { dataset: 'a', split: 'all', weight: 1 };
    expect(() =>
      validateMix({ sources: [base, { ...base, weight: 0 }], samplesPerEpoch: 0 }),
    ).toThrow(/source 1 \(dataset "a", split "all"\): weight 0 must be a finite number above 0/);
    expect(() =>
      validateMix({ sources: [base, { ...base, dataset: 'Bad-Name' }], samplesPerEpoch: 0 }),
    ).toThrow(/source 1 .*invalid dataset name/);
    expect(() => validateMix({ sources: [{ ...base, split: ' ' }], samplesPerEpoch: 0 })).toThrow(
      /source 0 .*split is required/,
    );
    expect(() => validateMix({ sources: [], samplesPerEpoch: 0 })).toThrow(/at least one source/);
    expect(() =>
      validateMix({
        sources: [base, { ...base, weight: 2 }, { ...base, dataset: 'b' }],
        samplesPerEpoch: 0,
      }),
    ).toThrow(/source 1 .* repeats source 0: name it once, with the weights added/);
    expect(() =>
      validateMix({
        sources: [
          { ...base, weight: 1.7e308 },
          { ...base, dataset: 'b', weight: 1.7e308 },
        ],
        samplesPerEpoch: 0,
      }),
    ).toThrow(/the weights add up to more than a number can hold/);
    expect(() => validateMix({ sources: [base], samplesPerEpoch: 1.5 })).toThrow(
      /samples_per_epoch 1.5 is out of range/,
    );
    expect(validateMix({ sources: [base], samplesPerEpoch: 0 }).sources[0]!.repeat).toBe(false);
  });
});

describe('planStream with a mixture', () => {
  const splits: Record<string, SplitIds> = {
    a: threeSplits[0]!,
    b: threeSplits[1]!,
    c: threeSplits[2]!,
  };
  const deps = (): StreamPlanDeps => ({
    splitIds: (dataset) =>
      splits[dataset]
        ? Promise.resolve(splits[dataset])
        : Promise.reject(new LoaderError('NOT_FOUND', `dataset ${dataset} does not exist`)),
    meanSampleBytes: () => Promise.resolve(100),
    permutations: createPermutationCache(1 << 26),
    remainders: createRemainderCache(1 << 20),
    datasetGeneration: () => Promise.resolve('g'),
    limits: streamLimitsSchema.parse({}),
    resumeKey: randomBytes(32),
    transformer: () => {
      throw new Error('no transform');
    },
  });
  const request: StreamRequest = {
    dataset: '',
    split: '',
    mix: three,
    batchSize: 32,
    seed: 11n,
    firstEpoch: 0,
    epochs: 2,
    rank: 0,
    worldSize: 4,
    shardRule: 'uneven',
    shuffle: 'uniform',
    dropLast: false,
    ordering: 'out-of-order',
    prefetch: 2,
    adaptivePrefetch: false,
    missing: 'fail',
    resumeToken: Buffer.alloc(0),
  };
  const positions = (plan: StreamPlan, epoch: number): number[] => {
    const s = plan.fetch.shardOf(epoch);
    return Array.from({ length: s.length }, (_, j) => s.storedPosition(j));
  };

  it('shards the mixed sequence among ranks exactly as a split', async () => {
    const d = deps();
    const plans = await Promise.all(
      [0, 1, 2, 3].map((rank) => planStream(d, { ...request, rank })),
    );
    expect(plans[0]!.mixed).toBe(true);
    expect(plans[0]!.positions).toBe(10_000);
    expect(plans[0]!.sources.map((s) => s.quota)).toEqual([5_000, 3_000, 2_000]);
    expect(plans[0]!.fetch.sources.map((s) => s.keyspace)).toEqual(['a', 'b', 'c']);
    const sequence = Array.from(plan3().sequence(1));
    const together = plans.flatMap((p) => positions(p, 1)).sort((x, y) => x - y);
    expect(together).toEqual([...sequence].sort((x, y) => x - y));
    // Rank r takes every 4th position from r, as DistributedSampler does.
    expect(positions(plans[2]!, 1).slice(0, 3)).toEqual([sequence[2], sequence[6], sequence[10]]);
  });

  it('refuses an epoch over the server limit before making its sequence', async () => {
    const d = { ...deps(), limits: streamLimitsSchema.parse({ maxMixedEpoch: 9_999 }) };
    await expect(planStream(d, request)).rejects.toThrow(
      /a mixed epoch of 10000 positions is over the server's limit of 9999, set by maxMixedEpoch; set a smaller samples_per_epoch/,
    );
    // The caller names the setting: serve by its flag and variable.
    const named = { ...d, settingNames: { maxMixedEpoch: 'SCYLLA_LOADER_MAX_MIXED_EPOCH' } };
    await expect(planStream(named, request)).rejects.toThrow(
      /over the server's limit of 9999, set by SCYLLA_LOADER_MAX_MIXED_EPOCH;/,
    );
  });

  it('binds tokens to the mixture: other weights, or a single source, refuse them', async () => {
    const d = deps();
    const plan = await planStream(d, request);
    const token = plan.resumeToken({ epoch: 0, low: 64, deliveredAbove: [], nextBatchIndex: 2 });
    const again = await planStream(d, { ...request, resumeToken: token });
    expect(again.resume?.low).toBe(64);
    const heavier = {
      ...three,
      sources: three.sources.map((s, i) => (i === 0 ? { ...s, weight: 6 } : s)),
    };
    await expect(planStream(d, { ...request, mix: heavier, resumeToken: token })).rejects.toThrow(
      /belongs to another request: .*or sources, with their weights/,
    );
    await expect(
      planStream(d, { ...request, mix: undefined, dataset: 'a', split: 'all', resumeToken: token }),
    ).rejects.toThrow(/belongs to another request: .*or sources, with their weights/);
  });

  it('names the source whose split does not exist', async () => {
    const missing = {
      ...three,
      sources: [...three.sources, { dataset: 'nope', split: 'all', weight: 1, repeat: false }],
    };
    await expect(planStream(deps(), { ...request, mix: missing })).rejects.toThrow(
      /source 3 \(dataset "nope", split "all"\): dataset nope does not exist/,
    );
  });
});
