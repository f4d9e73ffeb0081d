import { describe, expect, it } from 'vitest';
import { BoundedCache } from '../../src/core/cache/BoundedCache.js';

describe('BoundedCache', () => {
  it('evicts least recently used values to stay within its size', async () => {
    const cache = new BoundedCache<Buffer>(100, (b) => b.length);
    let loads = 0;
    const load = (n: number) => async () => {
      loads++;
      return Buffer.alloc(n);
    };
    await cache.get('a', load(40));
    await cache.get('b', load(40));
    await cache.get('a', load(40)); // a is now most recent
    await cache.get('c', load(40)); // evicts b
    expect(cache.size).toBe(80);
    expect(loads).toBe(3);
    await cache.get('a', load(40));
    expect(loads).toBe(3);
    await cache.get('b', load(40));
    expect(loads).toBe(4);
  });

  it('shares one load between overlapping gets, and does not cache failures or oversize values', async () => {
    const cache = new BoundedCache<Buffer>(10, (b) => b.length);
    let loads = 0;
    const slow = async () => {
      loads++;
      await new Promise((r) => setTimeout(r, 20));
      return Buffer.alloc(5);
    };
    await Promise.all([cache.get('k', slow), cache.get('k', slow)]);
    expect(loads).toBe(1);
    await expect(cache.get('bad', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await cache.get('bad', async () => Buffer.alloc(1))).toHaveLength(1);
    expect(cache.getOrCompute('big', () => Buffer.alloc(50))).toHaveLength(50);
    expect(cache.size).toBe(6);
  });

  it('reloads after the time to live', async () => {
    const cache = new BoundedCache<number>(100, () => 1);
    let n = 0;
    await cache.get('x', async () => ++n, 10);
    await new Promise((r) => setTimeout(r, 20));
    expect(await cache.get('x', async () => ++n, 10)).toBe(2);
  });
});
