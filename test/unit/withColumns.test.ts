import { describe, expect, it } from 'vitest';
import type { BatchColumn } from '../../src/core/columns/BatchColumn.js';
import { withColumns } from '../../src/core/columns/withColumns.js';
import { ByteBudget } from '../../src/core/fetch/ByteBudget.js';

interface TestBatch {
  n: number;
  samples: { id: Buffer; source: number; data: Buffer }[];
}

function makeBatch(n: number): TestBatch {
  return { n, samples: [{ id: Buffer.alloc(16, n), source: 0, data: Buffer.alloc(100) }] };
}

async function* upstream(count: number, taken: number[]): AsyncGenerator<TestBatch> {
  for (let n = 0; n < count; n++) {
    taken.push(n);
    yield makeBatch(n);
  }
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const column = (n: number): BatchColumn[] => [{ name: 'n', type: 'int', values: [n] }];

describe('withColumns', () => {
  it('hands batches on in order with their own columns, reads finishing in any order', async () => {
    const reads = new Map<number, ReturnType<typeof deferred<BatchColumn[]>>>();
    const read = (b: TestBatch) => {
      const d = deferred<BatchColumn[]>();
      reads.set(b.n, d);
      return d.promise;
    };
    const it = withColumns(upstream(5, []), read, undefined, 8);
    const first = it.next();
    // Let the stage take batches ahead while batch 0's read is out; answer them backwards.
    await new Promise((r) => setTimeout(r, 10));
    expect(reads.size).toBe(5);
    for (const n of [4, 3, 2, 1, 0]) reads.get(n)!.resolve(column(n));
    const got = [(await first).value];
    for await (const x of { [Symbol.asyncIterator]: () => it }) got.push(x);
    expect(got.map((x) => [x.batch.n, x.columns[0]!.values[0]])).toEqual(
      [0, 1, 2, 3, 4].map((n) => [n, n]),
    );
  });

  it('takes no more than the lookahead ahead, and none once the oldest columns are in', async () => {
    const taken: number[] = [];
    const pending: ReturnType<typeof deferred<BatchColumn[]>>[] = [];
    const it = withColumns(
      upstream(100, taken),
      () => {
        const d = deferred<BatchColumn[]>();
        pending.push(d);
        return d.promise;
      },
      undefined,
      3,
    );
    const first = it.next();
    await new Promise((r) => setTimeout(r, 10));
    expect(taken).toEqual([0, 1, 2]);
    pending[0]!.resolve(column(0));
    expect((await first).value!.batch.n).toBe(0);
    // Batch 1's read answered at once: the stage then waits for the caller.
    pending[1]!.resolve(column(1));
    pending[2]!.resolve(column(2));
    await new Promise((r) => setTimeout(r, 10));
    expect(taken.length).toBeLessThanOrEqual(4);
    await it.return(undefined);
  });

  it('counts waiting batches in the budget and gives them back, also when left early', async () => {
    const budget = new ByteBudget(1_000_000);
    const slow = deferred<BatchColumn[]>();
    let calls = 0;
    const it = withColumns(
      upstream(10, []),
      (b) => (calls++ === 0 ? slow.promise : Promise.resolve(column(b.n))),
      budget,
      4,
    );
    const first = it.next();
    await new Promise((r) => setTimeout(r, 10));
    expect(budget.held).toBe(400);
    slow.resolve(column(0));
    await first;
    expect(budget.held).toBeLessThan(400);
    await it.return(undefined);
    expect(budget.held).toBe(0);
  });

  it('gives waiting batches back at once when left while the upstream is slow', async () => {
    const budget = new ByteBudget(1_000_000);
    const gate = deferred<void>();
    async function* slowAfterTwo(): AsyncGenerator<TestBatch> {
      yield makeBatch(0);
      yield makeBatch(1);
      await gate.promise; // a database that takes its time over batch 2
      yield makeBatch(2);
    }
    const slow = deferred<BatchColumn[]>();
    let calls = 0;
    const it = withColumns(
      slowAfterTwo(),
      (b) => (calls++ === 0 ? slow.promise : Promise.resolve(column(b.n))),
      budget,
      4,
    );
    const first = it.next();
    await new Promise((r) => setTimeout(r, 10));
    expect(budget.held).toBe(200); // batches 0 and 1; batch 2 is being taken
    slow.resolve(column(0));
    expect((await first).value!.batch.n).toBe(0);
    let left = false;
    const leaving = it.return(undefined).then(() => (left = true));
    await new Promise((r) => setTimeout(r, 10));
    // Still waiting for batch 2, but batch 1's bytes no longer pause the process's reads.
    expect(left).toBe(false);
    expect(budget.held).toBe(0);
    gate.resolve();
    await leaving;
    expect(budget.held).toBe(0);
  });

  it('fails with a read error when that batch is due, and ends the upstream', async () => {
    let ended = false;
    async function* source(): AsyncGenerator<TestBatch> {
      try {
        for (let n = 0; ; n++) yield makeBatch(n);
      } finally {
        ended = true;
      }
    }
    const it = withColumns(
      source(),
      (b) => (b.n === 2 ? Promise.reject(new Error('db down')) : Promise.resolve(column(b.n))),
      undefined,
      4,
    );
    const got: number[] = [];
    await expect(
      (async () => {
        for await (const x of { [Symbol.asyncIterator]: () => it }) got.push(x.batch.n);
      })(),
    ).rejects.toThrow('db down');
    expect(got).toEqual([0, 1]);
    expect(ended).toBe(true);
  });
});
