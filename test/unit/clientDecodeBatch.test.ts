import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import type { Batch__Output } from '../../src/generated/scylla_loader/v1/Batch.js';
import { ClientError } from '../../src/client/ClientError.js';
import { decodeBatch } from '../../src/client/decodeBatch.js';

const PATH = '/scylla_loader.v1.LoaderService/StreamBatches';

/** A batch whose buffers are views of one ArrayBuffer, like a decoded response. */
function batch(overrides: Partial<Batch__Output> = {}): Batch__Output {
  const message = Buffer.alloc(64);
  const ids = message.subarray(0, 32);
  for (let i = 0; i < 32; i++) ids[i] = i;
  const data = message.subarray(32, 42);
  data.write('abcdefghij');
  const labelBlobs = message.subarray(42, 45);
  labelBlobs.write('xyz');
  return {
    epoch: 3,
    index: 7,
    ids,
    labels: [5, -1],
    data,
    dataSizes: [4, 6],
    labelBlobs,
    labelBlobSizes: [0, 3],
    resumeToken: message.subarray(45, 48),
    skippedMissing: 1,
    lastInEpoch: true,
    shape: [],
    columns: [],
    dtype: 'D_TYPE_UNSPECIFIED',
    skippedUndecodable: 0,
    sourceIndexes: [],
    masks: Buffer.alloc(0),
    maskShape: [],
    ...overrides,
  };
}

function decodeError(b: Batch__Output | null): ClientError {
  try {
    decodeBatch(b, PATH);
  } catch (error) {
    return error as ClientError;
  }
  throw new Error('no error');
}

describe('decodeBatch', () => {
  it('cuts samples and label blobs into views of the received buffer', () => {
    const b = batch();
    const d = decodeBatch(b, PATH);
    expect(d.samples.map(String)).toEqual(['abcd', 'efghij']);
    for (const sample of d.samples) {
      expect(sample.buffer).toBe(b.data.buffer);
    }
    expect(d.samples[1]?.byteOffset).toBe(b.data.byteOffset + 4);
    expect(d.labelBlobs?.map(String)).toEqual(['', 'xyz']);
    expect(d.labelBlobs?.[1]?.buffer).toBe(b.data.buffer);
    expect(d.data).toBe(b.data);
  });

  it('formats ids, converts labels and passes the rest through', () => {
    const d = decodeBatch(batch(), PATH);
    expect(d.ids).toEqual([
      '00010203-0405-0607-0809-0a0b0c0d0e0f',
      '10111213-1415-1617-1819-1a1b1c1d1e1f',
    ]);
    expect(d.idBytes.length).toBe(32);
    expect(d.labels).toBeInstanceOf(Int32Array);
    expect([...d.labels]).toEqual([5, -1]);
    expect(d).toMatchObject({ epoch: 3, index: 7, skippedMissing: 1, lastInEpoch: true });
    expect(String(d.resumeToken)).toBe('\0\0\0');
  });

  it('gives the masks as an [n, h, w, 1] uint8 view, and refuses a layout that disagrees', () => {
    const masks = Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]);
    const d = decodeBatch(batch({ masks, maskShape: [2, 2, 2, 1] }), PATH);
    expect(d.masks).toEqual({ data: masks, shape: [2, 2, 2, 1], dtype: 'uint8' });
    expect(d.masks?.data.buffer).toBe(masks.buffer);
    expect(decodeBatch(batch(), PATH).masks).toBeUndefined();
    expect(decodeError(batch({ masks, maskShape: [2, 2, 2, 2] })).message).toContain(
      'mask shape [2, 2, 2, 2] for 2 samples',
    );
    expect(decodeError(batch({ masks, maskShape: [2, 2, 3, 1] })).message).toContain(
      '8 mask bytes for a tensor of shape [2, 2, 3, 1]',
    );
  });

  it('gives undefined label blobs when the batch has none', () => {
    const d = decodeBatch(batch({ labelBlobs: Buffer.alloc(0), labelBlobSizes: [] }), PATH);
    expect(d.labelBlobs).toBeUndefined();
    const zeros = decodeBatch(batch({ labelBlobs: Buffer.alloc(0), labelBlobSizes: [0, 0] }), PATH);
    expect(zeros.labelBlobs).toBeUndefined();
  });

  it('decodes an empty batch', () => {
    const empty = Buffer.alloc(0);
    const d = decodeBatch(
      batch({
        ids: empty,
        labels: [],
        data: empty,
        dataSizes: [],
        labelBlobs: empty,
        labelBlobSizes: [],
      }),
      PATH,
    );
    expect(d.samples).toEqual([]);
    expect(d.ids).toEqual([]);
  });

  it.each([
    ['data sizes short of the data', { dataSizes: [4, 5] }, /data sizes add up to 9 bytes but 10/],
    ['data sizes beyond the data', { dataSizes: [4, 7] }, /data sizes add up to more than the 10/],
    ['label blob sizes off', { labelBlobSizes: [1, 3] }, /label blob sizes add up to more/],
    ['label blob sizes count', { labelBlobSizes: [3] }, /1 label blob sizes for 2 samples/],
    ['labels count', { labels: [1] }, /1 labels for 2 samples/],
    ['id bytes', { ids: Buffer.alloc(31) }, /31 id bytes for 2 samples/],
  ])('rejects %s with DATA_LOSS', (_name, overrides, message) => {
    const error = decodeError(batch(overrides as Partial<Batch__Output>));
    expect(error).toBeInstanceOf(ClientError);
    expect(error.code).toBe(status.DATA_LOSS);
    expect(error.path).toBe(PATH);
    expect(error.details).toMatch(message);
    expect(error.details).toMatch(/epoch 3, batch 7/);
  });

  it('exposes a raw batch as a uint8 tensor view of the data, with its shape', () => {
    // Two samples of 1 x 5 x 1 (5 bytes each) in the 10 data bytes.
    const b = batch({
      dataSizes: [5, 5],
      shape: [2, 1, 5, 1],
      dtype: 'D_TYPE_UINT8',
      skippedUndecodable: 2,
    });
    const d = decodeBatch(b, PATH);
    expect(d.tensor?.shape).toEqual([2, 1, 5, 1]);
    expect(d.tensor?.dtype).toBe('uint8');
    expect(d.tensor?.data.buffer).toBe(b.data.buffer);
    expect(d.tensor?.data.byteOffset).toBe(b.data.byteOffset);
    expect(d.skippedUndecodable).toBe(2);
    expect(decodeBatch(batch(), PATH).tensor).toBeUndefined();
  });

  it.each([
    [
      'a shape of another rank',
      { shape: [2, 5, 1], dtype: 'D_TYPE_UINT8' },
      /tensor shape \[2, 5, 1\]/,
    ],
    ['a shape of other samples', { shape: [3, 1, 5, 1], dtype: 'D_TYPE_UINT8' }, /for 2 samples/],
    [
      'a shape the data does not fill',
      { dataSizes: [5, 5], shape: [2, 1, 4, 1], dtype: 'D_TYPE_UINT8' },
      /10 data bytes for a tensor/,
    ],
    ['an unknown dtype', { shape: [2, 1, 5, 1], dtype: 'D_TYPE_FLOAT7' }, /unknown tensor dtype/],
  ])('rejects a raw batch with %s', (_name, overrides, message) => {
    const error = decodeError(batch(overrides as Partial<Batch__Output>));
    expect(error.code).toBe(status.DATA_LOSS);
    expect(error.details).toMatch(message);
  });

  it('rejects a response without a batch', () => {
    expect(decodeError(null).details).toMatch(/response without a batch/);
  });

  it('exposes the source index of each sample of a mixed stream, and checks their count', () => {
    expect(decodeBatch(batch(), PATH).sourceIndexes).toBeUndefined();
    expect(Array.from(decodeBatch(batch({ sourceIndexes: [1, 0] }), PATH).sourceIndexes!)).toEqual([
      1, 0,
    ]);
    expect(decodeError(batch({ sourceIndexes: [1] })).details).toMatch(
      /1 source indexes for 2 samples/,
    );
    expect(decodeError(batch({ sourceIndexes: [1, 64] })).details).toMatch(
      /a source index over the stream's 64 sources/,
    );
    // Checked against the request's sources: none missing, none past them.
    expect(() => decodeBatch(batch({ sourceIndexes: [1, 2] }), PATH, 2)).toThrow(
      /a source index over the stream's 2 sources/,
    );
    expect(() => decodeBatch(batch(), PATH, 2)).toThrow(
      /no source indexes for the 2 samples of a mixed stream/,
    );
    const empty = Buffer.alloc(0);
    const none = { ids: empty, labels: [], data: empty, dataSizes: [], labelBlobs: empty };
    expect(decodeBatch(batch({ ...none, labelBlobSizes: [] }), PATH, 2).sourceIndexes).toEqual(
      new Uint8Array(0),
    );
  });
});
