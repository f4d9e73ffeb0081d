import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sortPackedIds } from '../../src/core/splits/sortPackedIds.js';

describe('sortPackedIds', () => {
  it('orders packed ids exactly as Buffer.compare orders them one by one', () => {
    const count = 5000;
    const ids = randomBytes(count * 16);
    // Ids sharing their first words, so every word of the comparison is exercised.
    for (let i = 0; i < 200; i++) ids.copy(ids, (i + 1) * 16, i * 16, i * 16 + 12);
    const expected = Buffer.concat(
      Array.from({ length: count }, (_, i) => ids.subarray(i * 16, i * 16 + 16)).sort(
        Buffer.compare,
      ),
    );
    expect(sortPackedIds(ids, count).equals(expected)).toBe(true);
  });

  it('reads only the first count ids of a larger buffer, and refuses a short one', () => {
    const ids = Buffer.alloc(64, 0xff);
    Buffer.from('00'.repeat(16), 'hex').copy(ids, 16);
    expect(sortPackedIds(ids, 2)).toEqual(
      Buffer.concat([Buffer.alloc(16), Buffer.alloc(16, 0xff)]),
    );
    expect(sortPackedIds(ids, 0).length).toBe(0);
    expect(() => sortPackedIds(ids, 5)).toThrow(RangeError);
  });
});
