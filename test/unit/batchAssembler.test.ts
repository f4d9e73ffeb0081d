import { describe, expect, it } from 'vitest';
import { LoaderError } from '../../src/core/errors/LoaderError.js';
import type { AssembledBatch } from '../../src/core/fetch/AssembledBatch.js';
import { BatchAssembler, type BatchAssemblerOptions } from '../../src/core/fetch/BatchAssembler.js';
import type { FetchedSample } from '../../src/core/fetch/FetchedSample.js';
import { createLoaderMetrics } from '../../src/core/metrics/loaderMetrics.js';

function sample(position: number): FetchedSample {
  const id = Buffer.alloc(16);
  id.writeUInt32BE(position, 12);
  return {
    position,
    id,
    source: 0,
    label: position % 10,
    labelBlob: null,
    data: Buffer.from([position]),
  };
}

function assembler(
  opts: Partial<BatchAssemblerOptions> = {},
): BatchAssembler & { missingCount: () => Promise<number> } {
  const metrics = createLoaderMetrics();
  const a = new BatchAssembler({
    batchSize: 4,
    ordering: 'out-of-order',
    missing: 'skip',
    metrics,
    ...opts,
  });
  return Object.assign(a, {
    missingCount: async () => (await metrics.missingSamples.get()).values[0]?.value ?? 0,
  });
}

const positions = (b: AssembledBatch | undefined): number[] =>
  b?.samples.map((s) => s.position) ?? [];

/** Every batch ready now. */
function drain(a: BatchAssembler): AssembledBatch[] {
  const out: AssembledBatch[] = [];
  for (let b = a.take(); b; b = a.take()) out.push(b);
  return out;
}

describe('BatchAssembler, out of order', () => {
  it('emits a batch as soon as batchSize samples arrived, whichever they are, lowest first', () => {
    const a = assembler();
    a.startEpoch(0, 20);
    for (const p of [9, 3, 7]) a.add(sample(p), p);
    expect(a.take()).toBeUndefined();
    a.add(sample(12), 12);
    a.add(sample(1), 1);
    const b = a.take()!;
    expect(positions(b)).toEqual([1, 3, 7, 9]);
    expect(b.index).toBe(0);
    expect(b.epoch).toBe(0);
    expect(b.firstArrivalAt).toBe(1);
    expect(b.lastInEpoch).toBe(false);
    expect(a.take()).toBeUndefined(); // 12 waits for three more
    expect(a.held).toBe(1);
  });

  it('emits a short last batch once the epoch is resolved', () => {
    const a = assembler();
    a.startEpoch(2, 6);
    for (let p = 0; p < 6; p++) a.add(sample(p), p);
    const batches = drain(a);
    expect(batches.map(positions)).toEqual([
      [0, 1, 2, 3],
      [4, 5],
    ]);
    expect(batches[1]!.lastInEpoch).toBe(true);
    expect(batches[1]!.resume).toEqual({ epoch: 3, low: 0, deliveredAbove: [], nextBatchIndex: 0 });
    expect(a.epochDone).toBe(true);
  });

  it('carries the resume state after each batch: lowest undelivered and delivered above it', () => {
    const a = assembler();
    a.startEpoch(1, 100);
    for (const p of [0, 1, 5, 6]) a.add(sample(p), p);
    const b = a.take()!;
    expect(b.resume).toEqual({ epoch: 1, low: 2, deliveredAbove: [5, 6], nextBatchIndex: 1 });
    expect(a.low).toBe(2);
    expect(a.isDelivered(5)).toBe(true);
    expect(a.isDelivered(2)).toBe(false);
  });

  it('resumes where a resume state says: delivered positions are done, batch indices go on', () => {
    const a = assembler();
    a.startEpoch(1, 10, { epoch: 1, low: 4, deliveredAbove: [6, 7], nextBatchIndex: 2 });
    expect(a.low).toBe(4);
    expect(a.isResolved(6)).toBe(true);
    for (const p of [4, 5, 8, 9]) a.add(sample(p), p);
    const b = a.take()!;
    expect(positions(b)).toEqual([4, 5, 8, 9]);
    expect(b.index).toBe(2);
    expect(b.lastInEpoch).toBe(true);
    expect(a.epochDone).toBe(true);
  });
});

describe('BatchAssembler, in order', () => {
  it('emits the next batchSize positions in order, waiting for a missing one', () => {
    const a = assembler({ ordering: 'in-order' });
    a.startEpoch(0, 10);
    for (const p of [1, 2, 3, 4, 5, 6, 7]) a.add(sample(p), p);
    expect(a.take()).toBeUndefined(); // 0 has not arrived
    a.add(sample(0), 100);
    const batches = drain(a);
    expect(batches.map(positions)).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
    ]);
    expect(batches[0]!.firstArrivalAt).toBe(1);
    a.add(sample(9), 9);
    expect(a.take()).toBeUndefined(); // 8 has not arrived
    a.add(sample(8), 8);
    const last = a.take()!;
    expect(positions(last)).toEqual([8, 9]);
    expect(last.lastInEpoch).toBe(true);
  });
});

describe('BatchAssembler, missing samples', () => {
  it('fail: a sample without a row is DATA_LOSS naming its id and the table', () => {
    const a = assembler({ missing: 'fail' });
    a.startEpoch(0, 10);
    const err = a.missingRow(3, sample(3).id, 'ks', 0);
    expect(err).toBeInstanceOf(LoaderError);
    expect(err!.code).toBe('DATA_LOSS');
    expect(err!.message).toContain('00000000-0000-0000-0000-000000000003');
    expect(err!.message).toContain('ks.samples');
    expect(a.isResolved(3)).toBe(false);
  });

  it('skip: counted, resolved, left out of the batches and of the window occupancy', async () => {
    const a = assembler({ ordering: 'in-order' });
    a.startEpoch(0, 6);
    expect(a.missingRow(1, sample(1).id, 'ks', 1)).toBeUndefined();
    expect(await a.missingCount()).toBe(1);
    expect(a.isResolved(1)).toBe(true);
    expect(a.held).toBe(0);
    for (const p of [0, 2, 3, 4, 5]) a.add(sample(p), p + 10);
    const batches = drain(a);
    expect(batches.map(positions)).toEqual([[0, 2, 3, 4], [5]]);
    expect(batches[0]!.skippedMissing).toBe(1);
    expect(batches[0]!.firstArrivalAt).toBe(1);
    expect(batches[1]!.skippedMissing).toBe(0);
    expect(a.epochDone).toBe(true);
  });

  it('undecodable samples are delivered as skipped and counted apart from missing ones', () => {
    const a = assembler();
    a.startEpoch(0, 6);
    a.undecodable(2, 0);
    a.missingRow(3, sample(3).id, 'ks', 0);
    a.undecodable(5, 0);
    expect(a.isResolved(2)).toBe(true);
    expect(a.held).toBe(0);
    for (const p of [0, 1, 4]) a.add(sample(p), p);
    const [b] = drain(a);
    expect(positions(b)).toEqual([0, 1, 4]);
    expect([b!.skippedMissing, b!.skippedUndecodable]).toEqual([1, 2]);
    expect(b!.lastInEpoch).toBe(true);
  });

  it('skip, out of order: skipped positions leave with the next batch', () => {
    const a = assembler();
    a.startEpoch(0, 5);
    a.missingRow(4, sample(4).id, 'ks', 0);
    for (const p of [0, 1, 2, 3]) a.add(sample(p), p);
    const b = a.take()!;
    expect(positions(b)).toEqual([0, 1, 2, 3]);
    expect(b.skippedMissing).toBe(1);
    expect(b.lastInEpoch).toBe(true);
  });

  it('an epoch of only missing samples ends with empty batches counting them', () => {
    const a = assembler();
    a.startEpoch(0, 2);
    a.missingRow(0, sample(0).id, 'ks', 0);
    a.missingRow(1, sample(1).id, 'ks', 0);
    const b = a.take()!;
    expect(b.samples).toEqual([]);
    expect(b.skippedMissing).toBe(2);
    expect(b.lastInEpoch).toBe(true);
  });
});

describe('BatchAssembler, epochs', () => {
  it('a new epoch drops what was held and starts its batch indices at zero', () => {
    const a = assembler();
    a.startEpoch(0, 10);
    a.add(sample(1), 1);
    a.startEpoch(1, 10);
    expect(a.epoch).toBe(1);
    expect(a.held).toBe(0);
    expect(a.isResolved(1)).toBe(false);
    for (const p of [0, 1, 2, 3]) a.add(sample(p), p);
    expect(a.take()!.index).toBe(0);
  });
});
