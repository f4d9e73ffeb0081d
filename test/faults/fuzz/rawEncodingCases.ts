import fc from 'fast-check';
import type { FuzzCase, FuzzRpc, FuzzTargets } from './FuzzCase.js';
import { loaderCodec } from './loaderCodec.js';

/**
 * Hand-made protobuf wire fragments, for requests a generated encoder cannot produce: invalid
 * UTF-8 in a string field, a field sent with the wrong wire type, varints longer than their
 * type. Appended to a valid message they override its field (the last value of a scalar wins).
 */
const protoWire = {
  /** A varint of any unsigned value below 2^64 (a negative int64 is its two's complement). */
  varint(value: bigint): Buffer {
    let v = BigInt.asUintN(64, value);
    const out: number[] = [];
    do {
      const low = Number(v & 0x7fn);
      v >>= 7n;
      out.push(v > 0n ? low | 0x80 : low);
    } while (v > 0n);
    return Buffer.from(out);
  },
  /** Field `field` as a varint (wire type 0). */
  varintField(field: number, value: bigint): Buffer {
    return Buffer.concat([protoWire.varint(BigInt(field << 3)), protoWire.varint(value)]);
  },
  /** Field `field` as length-delimited bytes (wire type 2): strings, bytes, messages. */
  bytesField(field: number, bytes: Uint8Array): Buffer {
    return Buffer.concat([
      protoWire.varint(BigInt((field << 3) | 2)),
      protoWire.varint(BigInt(bytes.length)),
      bytes,
    ]);
  },
  /** Field `field` as a 64-bit fixed value (wire type 1), e.g. a double's bits. */
  fixed64Field(field: number, bits: bigint): Buffer {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt.asUintN(64, bits));
    return Buffer.concat([protoWire.varint(BigInt((field << 3) | 1)), b]);
  },
};

/** Invalid UTF-8: lone continuation bytes, overlong forms, surrogates, 0xff. */
const BAD_UTF8 = [
  Buffer.from([0x80]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xff, 0xfe]),
  Buffer.from([0x61, 0xe2, 0x82]),
  Buffer.from([0xf4, 0x90, 0x80, 0x80]),
];

/**
 * Request bodies no protobuf encoder writes, for both RPCs, sent through the raw client:
 * random bytes; a valid request truncated or with bits flipped; a valid request with a field
 * appended that overrides it with invalid UTF-8 (dataset, split, set name), the wrong wire
 * type, a 10-byte varint where a uint32 belongs, or a negative int64 as seed. The right status
 * depends on whether the body still decodes (see `expected` below).
 *
 * @internal
 */
export function rawEncodingCases(targets: FuzzTargets): fc.Arbitrary<FuzzCase> {
  const codec = loaderCodec();
  const valid: Record<FuzzRpc, Buffer> = {
    StreamBatches: codec.encode('StreamBatches', {
      dataset: targets.dataset,
      split: 'all',
      batchSize: 16,
      seed: '3',
      epochs: 2,
    }),
    CreateSplits: codec.encode('CreateSplits', {
      dataset: targets.dataset,
      name: 'fz-raw',
      parts: [{ name: 'train', weight: 1 }],
      newVersion: true,
    }),
  };
  const damage = (body: Buffer): fc.Arbitrary<[Buffer, string]> =>
    fc.oneof(
      fc
        .uint8Array({ maxLength: 256 })
        .map((b): [Buffer, string] => [Buffer.from(b), `${b.length} random bytes`]),
      fc
        .integer({ min: 1, max: body.length - 1 })
        .map((n): [Buffer, string] => [body.subarray(0, n), `truncated to ${n}`]),
      fc
        .array(fc.tuple(fc.nat(body.length - 1), fc.nat(7)), { minLength: 1, maxLength: 4 })
        .map((flips): [Buffer, string] => {
          const b = Buffer.from(body);
          for (const [i, bit] of flips) b[i]! ^= 1 << bit;
          return [b, `bits flipped ${flips.map(([i, bit]) => `${i}.${bit}`).join(',')}`];
        }),
      fc
        .tuple(fc.constantFrom(1, 2), fc.constantFrom(...BAD_UTF8), fc.string({ maxLength: 8 }))
        .map(([field, bad, s]): [Buffer, string] => [
          Buffer.concat([body, protoWire.bytesField(field, Buffer.concat([Buffer.from(s), bad]))]),
          `field ${field} with invalid UTF-8 ${bad.toString('hex')}`,
        ]),
      fc
        .integer({ min: 1, max: 16 })
        .map((field): [Buffer, string] => [
          Buffer.concat([body, protoWire.bytesField(field, Buffer.from([1, 2, 3]))]),
          `field ${field} as length-delimited`,
        ]),
      fc
        .tuple(fc.integer({ min: 1, max: 16 }), fc.bigInt({ min: 2n ** 32n, max: 2n ** 64n - 1n }))
        .map(([field, v]): [Buffer, string] => [
          Buffer.concat([body, protoWire.varintField(field, v)]),
          `field ${field} as a varint of ${v}`,
        ]),
      fc
        .tuple(fc.integer({ min: 1, max: 16 }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }))
        .map(([field, v]): [Buffer, string] => [
          Buffer.concat([body, protoWire.fixed64Field(field, v)]),
          `field ${field} as fixed64 ${v}`,
        ]),
      fc
        .bigInt({ min: -(2n ** 63n), max: -1n })
        .map((v): [Buffer, string] => [
          Buffer.concat([body, protoWire.varintField(4, v)]),
          `seed (field 4) as int64 ${v}`,
        ]),
      fc
        .integer({ min: 17, max: 2 ** 29 - 1 })
        .map((field): [Buffer, string] => [
          Buffer.concat([body, protoWire.varintField(field, 1n)]),
          `unknown field ${field}`,
        ]),
    );
  return fc.constantFrom<FuzzRpc>('StreamBatches', 'CreateSplits').chain((rpc) =>
    damage(valid[rpc]).map(([body, note]): FuzzCase => {
      let decodes = true;
      try {
        codec.decode(rpc, body);
      } catch {
        decodes = false;
      }
      return {
        rpc,
        kind: decodes ? 'raw:decodable' : 'raw:undecodable',
        expected: decodes
          ? ['OK', 'INVALID_ARGUMENT', 'NOT_FOUND', 'DATA_LOSS', 'ALREADY_EXISTS']
          : // The loader's tolerant deserializers turn grpc-js's INTERNAL into this.
            ['INVALID_ARGUMENT'],
        body,
        note,
      };
    }),
  );
}
