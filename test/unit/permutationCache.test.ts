import { afterEach, describe, expect, it, vi } from 'vitest';
import { createPermutationCache } from '../../src/core/sampling/createPermutationCache.js';
import { permutation } from '../../src/core/sampling/permutation.js';

describe('createPermutationCache', () => {
  it('computes a permutation once per key and returns the cached one after', () => {
    const cache = createPermutationCache(4000);
    const first = cache.memo('s/100/7/0', { context: { n: 100, seed: 7n, epoch: 0 } });
    expect(first).toEqual(permutation(100, 7n, 0));
    expect(cache.memo('s/100/7/0', { context: { n: 100, seed: 7n, epoch: 0 } })).toBe(first);
    const next = cache.memo('s/100/7/1', { context: { n: 100, seed: 7n, epoch: 1 } });
    expect(next).toEqual(permutation(100, 7n, 1));
    expect(next).not.toEqual(first);
  });

  it('keeps the most recently used permutations within its bound in bytes', () => {
    const cache = createPermutationCache(1000); // two permutations of 100 (400 bytes each)
    const memo = (epoch: number) =>
      cache.memo(`s/100/1/${epoch}`, { context: { n: 100, seed: 1n, epoch } });
    const e0 = memo(0);
    memo(1);
    expect(memo(0)).toBe(e0); // epoch 0 is now the most recently used
    memo(2); // epoch 1 goes
    expect(cache.calculatedSize).toBe(800);
    expect(cache.has('s/100/1/1')).toBe(false);
    expect(memo(0)).toBe(e0);
  });

  it('returns a permutation larger than its bound without caching it or evicting others', () => {
    const cache = createPermutationCache(1000);
    cache.memo('small', { context: { n: 10, seed: 1n, epoch: 0 } });
    const big = cache.memo('big', { context: { n: 1000, seed: 1n, epoch: 0 } });
    expect(big).toEqual(permutation(1000, 1n, 0));
    expect(cache.has('big')).toBe(false);
    expect(cache.has('small')).toBe(true);
  });

  it('caches the permutation of an empty split', () => {
    const cache = createPermutationCache(1000);
    expect(cache.memo('empty', { context: { n: 0, seed: 1n, epoch: 0 } })).toHaveLength(0);
    expect(cache.has('empty')).toBe(true);
  });

  describe('lingering', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('drops a permutation nobody asked for within the linger, by itself (no look up needed)', () => {
      vi.useFakeTimers();
      const cache = createPermutationCache(1 << 20, 30_000, () => Date.now());
      const memo = (epoch: number) =>
        cache.memo(`s/100/1/${epoch}`, { context: { n: 100, seed: 1n, epoch } });
      const e0 = memo(0);
      vi.advanceTimersByTime(20_000);
      // Another rank asks: the same array, and its linger starts again.
      expect(memo(0)).toBe(e0);
      memo(1);
      vi.advanceTimersByTime(20_000);
      expect(cache.size).toBe(2);
      vi.advanceTimersByTime(11_000);
      // Finished epochs no longer add up: both are gone, and their bytes with them.
      expect(cache.size).toBe(0);
      expect(cache.calculatedSize).toBe(0);
      // Asked again (a late resume), it is computed again, equal to the first.
      expect(memo(0)).not.toBe(e0);
      expect(memo(0)).toEqual(e0);
    });
  });
});
