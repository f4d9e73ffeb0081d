import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { LoaderError } from '../../src/core/errors/LoaderError.js';
import type { SplitIds } from '../../src/core/splits/SplitIds.js';
import { createSplitIdsCache } from '../../src/core/splits/createSplitIdsCache.js';

/** A split of `count` ids, all bytes `fill`, so tests can tell splits apart. */
const split = (count: number, fill = 0): SplitIds => ({
  ids: Buffer.alloc(count * 16, fill),
  count,
  contentHash: `fill-${fill}`,
});

/** A loader that counts its calls, as `resolveSplit` passes one with every look up. */
const counting = (count: number, fill = 0) => {
  const loader = async (): Promise<SplitIds> => {
    loader.calls++;
    return split(count, fill);
  };
  loader.calls = 0;
  return loader;
};

describe('createSplitIdsCache', () => {
  it('keeps the most recently used splits within its bound in bytes of ids', async () => {
    const cache = createSplitIdsCache(100 * 16);
    const a = counting(40, 1);
    const b = counting(40, 2);
    const c = counting(40, 3);
    await cache.forceFetch('a', { context: a });
    await cache.forceFetch('b', { context: b });
    await cache.forceFetch('a', { context: a }); // a is now the most recently used
    await cache.forceFetch('c', { context: c }); // 120 samples do not fit: b goes
    expect(cache.calculatedSize).toBe(80 * 16);
    expect([a.calls, b.calls, c.calls]).toEqual([1, 1, 1]);
    expect((await cache.forceFetch('a', { context: a })).ids[0]).toBe(1);
    expect(a.calls).toBe(1);
    expect((await cache.forceFetch('b', { context: b })).ids[0]).toBe(2);
    expect(b.calls).toBe(2);
  });

  it('shares one load between overlapping look ups of a key', async () => {
    const cache = createSplitIdsCache(100 * 16);
    let calls = 0;
    const slow = async (): Promise<SplitIds> => {
      calls++;
      await sleep(20);
      return split(5, 7);
    };
    const [x, y] = await Promise.all([
      cache.forceFetch('k', { context: slow }),
      cache.forceFetch('k', { context: slow }),
    ]);
    expect(calls).toBe(1);
    expect(x).toBe(y);
  });

  it('passes a failed load to every waiting caller and does not cache it', async () => {
    const cache = createSplitIdsCache(100 * 16);
    const failure = new LoaderError('NOT_FOUND', 'split set cv has no part x');
    const failing = async (): Promise<SplitIds> => {
      await sleep(10);
      throw failure;
    };
    const results = await Promise.allSettled([
      cache.forceFetch('bad', { context: failing }),
      cache.forceFetch('bad', { context: failing }),
    ]);
    expect(results).toEqual([
      { status: 'rejected', reason: failure },
      { status: 'rejected', reason: failure },
    ]);
    expect(cache.has('bad')).toBe(false);
    const good = counting(3, 4);
    expect((await cache.forceFetch('bad', { context: good })).count).toBe(3);
    expect(good.calls).toBe(1);
  });

  it('returns a split larger than its bound without caching it or evicting others', async () => {
    const cache = createSplitIdsCache(100 * 16);
    const small = counting(10, 1);
    const big = counting(101, 2);
    await cache.forceFetch('small', { context: small });
    expect((await cache.forceFetch('big', { context: big })).count).toBe(101);
    expect((await cache.forceFetch('big', { context: big })).count).toBe(101);
    expect(big.calls).toBe(2);
    expect(cache.has('small')).toBe(true);
    expect(cache.calculatedSize).toBe(10 * 16);
  });

  it('still hands a load its ids when other splits evict it while it runs', async () => {
    const cache = createSplitIdsCache(100 * 16);
    let finish: (() => void) | undefined;
    const slow = async (): Promise<SplitIds> => {
      await new Promise<void>((resolve) => (finish = resolve));
      return split(30, 9);
    };
    const pending = cache.forceFetch('slow', { context: slow });
    // Two splits that fill the whole bound push out the entry of the load in flight.
    await cache.forceFetch('x', { context: counting(50, 1) });
    await cache.forceFetch('y', { context: counting(50, 2) });
    finish!();
    const ids = await pending;
    expect(ids.count).toBe(30);
    expect(ids.ids[0]).toBe(9);
  });

  it('reloads an entry after its time to live, and only entries given one', async () => {
    const cache = createSplitIdsCache(100 * 16);
    const all = counting(2, 1);
    const stored = counting(2, 2);
    await cache.forceFetch('all', { context: all, ttl: 10 });
    await cache.forceFetch('stored', { context: stored });
    await sleep(30);
    await cache.forceFetch('all', { context: all, ttl: 10 });
    await cache.forceFetch('stored', { context: stored });
    expect(all.calls).toBe(2);
    expect(stored.calls).toBe(1);
  });

  it('caches an empty split', async () => {
    const cache = createSplitIdsCache(100 * 16);
    const empty = counting(0);
    expect((await cache.forceFetch('empty', { context: empty })).count).toBe(0);
    expect((await cache.forceFetch('empty', { context: empty })).count).toBe(0);
    expect(empty.calls).toBe(1);
  });
});
