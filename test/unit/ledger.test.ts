import { describe, expect, it } from 'vitest';
import { validateJobId } from '../../src/core/ledger/jobId.js';
import { GROUP_PARTITIONS, GROUP_ROWS, groupRows } from '../../src/core/ledger/Ledger.js';
import { ledgerFingerprint } from '../../src/core/ledger/ledgerFingerprint.js';
import { sampleBucket } from '../../src/core/ledger/ledgerSchema.js';
import { withSkipped } from '../../src/core/ledger/openLedgerStream.js';
import { handedAhead } from '../../src/core/stream/openStream.js';
import { resolveSuperseded, type VersionedBatch } from '../../src/core/ledger/resolveSuperseded.js';
import type { StreamRequest } from '../../src/core/stream/StreamRequest.js';

const ZERO = Buffer.alloc(16);

function row(
  index: number,
  streamTime: number,
  extra: Partial<VersionedBatch> = {},
): VersionedBatch {
  return {
    epoch: 0,
    rank: 0,
    index,
    worldSize: 1,
    segment: ZERO,
    streamTime: BigInt(streamTime),
    streamId: `s${streamTime}`,
    sentAt: new Date(streamTime * 1000 + index),
    superseded: false,
    ...extra,
  };
}

describe('resolveSuperseded', () => {
  it('keeps the latest stream of a batch live and marks the older ones superseded', () => {
    const out = resolveSuperseded([row(3, 2), row(3, 1), row(4, 1)]);
    expect(out.map((r) => [r.index, r.streamTime, r.superseded])).toEqual([
      [3, 1n, true],
      [3, 2n, false],
      [4, 1n, false],
    ]);
  });

  it('leaves rows marked superseded as they are, even when they are the latest', () => {
    const out = resolveSuperseded([row(5, 2, { superseded: true }), row(5, 1)]);
    expect(out.filter((r) => !r.superseded).map((r) => r.streamTime)).toEqual([1n]);
  });

  it('tells apart streams started within the same millisecond', () => {
    // Two timeuuid times 100 ns apart, beyond 2^53 as numbers of 100 ns.
    const t = BigInt(Date.UTC(2026, 10, 28)) * 10_000n;
    const out = resolveSuperseded([
      { ...row(1, 0), streamTime: t + 1n, streamId: 'b' },
      { ...row(1, 0), streamTime: t, streamId: 'c' },
    ]);
    expect(out.find((r) => !r.superseded)!.streamId).toBe('b');
  });

  it('treats other world sizes and re-sharded segments as other batches', () => {
    const seg = Buffer.alloc(16, 7);
    const out = resolveSuperseded([
      row(0, 1),
      row(0, 2, { worldSize: 3 }),
      row(0, 3, { segment: seg }),
    ]);
    expect(out.every((r) => !r.superseded)).toBe(true);
  });
});

describe('validateJobId', () => {
  it('accepts names of letters, digits and _-.:/ up to 128 characters', () => {
    expect(validateJobId('team/run-7:v2.1_a')).toBe('team/run-7:v2.1_a');
    expect(validateJobId('x'.repeat(128))).toHaveLength(128);
  });

  it('refuses the empty, the long and the rest with the rule', () => {
    for (const bad of ['', 'x'.repeat(129), 'has space', 'quote"', 'ünï']) {
      expect(() => validateJobId(bad)).toThrow(/is not a job id: use 1 to 128 characters/);
    }
  });
});

describe('ledgerFingerprint', () => {
  const req: StreamRequest = {
    dataset: 'd',
    split: 'all',
    batchSize: 16,
    seed: 1n,
    firstEpoch: 0,
    epochs: 1,
    rank: 0,
    worldSize: 1,
    shardRule: 'uneven',
    shuffle: 'uniform',
    dropLast: false,
    ordering: 'out-of-order',
    prefetch: 4,
    adaptivePrefetch: true,
    missing: 'fail',
    resumeToken: Buffer.alloc(0),
  };

  it('is the same for every rank, world, epoch range, ordering and window of a job', () => {
    const a = ledgerFingerprint(req, 'h');
    const b = ledgerFingerprint(
      {
        ...req,
        rank: 3,
        worldSize: 8,
        firstEpoch: 5,
        epochs: 1,
        ordering: 'in-order',
        prefetch: 9,
      },
      'h',
    );
    expect(b).toEqual(a);
  });

  it('differs when the samples a job sees could differ', () => {
    const a = ledgerFingerprint(req, 'h');
    for (const other of [
      ledgerFingerprint({ ...req, seed: 2n }, 'h'),
      ledgerFingerprint({ ...req, batchSize: 32 }, 'h'),
      ledgerFingerprint({ ...req, dropLast: true }, 'h'),
      ledgerFingerprint(req, 'another split content'),
    ]) {
      expect(other).not.toEqual(a);
    }
  });
});

describe('sampleBucket', () => {
  it('spreads ids over every bucket', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 4096; i++) {
      const id = Buffer.alloc(16);
      id.writeUInt32BE((i * 2654435761) >>> 0, 0);
      seen.add(sampleBucket(id, 256));
    }
    expect(seen.size).toBe(256);
  });
});

describe('withSkipped', () => {
  const state = { epoch: 2, low: 10, deliveredAbove: [12, 15], nextBatchIndex: 3 };

  it('counts the skipped positions as delivered and continues after the last skipped batch', () => {
    expect(withSkipped(state, [11, 13, 14, 20], 7)).toEqual({
      epoch: 2,
      low: 10,
      deliveredAbove: [11, 12, 13, 14, 15, 20],
      nextBatchIndex: 7,
    });
    // The lowest undelivered position moves past a run the skip completes.
    expect(withSkipped(state, [10, 11, 13, 14], 5)).toMatchObject({
      low: 16,
      deliveredAbove: [],
    });
  });

  it('refuses a position the token says was delivered already', () => {
    expect(() => withSkipped(state, [9], 4)).toThrow(/position 9 of epoch 2/);
    expect(() => withSkipped(state, [15], 4)).toThrow(/different runs/);
  });
});

describe('groupRows', () => {
  const partitionsOf = (g: number[]) => new Set(g.map((r) => r % 1000)).size;

  it('keeps every row once, in groups of at most 10 partitions and 40 rows', () => {
    // 128 rows over 100 partitions, and 8,192 rows over 256 (a batch of 8,192 samples).
    for (const [n, parts] of [
      [128, 100],
      [8192, 256],
    ] as const) {
      const rows = Array.from({ length: n }, (_, i) => (i % parts) + 1000 * i);
      const groups = groupRows(rows, (r) => r % 1000);
      expect(groups.flat().sort((a, b) => a - b)).toEqual([...rows].sort((a, b) => a - b));
      for (const g of groups) {
        expect(g.length).toBeLessThanOrEqual(GROUP_ROWS);
        expect(partitionsOf(g)).toBeLessThanOrEqual(GROUP_PARTITIONS);
      }
    }
    // 128 rows of distinct partitions: 13 requests, not 128.
    expect(groupRows([...Array(128).keys()], (r) => r)).toHaveLength(13);
  });

  it("keeps a partition's rows in one group when they fit", () => {
    const rows = [1, 2, 1, 3, 1, 2];
    expect(groupRows(rows, (r) => r)).toEqual([[1, 1, 1, 2, 2, 3]]);
  });
});

describe('handedAhead', () => {
  it('asks for items ahead of the caller, in order, and ends with the source', async () => {
    const asked: number[] = [];
    async function* source(): AsyncGenerator<number> {
      for (let i = 0; i < 5; i++) {
        asked.push(i);
        yield i;
      }
    }
    const it = handedAhead(source(), 2)[Symbol.asyncIterator]();
    expect(await it.next()).toEqual({ value: 0, done: false });
    // While the caller holds item 0, items 1 and 2 were produced already.
    await new Promise((r) => setTimeout(r, 0));
    expect(asked).toEqual([0, 1, 2]);
    const rest: number[] = [];
    for (let r = await it.next(); !r.done; r = await it.next()) rest.push(r.value);
    expect(rest).toEqual([1, 2, 3, 4]);
  });

  it('counts what waits ahead of the caller, and nothing once it is taken or dropped', async () => {
    async function* source(): AsyncGenerator<number> {
      for (let i = 1; i <= 6; i++) yield i;
    }
    let held = 0;
    const seen: number[] = [];
    const count = (x: number, ahead: boolean): void => {
      held += ahead ? x : -x;
    };
    for await (const x of handedAhead(source(), 2, count)) {
      seen.push(held);
      if (x === 3) break;
    }
    // While the caller held item 1, item 2 (at least) waited ahead, counted.
    expect(seen[0]).toBeGreaterThanOrEqual(2);
    await new Promise((r) => setTimeout(r, 10));
    expect(held).toBe(0);
  });

  it('hands out the items before a failure, then the failure, with none unhandled', async () => {
    async function* source(): AsyncGenerator<number> {
      yield 1;
      throw new Error('read failed');
    }
    const got: number[] = [];
    await expect(
      (async () => {
        for await (const x of handedAhead(source(), 2)) got.push(x);
      })(),
    ).rejects.toThrow('read failed');
    expect(got).toEqual([1]);
  });
});
