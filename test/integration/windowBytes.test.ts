import { setTimeout as sleep } from 'node:timers/promises';
import type cassandra from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BatchFetcher,
  ByteBudget,
  createDbClient,
  type FetchOptions,
  loadSplitIds,
  type SplitIds,
} from '../../src/core/index.js';
import { engineOptions } from '../support/engineOptions.js';
import { ingestSmallDataset } from '../support/smallDataset.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

/**
 * The fetch engine's byte bounds against the real node: a consumer that takes one batch and
 * then never reads again must leave the stream holding no more than its `maxWindowBytes` (plus
 * the one batch it may always complete), and streams together no more than the process's
 * budget, however many positions their windows allow.
 */

const KIB = 1024;
const SIZE = 64 * KIB;
const N = 600;
let db: cassandra.Client;
let ks: string;
let split: SplitIds;

beforeAll(async () => {
  db = await createDbClient(testDbConfig());
  ks = uniqueKeyspace();
  await ingestSmallDataset(db, ks, N, 4, SIZE);
  split = await loadSplitIds(db, ks);
});

afterAll(async () => {
  if (ks) await dropKeyspace(db, ks);
  await db?.shutdown();
});

/** Batches of 4, prefetch 64: a window of 256 positions, 16 MiB of these samples. */
function options(extra: Partial<FetchOptions>): FetchOptions {
  return engineOptions(
    { keyspace: ks, ids: split.ids, client: db },
    {
      batchSize: 4,
      prefetch: 64,
      ordering: 'out-of-order',
      maxInFlight: 256,
      ...extra,
    },
  );
}

/**
 * Takes one batch, then stops reading while the engine goes on, and returns the most the
 * meter saw held once the engine stood still (no change over 300 ms).
 */
async function heldByNeverReader(opts: FetchOptions, meter: ByteBudget): Promise<number> {
  const fetcher = new BatchFetcher(opts);
  const batches = fetcher.batches();
  await batches.next();
  let most = 0;
  let last = -1;
  for (let still = 0; still < 6;) {
    await sleep(50);
    most = Math.max(most, meter.held);
    still = meter.held === last ? still + 1 : 0;
    last = meter.held;
  }
  await batches.return(undefined);
  return most;
}

describe('byte bounds of the fetch window', () => {
  it('holds a never-reading stream to its maxWindowBytes, where positions alone let it hold the whole window', async () => {
    const free = new ByteBudget(2 ** 40);
    const unbounded = await heldByNeverReader(options({ budget: free }), free);
    expect(free.held).toBe(0); // all given back when the stream ended

    const meter = new ByteBudget(2 ** 40);
    const bound = 1024 * KIB;
    const bounded = await heldByNeverReader(
      options({ budget: meter, maxWindowBytes: bound, meanSampleBytes: SIZE }),
      meter,
    );
    expect(meter.held).toBe(0);
    // Without the bound the window fills: 256 positions less the batch taken, ~16 MiB.
    expect(unbounded).toBeGreaterThan(8 * 1024 * KIB);
    // With it: the bound plus at most one batch it may always complete, and one read's worth
    // of rounding.
    expect(bounded).toBeLessThanOrEqual(bound + 5 * SIZE);
  });

  it('without a known mean size, reads no further than a batch until a sample arrives, then keeps the bound', async () => {
    const meter = new ByteBudget(2 ** 40);
    const bound = 512 * KIB;
    const held = await heldByNeverReader(options({ budget: meter, maxWindowBytes: bound }), meter);
    expect(held).toBeLessThanOrEqual(bound + 5 * SIZE);
  });

  it('pauses the reads of every stream of a process at its budget, and delivers every sample after', async () => {
    const budget = new ByteBudget(2 * 1024 * KIB);
    const fetchers = [1n, 2n, 3n].map(
      (seed) =>
        new BatchFetcher(
          engineOptions(
            { keyspace: ks, ids: split.ids, client: db, seed },
            { batchSize: 4, prefetch: 64, ordering: 'out-of-order', maxInFlight: 256, budget },
          ),
        ),
    );
    const streams = fetchers.map((f) => f.batches());
    for (const s of streams) await s.next();
    let most = 0;
    for (let i = 0; i < 10; i++) {
      await sleep(50);
      most = Math.max(most, budget.held);
    }
    // Three windows of 16 MiB would hold ~48 MiB: the budget, plus a batch per stream.
    expect(most).toBeLessThanOrEqual(2 * 1024 * KIB + 3 * 5 * SIZE);
    // Reading on, each stream still delivers its whole epoch exactly once.
    for (const s of streams) {
      const seen = new Set<string>();
      let count = 4; // the first batch, taken above
      for (let r = await s.next(); !r.done; r = await s.next()) {
        for (const sample of r.value.samples) seen.add(sample.id.toString('hex'));
        count += r.value.samples.length;
      }
      expect(count).toBe(N);
      expect(seen.size).toBe(N - 4);
    }
    expect(budget.held).toBe(0);
  });
});
