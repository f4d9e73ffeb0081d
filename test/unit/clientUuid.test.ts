import { describe, expect, it } from 'vitest';
import { uuidFromBytes } from '../../src/client/uuidFromBytes.js';
import { parse, stringify, v4, v5, v7 } from 'uuid';

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

  it('formats any 16 bytes, as a Cassandra uuid column stores them', () => {
    // Version nibble 0 and variant bits 00: not an RFC 9562 UUID, which `uuid`'s stringify
    // refuses, but a value the database keeps and the loader streams.
    const bytes = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
    expect(uuidFromBytes(bytes)).toBe('00010203-0405-0607-0809-0a0b0c0d0e0f');
    expect(() => stringify(bytes)).toThrow(TypeError);
  });

  it('agrees with the uuid package on RFC 9562 UUIDs', () => {
    const bytes = Buffer.concat([parse(v4()), parse(v5('a/b.png', v4())), parse(v7())]);
    for (let i = 0; i < 3; i++) {
      expect(uuidFromBytes(bytes, i * 16)).toBe(stringify(bytes, i * 16));
    }
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
