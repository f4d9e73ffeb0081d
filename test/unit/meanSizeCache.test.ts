import { describe, expect, it } from 'vitest';
import { createMeanSizeCache } from '../../src/core/stream/createMeanSizeCache.js';

describe('createMeanSizeCache', () => {
  it('reads a dataset once a minute, each dataset apart', async () => {
    let now = 0;
    const reads: string[] = [];
    const sizes = createMeanSizeCache(
      (dataset) => {
        reads.push(dataset);
        return Promise.resolve(reads.length * 100);
      },
      () => now,
    );
    expect(await sizes('a')).toBe(100);
    now = 59_999;
    expect(await sizes('a')).toBe(100);
    expect(await sizes('b')).toBe(200);
    now = 60_000;
    expect(await sizes('a')).toBe(300);
    expect(reads).toEqual(['a', 'b', 'a']);
  });

  it('forgets a failed lookup: the next stream asks again', async () => {
    let fail = true;
    const sizes = createMeanSizeCache(
      () => (fail ? Promise.reject(new Error('unavailable')) : Promise.resolve(42)),
      () => 0,
    );
    await expect(sizes('a')).rejects.toThrow('unavailable');
    fail = false;
    expect(await sizes('a')).toBe(42);
  });
});
