import { describe, expect, it } from 'vitest';
import { identityPermutation, permutation } from '../../src/core/sampling/permutation.js';
import { RandomStream } from '../../src/core/sampling/randomStream.js';
import { batchCount, shard, type ShardRule } from '../../src/core/sampling/shard.js';
import { epochShard } from '../../src/core/sampling/epochShard.js';

const positions = (n: number, rank: number, w: number, rule: ShardRule): number[] => {
  const s = shard(n, rank, w, rule);
  return Array.from({ length: s.length }, (_, j) => s.at(j));
};

describe('permutation', () => {
  it('is a permutation of 0..n-1', () => {
    for (const n of [0, 1, 2, 17, 1000]) {
      const p = [...permutation(n, 42, 0)].sort((a, b) => a - b);
      expect(p).toEqual([...identityPermutation(n)]);
    }
  });

  it('is deterministic for (seed, epoch) and differs across epochs and seeds', () => {
    expect(permutation(1000, 7, 3)).toEqual(permutation(1000, 7, 3));
    expect(permutation(1000, 7, 3)).not.toEqual(permutation(1000, 7, 4));
    expect(permutation(1000, 7, 3)).not.toEqual(permutation(1000, 8, 3));
    expect(permutation(1000, 2n ** 63n - 1n, 0)).not.toEqual(permutation(1000, 2n ** 63n - 2n, 0));
  });

  it('pins epoch 5 of seed 1 (changing the algorithm breaks resume across versions)', () => {
    expect(permutation(10, 1, 5).join(',')).toMatchInlineSnapshot(`"8,3,1,9,6,2,5,0,4,7"`);
  });

  it('makes every permutation of 4 items equally likely (chi-square)', () => {
    const counts = new Map<string, number>();
    const trials = 24_000;
    for (let s = 0; s < trials; s++) {
      const key = permutation(4, s, 0).join('');
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    expect(counts.size).toBe(24);
    const expected = trials / 24;
    const chi2 = [...counts.values()].reduce((acc, c) => acc + (c - expected) ** 2 / expected, 0);
    // 23 degrees of freedom: P(chi2 > 49.7) = 0.001. A biased shuffle lands far above.
    expect(chi2).toBeLessThan(49.7);
  });

  it('RandomStream.below is uniform and in range for awkward bounds', () => {
    const rng = new RandomStream('t');
    const bound = 3;
    const counts = [0, 0, 0];
    for (let i = 0; i < 30_000; i++) counts[rng.below(bound)]!++;
    for (const c of counts) expect(Math.abs(c - 10_000)).toBeLessThan(500);
    for (const b of [1, 2, 2 ** 31 + 1, 2 ** 32]) {
      for (let i = 0; i < 100; i++) {
        const x = rng.below(b);
        expect(x >= 0 && x < b && Number.isInteger(x)).toBe(true);
      }
    }
  });
});

describe('epochShard', () => {
  it('shuffle none walks the stored order; drop_last trims the shard', () => {
    const spec = {
      n: 10,
      seed: 1n,
      epoch: 3,
      rank: 1,
      worldSize: 3,
      shardRule: 'uneven' as const,
      shuffle: 'none' as const,
      batchSize: 2,
      dropLast: true,
    };
    const s = epochShard(spec);
    expect(s.length).toBe(2);
    expect([0, 1].map((j) => s.storedPosition(j))).toEqual([1, 4]);
    const shuffled = epochShard({ ...spec, shuffle: 'uniform', dropLast: false });
    const perm = permutation(10, 1n, 3);
    expect([0, 1, 2].map((j) => shuffled.storedPosition(j))).toEqual([perm[1], perm[4], perm[7]]);
  });
});

describe('shard', () => {
  it('uneven: disjoint, covering, first N mod W ranks get one more', () => {
    const n = 10;
    const w = 4;
    const all = [0, 1, 2, 3].map((r) => positions(n, r, w, 'uneven'));
    expect(all.map((a) => a.length)).toEqual([3, 3, 2, 2]);
    expect(all.flat().sort((a, b) => a - b)).toEqual([...identityPermutation(n)]);
  });

  it('pad: every rank gets ceil(N/W); exactly the first W - N mod W positions repeat', () => {
    const all = [0, 1, 2, 3].map((r) => positions(10, r, 4, 'pad'));
    expect(all.map((a) => a.length)).toEqual([3, 3, 3, 3]);
    const flat = all.flat().sort((a, b) => a - b);
    expect(flat).toEqual([0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('drop: every rank gets floor(N/W); exactly the last N mod W positions are left out', () => {
    const all = [0, 1, 2, 3].map((r) => positions(10, r, 4, 'drop'));
    expect(all.map((a) => a.length)).toEqual([2, 2, 2, 2]);
    expect(all.flat().sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('handles more ranks than samples and rejects bad rank/world size', () => {
    expect([0, 1, 2].map((r) => positions(2, r, 3, 'uneven').length)).toEqual([1, 1, 0]);
    expect([0, 1, 2].map((r) => positions(2, r, 3, 'pad'))).toEqual([[0], [1], [0]]);
    expect(positions(2, 2, 3, 'drop')).toEqual([]);
    expect(() => shard(10, 2, 2, 'uneven')).toThrow(/rank must be in \[0, 1\]/);
    expect(() => shard(10, 0, 0, 'uneven')).toThrow(/world size must be at least 1/);
  });

  it('batchCount drops only the final partial batch when asked', () => {
    expect(batchCount(10, 4, false)).toBe(3);
    expect(batchCount(10, 4, true)).toBe(2);
    expect(batchCount(8, 4, true)).toBe(2);
  });
});
