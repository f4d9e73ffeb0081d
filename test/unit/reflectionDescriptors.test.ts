import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadReflectionDescriptors } from '../../src/proto/loadReflectionDescriptors.js';
import { splitFileDescriptorSet } from '../../src/proto/splitFileDescriptorSet.js';

function varint(n: number): Buffer {
  const out: number[] = [];
  for (; n >= 0x80; n = Math.floor(n / 0x80)) out.push((n & 0x7f) | 0x80);
  out.push(n);
  return Buffer.from(out);
}

/** A FileDescriptorSet holding `files` as its `file` entries (field 1, length-delimited). */
function encodeSet(files: Buffer[]): Buffer {
  return Buffer.concat(files.flatMap((f) => [Buffer.from([0x0a]), varint(f.length), f]));
}

/** The `name` of an encoded FileDescriptorProto: field 1, which the compiler writes first. */
function fileName(file: Buffer): string {
  expect(file[0]).toBe(0x0a);
  const length = file[1]!; // every name here is shorter than 128 bytes
  return file.subarray(2, 2 + length).toString();
}

describe('splitFileDescriptorSet', () => {
  it('returns each file entry byte for byte, whatever the width of its length', () => {
    // Lengths needing one, two and three varint bytes, and an empty file.
    const files = [0, 5, 127, 128, 300, 20_000].map((n) => randomBytes(n));
    const hex = (bs: Buffer[]): string[] => bs.map((b) => b.toString('hex'));
    expect(hex(splitFileDescriptorSet(encodeSet(files)))).toEqual(hex(files));
    expect(splitFileDescriptorSet(new Uint8Array())).toEqual([]);
    // A view into a larger buffer is read from its own offset.
    const padded = Buffer.concat([Buffer.from('xx'), encodeSet(files)]);
    expect(hex(splitFileDescriptorSet(padded.subarray(2)))).toEqual(hex(files));
  });

  it('refuses what is not a descriptor set, saying where', () => {
    expect(() => splitFileDescriptorSet(Buffer.from('{"file": []}'))).toThrow(
      /not a FileDescriptorSet: byte 0 is 0x7b/,
    );
    const set = encodeSet([randomBytes(300)]);
    expect(() => splitFileDescriptorSet(set.subarray(0, 200))).toThrow(/truncated/);
    expect(() => splitFileDescriptorSet(Buffer.from([0x0a, 0x80]))).toThrow(/bad length varint/);
  });
});

describe('loadReflectionDescriptors', () => {
  it('serves the compiled files: proto/, the Timestamp it imports and the health proto', () => {
    const files = loadReflectionDescriptors();
    const byName = new Map(files.map((f) => [fileName(f), f]));
    expect([...byName.keys()].sort()).toEqual([
      'google/protobuf/timestamp.proto',
      'health/v1/health.proto',
      'scylla_loader/v1/loader.proto',
    ]);
    const loader = byName.get('scylla_loader/v1/loader.proto')!.toString('latin1');
    // The import, an original field name, and map entries named the way protoc names them.
    expect(loader).toContain('google/protobuf/timestamp.proto');
    expect(loader).toContain('created_at');
    expect(loader).toContain('ClassCountsEntry');
    expect(byName.get('health/v1/health.proto')!.toString('latin1')).toContain('StatusesEntry');
  });
});
