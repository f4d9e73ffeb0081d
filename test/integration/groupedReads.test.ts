import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import cassandra from 'cassandra-driver';
import { stringify } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientError } from '../../src/client/index.js';
import { LoaderClient } from '../../src/client/index.js';
import type { DecodedBatch } from '../../src/client/index.js';
import type { LoaderServer } from '../../src/server/index.js';
import {
  type AssembledBatch,
  BatchFetcher,
  createDbClient,
  createLoaderMetrics,
  type FetchOptions,
  loadSplitIds,
  meanSampleBytes,
  type SplitIds,
} from '../../src/core/index.js';
import { collectBatches, engineOptions } from '../support/engineOptions.js';
import { ingestSmallDataset } from '../support/smallDataset.js';
import { startTestServer } from '../support/loaderServer.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

/**
 * Grouped reads (one `WHERE id IN ?` query per group of ids sharing replicas) against the
 * real node: same samples as single-row reads, the same missing-sample policy, retries and
 * hedges of whole groups, and exactly once through a served stream.
 */

const N = 600;
let db: cassandra.Client;
let ks: string;
let split: SplitIds;

const uuidOf = (id: Buffer): string => stringify(id);
const idsOf = (batches: AssembledBatch[]): string[] =>
  batches.flatMap((b) => b.samples.map((s) => uuidOf(s.id)));

function options(extra: Partial<FetchOptions> = {}, metrics = createLoaderMetrics()): FetchOptions {
  return engineOptions({ keyspace: ks, ids: split.ids, client: db }, extra, metrics);
}

const collect = collectBatches;

async function queriesMade(metrics: ReturnType<typeof createLoaderMetrics>): Promise<number> {
  return (await metrics.dbReadSeconds.get()).values.find((v) => v.metricName?.endsWith('_count'))!
    .value;
}

/** The real client, with every grouped query passed to `before` first (delays, failures). */
function intercepted(
  before: (ids: string[]) => Promise<void> | void,
  target: cassandra.Client = db,
): cassandra.Client {
  return new Proxy(target, {
    get(t, prop, receiver) {
      if (prop !== 'execute') return Reflect.get(t, prop, receiver);
      return async (query: string, params: unknown[], opts: unknown) => {
        if (Array.isArray(params[0])) await before((params[0] as unknown[]).map(String));
        return t.execute(query, params as never, opts as never);
      };
    },
  });
}

beforeAll(async () => {
  db = await createDbClient(testDbConfig());
  ks = uniqueKeyspace();
  await ingestSmallDataset(db, ks, N, 10, 500);
  split = await loadSplitIds(db, ks);
});

afterAll(async () => {
  await dropKeyspace(db, ks);
  await db.shutdown();
});

describe('grouped reads against the real node', () => {
  it('ingest records what auto needs: the mean sample size', async () => {
    expect(await meanSampleBytes(db, ks)).toBe(500);
  });

  it('return the same bytes and labels as single reads, in far fewer queries', async () => {
    const singleMetrics = createLoaderMetrics();
    const groupedMetrics = createLoaderMetrics();
    const single = await collect(options({}, singleMetrics));
    const grouped = await collect(options({ groupReads: 32 }, groupedMetrics));
    expect(idsOf(single)).toHaveLength(N);
    expect(new Set(idsOf(grouped)).size).toBe(N);
    // In order: the same positions in the same batches, sample for sample.
    expect(grouped.map((b) => b.samples.length)).toEqual(single.map((b) => b.samples.length));
    single.forEach((b, i) => {
      b.samples.forEach((s, j) => {
        const g = grouped[i]!.samples[j]!;
        expect(g.position).toBe(s.position);
        expect(uuidOf(g.id)).toBe(uuidOf(s.id));
        expect(g.label).toBe(s.label);
        expect(g.labelBlob).toEqual(s.labelBlob);
        expect(g.data.equals(s.data)).toBe(true);
      });
    });
    // Hedged second reads (a loaded machine has stragglers) count as queries too.
    expect(await queriesMade(singleMetrics)).toBeGreaterThanOrEqual(N);
    expect(await queriesMade(groupedMetrics)).toBeLessThan(N / 4);
  });

  it('out of order with grouping: every sample exactly once', async () => {
    const batches = await collect(options({ groupReads: 16, ordering: 'out-of-order' }));
    const ids = idsOf(batches);
    expect(ids).toHaveLength(N);
    expect(new Set(ids).size).toBe(N);
    expect(batches.at(-1)!.lastInEpoch).toBe(true);
  });

  it('a missing id inside a group follows the policy as a missing single read does', async () => {
    const ks2 = uniqueKeyspace();
    try {
      await ingestSmallDataset(db, ks2, 200, 10, 500);
      const split2 = await loadSplitIds(db, ks2);
      const victims = [3, 4, 90, 199].map((p) => uuidOf(split2.ids.subarray(16 * p, 16 * p + 16)));
      for (const v of victims) {
        await db.execute(`DELETE FROM ${ks2}.samples WHERE id = ?`, [v], { prepare: true });
      }
      const base = (extra: Partial<FetchOptions>): FetchOptions =>
        options({ sources: [{ keyspace: ks2, ids: split2.ids }], ...extra });
      const failure = async (extra: Partial<FetchOptions>): Promise<unknown> =>
        collect(base(extra)).then(
          () => undefined,
          (err: unknown) => err,
        );
      const singleFail = await failure({});
      const groupedFail = await failure({ groupReads: 32 });
      expect(singleFail).toMatchObject({ code: 'DATA_LOSS' });
      expect(groupedFail).toMatchObject({ code: 'DATA_LOSS' });
      const shape = (err: unknown): string =>
        (err as Error).message.replace(/sample [0-9a-f-]{36}/, 'sample <id>');
      expect(shape(groupedFail)).toBe(shape(singleFail));
      expect(victims.some((v) => (groupedFail as Error).message.includes(v))).toBe(true);

      for (const ordering of ['in-order', 'out-of-order'] as const) {
        const metrics = createLoaderMetrics();
        const skipped = await collect(base({ groupReads: 32, missing: 'skip', ordering, metrics }));
        const ids = idsOf(skipped);
        expect(ids).toHaveLength(200 - victims.length);
        expect(new Set(ids).size).toBe(ids.length);
        for (const v of victims) expect(ids).not.toContain(v);
        expect(skipped.reduce((a, b) => a + b.skippedMissing, 0)).toBe(victims.length);
        expect(skipped.at(-1)!.lastInEpoch).toBe(true);
        expect((await metrics.missingSamples.get()).values[0]!.value).toBe(victims.length);
      }
    } finally {
      await dropKeyspace(db, ks2);
    }
  });

  it('a stuck group is hedged: its samples arrive from the second read, exactly once', async () => {
    const order = options().shardOf(0);
    const slowId = uuidOf(split.ids.subarray(order.storedPosition(5) * 16).subarray(0, 16));
    let stuck = 0;
    let firstDone = false;
    const client = intercepted(async (ids) => {
      if (ids.includes(slowId) && stuck++ === 0) {
        await sleep(2000);
        firstDone = true;
      }
    });
    const metrics = createLoaderMetrics();
    let deliveredEarly: boolean | undefined;
    const batches: AssembledBatch[] = [];
    for await (const b of new BatchFetcher(
      options({ groupReads: 16, paths: [{ name: 'one', client }] }, metrics),
    ).batches()) {
      batches.push(b);
      if (b.samples.some((s) => uuidOf(s.id) === slowId)) deliveredEarly = !firstDone;
    }
    expect(deliveredEarly).toBe(true);
    expect((await metrics.dbHedgedReads.get()).values[0]!.value).toBeGreaterThanOrEqual(1);
    expect(idsOf(batches)).toHaveLength(N);
    expect(new Set(idsOf(batches)).size).toBe(N);
  });

  it('a failed group is retried whole, and runs out of attempts with UNAVAILABLE', async () => {
    let failures = 0;
    const failEvery = (limit: number): cassandra.Client => {
      const seen = new Map<string, number>();
      return intercepted((ids) => {
        const key = ids[0]!;
        const n = seen.get(key) ?? 0;
        if (n < limit) {
          seen.set(key, n + 1);
          failures++;
          throw new cassandra.errors.OperationTimedOutError('injected timeout', '127.0.0.1');
        }
      });
    };
    const metrics = createLoaderMetrics();
    const batches = await collect(
      options({ groupReads: 32, paths: [{ name: 'flaky', client: failEvery(1) }] }, metrics),
    );
    expect(idsOf(batches)).toHaveLength(N);
    expect(new Set(idsOf(batches)).size).toBe(N);
    expect((await metrics.dbRetries.get()).values[0]!.value).toBe(failures);
    expect(failures).toBeGreaterThan(0);
    await expect(
      collect(options({ groupReads: 32, paths: [{ name: 'flaky', client: failEvery(99) }] })),
    ).rejects.toMatchObject({ code: 'UNAVAILABLE', message: /after 3 attempt/ });
  });
});

describe('grouped reads through a served stream', () => {
  let server: LoaderServer;
  let client: LoaderClient;

  beforeAll(async () => {
    server = await startTestServer({
      resumeKey: randomBytes(32).toString('hex'),
      groupReads: 'auto',
      groupReadsMaxBytes: 1000,
      groupReadsSize: 16,
    });
    client = new LoaderClient(`127.0.0.1:${server.port}`, { reconnect: { attempts: 0 } });
  });

  afterAll(async () => {
    client?.close();
    await server?.shutdown();
  });

  it('auto groups a small dataset and delivers every sample exactly once, resumable', async () => {
    const req = { dataset: ks, split: 'all', batchSize: 40, seed: 9, epochs: 2 } as const;
    const batches: DecodedBatch[] = [];
    for await (const b of client.streamBatches(req)) batches.push(b);
    for (const epoch of [0, 1]) {
      const ids = batches.filter((b) => b.epoch === epoch).flatMap((b) => b.ids);
      expect(ids).toHaveLength(N);
      expect(new Set(ids).size).toBe(N);
    }
    // Resuming mid-epoch from a token delivers exactly the rest.
    const cut = batches[5]!;
    const rest: DecodedBatch[] = [];
    for await (const b of client.streamBatches({ ...req, resumeToken: cut.resumeToken })) {
      rest.push(b);
    }
    const before = batches.slice(0, 6).flatMap((b) => b.ids);
    const after = rest.filter((b) => b.epoch === 0).flatMap((b) => b.ids);
    expect(new Set([...before, ...after]).size).toBe(N);
    expect(before.length + after.length).toBe(N);
    // Grouped: far fewer reads than samples (two epochs and a resumed part).
    const text = await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text();
    const reads = text
      .split('\n')
      .filter((l) => l.startsWith('scylla_loader_db_read_duration_seconds_count'))
      .reduce((a, l) => a + Number(l.split(' ').at(-1)), 0);
    expect(reads).toBeGreaterThan(0);
    expect(reads).toBeLessThan(N);
  });

  it('a missing id inside a group: FAIL ends the stream with DATA_LOSS, SKIP skips and counts it', async () => {
    const ks3 = uniqueKeyspace();
    try {
      await ingestSmallDataset(db, ks3, 100, 10, 500);
      const split3 = await loadSplitIds(db, ks3);
      const victim = uuidOf(split3.ids.subarray(16 * 7, 16 * 8));
      await db.execute(`DELETE FROM ${ks3}.samples WHERE id = ?`, [victim], { prepare: true });
      const req = { dataset: ks3, split: 'all', batchSize: 10, seed: 1 } as const;
      const failed = await (async () => {
        try {
          for await (const b of client.streamBatches(req)) void b;
          return undefined;
        } catch (err) {
          return err;
        }
      })();
      expect(failed).toBeInstanceOf(ClientError);
      expect((failed as ClientError).codeName).toBe('DATA_LOSS');
      expect((failed as ClientError).message).toMatch(/has no row in .*samples/);
      const kept: DecodedBatch[] = [];
      for await (const b of client.streamBatches({ ...req, missingSamplePolicy: 'skip' })) {
        kept.push(b);
      }
      const ids = kept.flatMap((b) => b.ids);
      expect(ids).toHaveLength(99);
      expect(ids).not.toContain(victim);
      expect(kept.reduce((a, b) => a + b.skippedMissing, 0)).toBe(1);
    } finally {
      await dropKeyspace(db, ks3);
    }
  });
});
