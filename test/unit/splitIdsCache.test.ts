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
    await cache.lookup('a', a);
    await cache.lookup('b', b);
    await cache.lookup('a', a); // a is now the most recently used
    await cache.lookup('c', c); // 120 samples do not fit: b goes
    expect(cache.calculatedSize).toBe(80 * 16);
    expect([a.calls, b.calls, c.calls]).toEqual([1, 1, 1]);
    expect((await cache.lookup('a', a)).ids[0]).toBe(1);
    expect(a.calls).toBe(1);
    expect((await cache.lookup('b', b)).ids[0]).toBe(2);
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
    const [x, y] = await Promise.all([cache.lookup('k', slow), cache.lookup('k', slow)]);
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
      cache.lookup('bad', failing),
      cache.lookup('bad', failing),
    ]);
    expect(results).toEqual([
      { status: 'rejected', reason: failure },
      { status: 'rejected', reason: failure },
    ]);
    expect(cache.has('bad')).toBe(false);
    const good = counting(3, 4);
    expect((await cache.lookup('bad', good)).count).toBe(3);
    expect(good.calls).toBe(1);
  });

  it('returns a split larger than its bound without caching it or evicting others', async () => {
    const cache = createSplitIdsCache(100 * 16);
    const small = counting(10, 1);
    const big = counting(101, 2);
    await cache.lookup('small', small);
    expect((await cache.lookup('big', big)).count).toBe(101);
    expect((await cache.lookup('big', big)).count).toBe(101);
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
    const pending = cache.lookup('slow', slow);
    // Two splits that fill the whole bound push out the entry of the load in flight.
    await cache.lookup('x', counting(50, 1));
    await cache.lookup('y', counting(50, 2));
    finish!();
    const ids = await pending;
    expect(ids.count).toBe(30);
    expect(ids.ids[0]).toBe(9);
  });

  it('reloads an entry after its time to live, and only entries given one', async () => {
    const cache = createSplitIdsCache(100 * 16);
    const all = counting(2, 1);
    const stored = counting(2, 2);
    await cache.lookup('all', all, { ttl: 10 });
    await cache.lookup('stored', stored);
    await sleep(30);
    await cache.lookup('all', all, { ttl: 10 });
    await cache.lookup('stored', stored);
    expect(all.calls).toBe(2);
    expect(stored.calls).toBe(1);
  });

  it('stops a shared load once every caller waiting for it is cancelled', async () => {
    const cache = createSplitIdsCache(100 * 16);
    let loadSignal: AbortSignal | undefined;
    let calls = 0;
    const hanging = (signal: AbortSignal): Promise<SplitIds> => {
      calls++;
      loadSignal = signal;
      return new Promise((_resolve, reject) =>
        signal.addEventListener('abort', () => reject(signal.reason as Error)),
      );
    };
    const one = new AbortController();
    const two = new AbortController();
    const first = cache.lookup('k', hanging, { signal: one.signal });
    const second = cache.lookup('k', hanging, { signal: two.signal });
    expect(calls).toBe(1);
    const reason = new Error('cancelled');
    one.abort(reason);
    await expect(first).rejects.toBe(reason);
    // The other caller still waits: the load goes on.
    expect(loadSignal?.aborted).toBe(false);
    expect(cache.computing).toBe(1);
    two.abort(reason);
    await expect(second).rejects.toBe(reason);
    expect(loadSignal?.aborted).toBe(true);
    expect(cache.computing).toBe(0);
    expect(cache.has('k')).toBe(false);
    // The next caller starts a fresh load.
    const good = counting(3, 4);
    expect((await cache.lookup('k', good)).count).toBe(3);
  });

  it('does not cache a load that finishes after its last caller left', async () => {
    const cache = createSplitIdsCache(100 * 16);
    let finish: (() => void) | undefined;
    const ignoresSignal = async (): Promise<SplitIds> => {
      await new Promise<void>((resolve) => (finish = resolve));
      return split(3, 1);
    };
    const caller = new AbortController();
    const pending = cache.lookup('k', ignoresSignal, { signal: caller.signal });
    caller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    finish!();
    await sleep(10);
    expect(cache.has('k')).toBe(false);
  });

  it('caches an empty split', async () => {
    const cache = createSplitIdsCache(100 * 16);
    const empty = counting(0);
    expect((await cache.lookup('empty', empty)).count).toBe(0);
    expect((await cache.lookup('empty', empty)).count).toBe(0);
    expect(empty.calls).toBe(1);
  });
});
