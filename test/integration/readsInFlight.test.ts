import type cassandra from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BatchFetcher,
  createDbClient,
  createLoaderMetrics,
  epochShard,
  loadSplitIds,
  ReadSlots,
  READS_PAST_THE_CAP,
  type FetchOptions,
  type LoaderMetrics,
  type SplitIds,
} from '../../src/core/index.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';
import { startToxiproxy, type Toxiproxy } from '../support/index.js';
import { ingestSmallDataset } from '../support/smallDataset.js';
import { toolPath } from '../support/toolPath.js';

/**
 * Reads in flight sized by rate x round trip, against the real node behind toxiproxy: a route
 * of 100 ms (50 ms each way). What is asserted is the mechanism (reads beyond the floor, the
 * cap held, the gauges given back, every sample once), not a speed.
 */
const N = 1200;
const RTT_MS = 100;
let client: cassandra.Client;
let proxied: cassandra.Client;
let toxiproxy: Toxiproxy;
let ks: string;
let split: SplitIds;

beforeAll(async () => {
  client = await createDbClient(testDbConfig());
  ks = uniqueKeyspace();
  await ingestSmallDataset(client, ks, N);
  split = await loadSplitIds(client, ks);
  toxiproxy = await startToxiproxy(toolPath('toxiproxy-server'));
  const db = testDbConfig();
  const port = await toxiproxy.createProxy('db', `${db.contactPoints[0]}:${db.port}`);
  proxied = await createDbClient({ ...db, contactPoints: ['127.0.0.1'], port });
  await toxiproxy.setToxics(
    'db',
    (['upstream', 'downstream'] as const).map((stream) => ({
      name: `latency_${stream}`,
      type: 'latency' as const,
      stream,
      attributes: { latency: RTT_MS / 2, jitter: 0 },
    })),
  );
}, 120_000);

afterAll(async () => {
  await proxied?.shutdown();
  await toxiproxy?.stop();
  if (ks) await dropKeyspace(client, ks);
  await client?.shutdown();
});

/** Options of rank `rank` of `worldSize` over the proxied route, reads sized from `floor`. */
function options(
  rank: number,
  worldSize: number,
  floor: number,
  slots: ReadSlots,
  metrics: LoaderMetrics,
): FetchOptions {
  const batchSize = 8;
  return {
    sources: [{ keyspace: ks, ids: split.ids }],
    firstEpoch: 0,
    endEpoch: 2,
    shardOf: (epoch) =>
      epochShard({
        n: N,
        seed: 3n,
        epoch,
        rank,
        worldSize,
        shardRule: 'uneven',
        shuffle: 'uniform',
        batchSize,
        dropLast: false,
      }),
    batchSize,
    prefetch: 4,
    adaptiveWindowMax: 2048,
    ordering: 'out-of-order',
    missing: 'fail',
    maxInFlight: 1024,
    inFlightFloor: floor,
    readSlots: slots,
    readAttempts: 3,
    retryBaseMs: 10,
    paths: [{ name: 'primary', client: proxied }],
    metrics,
    signal: new AbortController().signal,
  };
}

/** Runs `streams` to their end while sampling `slots` every 5 ms; ids taken, and the samples. */
async function runSampling(
  streams: FetchOptions[],
  slots: ReadSlots,
  metrics: LoaderMetrics,
): Promise<{ ids: string[]; maxUsed: number; maxTarget: number; bounds: Set<string> }> {
  let maxUsed = 0;
  let maxTarget = 0;
  const bounds = new Set<string>();
  const sample = async (): Promise<void> => {
    maxUsed = Math.max(maxUsed, slots.used);
    const target = await metrics.readsInFlightTarget.get();
    maxTarget = Math.max(maxTarget, target.values[0]?.value ?? 0);
    for (const v of (await metrics.streamReadBound.get()).values) {
      if (v.value > 0) bounds.add(String(v.labels.bound));
    }
  };
  const timer = setInterval(() => void sample(), 5);
  try {
    const ids: string[] = [];
    await Promise.all(
      streams.map(async (opts) => {
        for await (const batch of new BatchFetcher(opts).batches()) {
          for (const s of batch.samples) ids.push(s.id.toString('hex'));
        }
      }),
    );
    return { ids, maxUsed, maxTarget, bounds };
  } finally {
    clearInterval(timer);
  }
}

describe('reads in flight sized by rate x round trip, at 100 ms', () => {
  it('grow past their floor, every sample arrives once, and the gauges are given back', async () => {
    const metrics = createLoaderMetrics();
    const slots = new ReadSlots(4096, metrics);
    const run = await runSampling([options(0, 1, 32, slots, metrics)], slots, metrics);
    console.log(
      `one stream at ${RTT_MS} ms: at most ${run.maxUsed} reads in flight, target ` +
        `${run.maxTarget}, bounds seen ${[...run.bounds].join(', ')}`,
    );
    // Two epochs: every sample once in each.
    expect(run.ids.length).toBe(2 * N);
    expect(new Set(run.ids).size).toBe(N);
    // A fixed allowance of the floor would never pass 32.
    expect(run.maxUsed).toBeGreaterThan(64);
    expect(run.maxTarget).toBeGreaterThan(64);
    expect(slots.used).toBe(0);
    expect(slots.streamCount).toBe(0);
    expect((await metrics.readsInFlightTarget.get()).values[0]?.value).toBe(0);
    for (const v of (await metrics.streamReadBound.get()).values) expect(v.value).toBe(0);
    expect((await metrics.readRoundTripMinSeconds.get()).values[0]?.value).toBe(0);
  }, 60_000);

  it("keeps two streams' queries within the process's cap plus a few each", async () => {
    const metrics = createLoaderMetrics();
    const slots = new ReadSlots(48, metrics);
    const floor = 16;
    const run = await runSampling(
      [options(0, 2, floor, slots, metrics), options(1, 2, floor, slots, metrics)],
      slots,
      metrics,
    );
    console.log(
      `two streams, cap 48: at most ${run.maxUsed} queries in flight, ` +
        `bounds seen ${[...run.bounds].join(', ')}`,
    );
    expect(run.ids.length).toBe(2 * N);
    expect(new Set(run.ids).size).toBe(N);
    expect(run.maxUsed).toBeLessThanOrEqual(48 + 2 * READS_PAST_THE_CAP);
    expect(run.maxUsed).toBeGreaterThanOrEqual(40);
    expect(run.bounds.has('process')).toBe(true);
    expect(slots.used).toBe(0);
  }, 60_000);

  it('a stream after another on the same route starts with its rate, not its floor', async () => {
    const metrics = createLoaderMetrics();
    const slots = new ReadSlots(4096, metrics);
    /** Queries in flight at most before the stream's first answer could come, and its samples. */
    const firstRoundTrip = async (opts: FetchOptions): Promise<{ reads: number; n: number }> => {
      const batches = new BatchFetcher(opts).batches();
      const first = batches.next();
      let reads = 0;
      const until = performance.now() + 0.8 * RTT_MS;
      while (performance.now() < until) {
        reads = Math.max(reads, slots.used);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      let n = (await first).value?.samples.length ?? 0;
      for await (const batch of batches) n += batch.samples.length;
      return { reads, n };
    };
    // A window of 512 positions, so the target, not the window, bounds the first reads.
    const wide = (): FetchOptions => ({ ...options(0, 1, 32, slots, metrics), prefetch: 64 });
    const a = await firstRoundTrip(wide());
    const b = await firstRoundTrip(wide());
    console.log(
      `queries in flight before the first answer: first stream ${a.reads}, the next ${b.reads}`,
    );
    expect(a.n).toBe(2 * N);
    expect(b.n).toBe(2 * N);
    // The first starts at its floor; the next at twice the rate x round trip the first measured
    // (up to the window).
    expect(a.reads).toBeLessThanOrEqual(32);
    expect(b.reads).toBeGreaterThan(64);
    expect(slots.used).toBe(0);
  }, 60_000);
});
