import { describe, expect, it } from 'vitest';
import { uuidFromBytes } from '../../src/client/uuidFromBytes.js';
import { parse, v5 } from 'uuid';

describe('uuidFromBytes', () => {
  it('formats 16 bytes as a lower-case UUID', () => {
    const bytes = Buffer.from('6ba7b8109dad11d180b400c04fd430c8', 'hex');
    expect(uuidFromBytes(bytes)).toBe('6ba7b810-9dad-11d1-80b4-00c04fd430c8');
  });

  it('reads at an offset', () => {
    const bytes = Buffer.concat([Buffer.alloc(16), Buffer.alloc(16, 0xff)]);
    expect(uuidFromBytes(bytes, 16)).toBe('ffffffff-ffff-ffff-ffff-ffffffffffff');
    expect(uuidFromBytes(bytes, 0)).toBe('00000000-0000-0000-0000-000000000000');
  });

  it('round-trips the bytes of a UUID', () => {
    const id = v5('train/0/1.png', '6ba7b811-9dad-11d1-80b4-00c04fd430c8');
    expect(uuidFromBytes(parse(id))).toBe(id);
  });

  it('rejects a range that is not 16 bytes long', () => {
    expect(() => uuidFromBytes(Buffer.alloc(15))).toThrow(RangeError);
    expect(() => uuidFromBytes(Buffer.alloc(32), 17)).toThrow(RangeError);
  });
});
