import { describe, expect, it } from 'vitest';
import type { StreamBatchesResponse__Output } from '../../src/generated/scylla_loader/v1/StreamBatchesResponse.js';
import { loadLoaderProto } from '../../src/proto/loadLoaderProto.js';
import type { BatchColumn } from '../../src/core/columns/BatchColumn.js';
import type { AssembledBatch } from '../../src/core/fetch/AssembledBatch.js';
import { decodeBatch } from '../../src/client/decodeBatch.js';
import { encodeBatchResponse } from '../../src/server/rpc/encodeBatchResponse.js';
import { encodeColumns } from '../../src/server/rpc/encodeColumns.js';

const method = loadLoaderProto().scylla_loader.v1.LoaderService.service.StreamBatches;

function batch(n: number): AssembledBatch {
  return {
    epoch: 2,
    index: 5,
    samples: Array.from({ length: n }, (_, i) => ({
      position: i,
      id: Buffer.alloc(16, i + 1),
      source: 0,
      label: i,
      labelBlob: null,
      data: Buffer.from(`sample ${i}`),
    })),
    skippedMissing: 0,
    skippedUndecodable: 0,
    lastInEpoch: false,
    resume: { epoch: 2, low: 0, deliveredAbove: [], nextBatchIndex: 6 },
    firstArrivalAt: 0,
  };
}

/** Encodes a batch with `columns` as the server does, and decodes it as the TS SDK does. */
function roundTrip(n: number, columns: BatchColumn[]) {
  const { message } = encodeBatchResponse(
    batch(n),
    Buffer.from('token'),
    2 ** 31 - 1,
    undefined,
    false,
    encodeColumns(columns),
  );
  const response = method.responseDeserialize(message) as StreamBatchesResponse__Output;
  return decodeBatch(response.batch, 'test');
}

describe('encodeColumns', () => {
  it('round-trips every column type, nulls included, in the batch order', () => {
    const columns: BatchColumn[] = [
      { name: 'caption', type: 'text', values: ['a cat', null, 'ünïcødé ✓', ''] },
      { name: 'n', type: 'int', values: [-2147483648, 2147483647, null, 0] },
      {
        name: 'big',
        type: 'bigint',
        values: [-(2n ** 63n), 2n ** 63n - 1n, 12345678901234n, null],
      },
      { name: 'x', type: 'double', values: [Math.PI, -0.5, null, 1e300] },
      { name: 'ok', type: 'boolean', values: [true, false, null, true] },
    ];
    const decoded = roundTrip(4, columns);
    expect(Object.keys(decoded.columns)).toEqual(['caption', 'n', 'big', 'x', 'ok']);
    for (const c of columns) {
      const got = decoded.columns[c.name]!;
      expect(got.type).toBe(c.type);
      expect(c.values.map((_, i) => got.valueAt(i))).toEqual(c.values);
    }
    expect(decoded.columns['caption']!.values).toEqual(['a cat', null, 'ünïcødé ✓', '']);
    expect(decoded.columns['big']!.values).toBeInstanceOf(BigInt64Array);
    expect(Array.from(decoded.columns['x']!.values as Float64Array)).toEqual([
      Math.PI,
      -0.5,
      0,
      1e300,
    ]);
    // No null at all: no bitmap.
    expect(decoded.columns['caption']!.nulls).toEqual(Uint8Array.from([0b0010]));
    const none = roundTrip(2, [{ name: 'n', type: 'int', values: [1, 2] }]);
    expect(none.columns['n']!.nulls).toBeUndefined();
    // The samples are untouched by the columns that follow them.
    expect(decoded.samples.map((s) => s.toString())).toEqual(
      [0, 1, 2, 3].map((i) => `sample ${i}`),
    );
    expect(decoded.epoch).toBe(2);
  });

  it('spans a null bitmap over more than one byte, and an empty batch', () => {
    const values = Array.from({ length: 19 }, (_, i) => (i % 3 === 0 ? null : i));
    const decoded = roundTrip(19, [{ name: 'v', type: 'int', values }]);
    expect(values.map((_, i) => decoded.columns['v']!.valueAt(i))).toEqual(values);
    expect(decoded.columns['v']!.nulls?.length).toBe(3);
    expect(roundTrip(0, [{ name: 'v', type: 'text', values: [] }]).columns['v']!.values).toEqual(
      [],
    );
  });

  it('counts column bytes toward the message limit', () => {
    const long = 'x'.repeat(10_000);
    const columns = encodeColumns([{ name: 'c', type: 'text', values: [long, long] }]);
    const without = encodeBatchResponse(batch(2), Buffer.alloc(0), 1000, undefined, false);
    expect(without.message.length).toBeLessThan(1000);
    expect(() =>
      encodeBatchResponse(batch(2), Buffer.alloc(0), 1000, undefined, false, columns),
    ).toThrow(/over the message limit/);
  });

  it('refuses a column whose length differs from the batch', () => {
    expect(() => roundTrip(3, [{ name: 'n', type: 'int', values: [1, 2] }])).toThrow(
      /column n: 2 values for 3 samples/,
    );
  });
});
