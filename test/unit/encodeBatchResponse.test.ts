import { describe, expect, it } from 'vitest';
import type { StreamBatchesResponse } from '../../src/generated/scylla_loader/v1/StreamBatchesResponse.js';
import { loadLoaderProto } from '../../src/proto/loadLoaderProto.js';
import { LoaderError } from '../../src/core/errors/LoaderError.js';
import type { AssembledBatch } from '../../src/core/fetch/AssembledBatch.js';
import type { FetchedSample } from '../../src/core/fetch/FetchedSample.js';
import { framedBytes } from '../../src/server/framing/allocFramedMessage.js';
import { buildBatchResponse } from '../../src/server/rpc/buildBatchResponse.js';
import { encodeBatchResponse } from '../../src/server/rpc/encodeBatchResponse.js';
import { encodeColumns } from '../../src/server/rpc/encodeColumns.js';

const method = loadLoaderProto().scylla_loader.v1.LoaderService.service.StreamBatches;
const LIMIT = 2 ** 31 - 1;

/** Deterministic bytes, so a failure reproduces. */
function bytes(length: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(length);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}

function sample(
  i: number,
  dataBytes: number,
  label = i,
  labelBlob: Buffer | null = null,
): FetchedSample {
  return {
    position: i,
    id: bytes(16, 1000 + i),
    source: 0,
    label,
    labelBlob,
    data: bytes(dataBytes, i),
  };
}

function batch(samples: FetchedSample[], fields: Partial<AssembledBatch> = {}): AssembledBatch {
  return {
    epoch: 0,
    index: 0,
    samples,
    skippedMissing: 0,
    skippedUndecodable: 0,
    lastInEpoch: false,
    resume: { epoch: 0, low: 0, deliveredAbove: [], nextBatchIndex: 0 },
    firstArrivalAt: 0,
    ...fields,
  };
}

/**
 * The old response object without the fields proto3 leaves out at their default. protobufjs
 * writes a field the object sets even at its default (`epoch: 0` as `08 00`); the encoder
 * leaves such fields out, so this is the object protobufjs encodes to the very same bytes.
 */
function withoutDefaults(response: StreamBatchesResponse): StreamBatchesResponse {
  const entries = Object.entries(response.batch ?? {}).filter(
    ([, v]) =>
      v !== 0 && v !== false && !((Buffer.isBuffer(v) || Array.isArray(v)) && v.length === 0),
  );
  return { batch: Object.fromEntries(entries) };
}

/** A decoded response with its bytes fields as base64: deep equality on megabytes of Buffer is slow. */
function comparable(decoded: unknown): unknown {
  const { batch: b } = decoded as { batch: Record<string, unknown> | null };
  if (!b) return { batch: b };
  return {
    batch: Object.fromEntries(
      Object.entries(b).map(([k, v]) => [k, Buffer.isBuffer(v) ? v.toString('base64') : v]),
    ),
  };
}

const token = bytes(150, 7); // over 127 bytes: a two-byte length

const cases: Array<[string, AssembledBatch, Buffer]> = [
  ['an empty batch', batch([]), Buffer.alloc(0)],
  [
    'an empty batch with every scalar set',
    batch([], { epoch: 3, index: 9, skippedMissing: 2, lastInEpoch: true }),
    token,
  ],
  ['one sample', batch([sample(0, 100, 5)], { epoch: 1, index: 1 }), token],
  ['one empty sample', batch([sample(0, 0, -1)]), Buffer.alloc(0)],
  [
    '300 samples of varied sizes, some empty',
    batch(
      Array.from({ length: 300 }, (_, i) =>
        sample(i, i % 7 === 0 ? 0 : i % 50 === 1 ? 70_000 : (i * 37) % 3000, i % 5 === 0 ? -1 : i),
      ),
      { epoch: 2, index: 41, lastInEpoch: true },
    ),
    token,
  ],
  [
    'labels at the ends of sint32',
    batch(
      [-1, 0, 1, -2, 63, -64, 64, 1_000_000, -1_000_000, 2 ** 31 - 1, -(2 ** 31)].map((l, i) =>
        sample(i, 10, l),
      ),
    ),
    token,
  ],
  [
    'label blobs on some samples',
    batch(
      Array.from({ length: 20 }, (_, i) =>
        sample(
          i,
          50 + i,
          i,
          i % 3 === 0 ? null : i % 3 === 1 ? bytes(i * 11, 500 + i) : Buffer.alloc(0),
        ),
      ),
      { epoch: 4, skippedMissing: 3 },
    ),
    token,
  ],
  [
    'label blobs that are all empty',
    batch([sample(0, 10, 1, Buffer.alloc(0)), sample(1, 10, 2, null)]),
    token,
  ],
  [
    'epoch and index beyond 2^21 and 2^31',
    batch([sample(0, 3), sample(1, 200)], {
      epoch: 2 ** 21 + 5,
      index: 2 ** 31 + 7,
      skippedMissing: 2 ** 28,
    }),
    token,
  ],
  [
    'uint32 maxima',
    batch([sample(0, 1)], { epoch: 2 ** 32 - 1, index: 2 ** 32 - 1, skippedMissing: 2 ** 32 - 1 }),
    token,
  ],
  [
    'a batch over 2^21 bytes (a four-byte length)',
    batch(Array.from({ length: 40 }, (_, i) => sample(i, 60_000 + i, i))),
    token,
  ],
];

describe('encodeBatchResponse', () => {
  it.each(cases)('%s decodes as the object path does', (_, b, resumeToken) => {
    const encoded = encodeBatchResponse(b, resumeToken, LIMIT);
    const old = buildBatchResponse(b, resumeToken, LIMIT);
    expect(encoded.bytes).toBe(old.bytes);
    const decoded = method.responseDeserialize(encoded.message);
    const expected = method.responseDeserialize(method.responseSerialize(old.response));
    expect(comparable(decoded)).toEqual(comparable(expected));
  });

  it.each(cases)('%s is byte for byte what protobufjs writes', (_, b, resumeToken) => {
    const { message } = encodeBatchResponse(b, resumeToken, LIMIT);
    const { response } = buildBatchResponse(b, resumeToken, LIMIT);
    expect(message.equals(method.responseSerialize(withoutDefaults(response)))).toBe(true);
  });

  it.each(cases)('%s comes with its gRPC frame header in front', (_, b, resumeToken) => {
    const { message } = encodeBatchResponse(b, resumeToken, LIMIT);
    const framed = framedBytes(message)!;
    expect(framed.readUInt32BE(1)).toBe(message.length);
    expect(framed.subarray(5).equals(message)).toBe(true);
  });

  it('matches protobufjs on the old object itself when no field is at its default', () => {
    const b = batch([sample(0, 10, -1, bytes(5, 1)), sample(1, 0, 7), sample(2, 300, 2 ** 20)], {
      epoch: 1,
      index: 2,
      skippedMissing: 1,
      lastInEpoch: true,
    });
    const { message } = encodeBatchResponse(b, token, LIMIT);
    const { response } = buildBatchResponse(b, token, LIMIT);
    expect(message.equals(method.responseSerialize(response))).toBe(true);
  });

  it('encodes label -1 as zigzag 1 and packs the labels', () => {
    const only = sample(0, 0, -1);
    const { message } = encodeBatchResponse(batch([only]), Buffer.alloc(0), LIMIT);
    // batch (24 bytes) { ids (16 bytes), labels [1], data_sizes [0] }
    expect(message).toEqual(
      Buffer.concat([
        Buffer.from([0x0a, 24, 0x1a, 16]),
        only.id,
        Buffer.from([0x22, 1, 1, 0x32, 1, 0]),
      ]),
    );
  });

  it('refuses a batch over the message limit as the object path does', () => {
    const b = batch(Array.from({ length: 4 }, (_, i) => sample(i, 1000)));
    const limit = 4 * 1000 + 4 * 64 + 256 + token.length - 1;
    const thrown = (f: () => unknown): unknown => {
      try {
        f();
      } catch (err) {
        return err;
      }
      throw new Error('nothing thrown');
    };
    const err = thrown(() => encodeBatchResponse(b, token, limit));
    expect(err).toBeInstanceOf(LoaderError);
    expect((err as LoaderError).code).toBe('INVALID_ARGUMENT');
    expect((err as LoaderError).message).toBe(
      (thrown(() => buildBatchResponse(b, token, limit)) as LoaderError).message,
    );
    expect((err as LoaderError).message).toMatch(/over the message limit of \d+ bytes/);
    expect(() => encodeBatchResponse(b, token, limit + 1)).not.toThrow();
  });

  it('never exceeds the limit it checks against', () => {
    // Worst case per sample: 5-byte label and size varints, a blob on every sample.
    const b = batch(
      Array.from({ length: 200 }, (_, i) => sample(i, 1, -(2 ** 31), bytes(1, i))),
      { epoch: 2 ** 32 - 1, index: 2 ** 32 - 1, skippedMissing: 2 ** 32 - 1, lastInEpoch: true },
    );
    const limit = 200 * 2 + 200 * 64 + 256 + token.length;
    expect(encodeBatchResponse(b, token, limit).message.length).toBeLessThanOrEqual(limit);
  });

  it('a raw tensor batch carries its shape, dtype and undecodable count, decoded by protobufjs', () => {
    const samples = [0, 1, 2].map((i) => sample(i, 4 * 5 * 3));
    const b = batch(samples, { skippedUndecodable: 2, skippedMissing: 1 });
    const { message } = encodeBatchResponse(b, token, LIMIT, [4, 5, 3]);
    const decoded = method.responseDeserialize(message) as StreamBatchesResponse;
    expect(decoded.batch?.shape).toEqual([3, 4, 5, 3]);
    expect(decoded.batch?.dtype).toBe('D_TYPE_UINT8');
    expect(decoded.batch?.skippedUndecodable).toBe(2);
    expect(decoded.batch?.skippedMissing).toBe(1);
    expect(Buffer.from(decoded.batch!.data as Uint8Array)).toEqual(
      Buffer.concat(samples.map((s) => s.data)),
    );
    // An empty batch (every sample skipped) still says its element shape.
    const empty = encodeBatchResponse(
      batch([], { skippedUndecodable: 4 }),
      token,
      LIMIT,
      [4, 5, 3],
    );
    const e = method.responseDeserialize(empty.message) as StreamBatchesResponse;
    expect(e.batch?.shape).toEqual([0, 4, 5, 3]);
  });

  it('with masks, sends the label blobs as the masks tensor (fields 16-17), not as label blobs, beside columns (18)', () => {
    const samples = [0, 1].map((i) => sample(i, 4 * 5 * 3, i, bytes(4 * 5, 50 + i)));
    const columns = encodeColumns([{ name: 'slide', type: 'text', values: ['a', null] }]);
    const { message, bytes: sent } = encodeBatchResponse(
      batch(samples),
      token,
      LIMIT,
      [4, 5, 3],
      true,
      columns,
      true,
    );
    const decoded = method.responseDeserialize(message) as StreamBatchesResponse;
    expect(decoded.batch?.maskShape).toEqual([2, 4, 5, 1]);
    expect(Buffer.from(decoded.batch!.masks as Uint8Array)).toEqual(
      Buffer.concat(samples.map((s) => s.labelBlob!)),
    );
    expect((decoded.batch!.labelBlobs as Uint8Array).length).toBe(0);
    expect(decoded.batch?.labelBlobSizes).toEqual([]);
    expect(decoded.batch?.sourceIndexes).toEqual([0, 0]);
    expect(decoded.batch?.columns?.[0]?.name).toBe('slide');
    expect(decoded.batch?.columns?.[0]?.textValues).toEqual(['a', '']);
    // Masks count toward the batch's bytes (and its message limit).
    expect(sent).toBe(2 * (60 + 20));
    expect(() =>
      encodeBatchResponse(
        batch(samples),
        token,
        160 + 2 * 64 + 200,
        [4, 5, 3],
        false,
        undefined,
        true,
      ),
    ).toThrow('over the message limit');
    const short = [samples[0]!, { ...samples[1]!, labelBlob: bytes(19, 1) }];
    expect(() =>
      encodeBatchResponse(batch(short), token, LIMIT, [4, 5, 3], false, undefined, true),
    ).toThrow(/mask of 19 bytes in a batch of 2x4x5x1/);
  });

  it('refuses a raw sample whose size is not one element of the tensor', () => {
    const b = batch([sample(0, 60), sample(1, 59)]);
    expect(() => encodeBatchResponse(b, token, LIMIT, [4, 5, 3])).toThrow(/59 bytes .* 4x5x3/);
  });

  it("carries each sample's source index in a mixed stream, and none in a single-source one", () => {
    const samples = [sample(0, 3), sample(1, 4), sample(2, 0)].map((s, i) => ({
      ...s,
      source: [2, 0, 63][i]!,
    }));
    const mixed = method.responseDeserialize(
      encodeBatchResponse(batch(samples), token, LIMIT, undefined, true).message,
    );
    expect(mixed.batch?.sourceIndexes).toEqual([2, 0, 63]);
    // A batch drawn wholly from source 0 still says so (the field is not left out).
    const zeros = samples.map((s) => ({ ...s, source: 0 }));
    expect(
      method.responseDeserialize(
        encodeBatchResponse(batch(zeros), token, LIMIT, undefined, true).message,
      ).batch?.sourceIndexes,
    ).toEqual([0, 0, 0]);
    const single = method.responseDeserialize(
      encodeBatchResponse(batch(samples), token, LIMIT).message,
    );
    expect(single.batch?.sourceIndexes).toEqual([]);
  });
});
