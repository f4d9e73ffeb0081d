import { setTimeout as sleep } from 'node:timers/promises';
import cassandra from 'cassandra-driver';
import pino from 'pino';
import { stringify } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDbClient,
  adaptiveWindowMax,
  BatchFetcher,
  type AssembledBatch,
  type FetchOptions,
  createLoaderMetrics,
  type LoaderMetrics,
  epochShard,
  type ShardRule,
  datasetNamespace,
  sampleId,
  loadSplitIds,
  type SplitIds,
} from '../../src/core/index.js';
import { ingestSmallDataset } from '../support/smallDataset.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

/** Window limits of the adaptive-window tests: 64 batches, 64 reads in flight. */
const WINDOW_LIMITS = { maxPrefetch: 64, maxWindowSamples: 65_536, maxInFlightPerStream: 64 };

const N = 1000;
let client: cassandra.Client;
let ks: string;
let split: SplitIds;
let labelOf: Map<string, number>;
let dataOf: Map<string, Buffer>;
void pino;

const uuidOf = (id: Buffer): string => stringify(id);

interface Spec {
  batchSize?: number;
  prefetch?: number;
  ordering?: 'out-of-order' | 'in-order';
  rank?: number;
  worldSize?: number;
  shardRule?: ShardRule;
  dropLast?: boolean;
  seed?: bigint;
  firstEpoch?: number;
  epochs?: number;
}

function options(
  spec: Spec,
  extra: Partial<FetchOptions> = {},
  metrics = createLoaderMetrics(),
): FetchOptions {
  const batchSize = spec.batchSize ?? 32;
  return {
    sources: [{ keyspace: ks, ids: split.ids }],
    firstEpoch: spec.firstEpoch ?? 0,
    endEpoch: (spec.firstEpoch ?? 0) + (spec.epochs ?? 1),
    shardOf: (epoch) =>
      epochShard({
        n: split.count,
        seed: spec.seed ?? 7n,
        epoch,
        rank: spec.rank ?? 0,
        worldSize: spec.worldSize ?? 1,
        shardRule: spec.shardRule ?? 'uneven',
        shuffle: 'uniform',
        batchSize,
        dropLast: spec.dropLast ?? false,
      }),
    batchSize,
    prefetch: spec.prefetch ?? 4,
    ordering: spec.ordering ?? 'out-of-order',
    missing: 'fail',
    maxInFlight: 64,
    readAttempts: 3,
    retryBaseMs: 10,
    paths: [{ name: 'primary', client }],
    metrics,
    signal: new AbortController().signal,
    ...extra,
  };
}

async function collectBatches(opts: FetchOptions, limit = Infinity): Promise<AssembledBatch[]> {
  const out: AssembledBatch[] = [];
  for await (const b of new BatchFetcher(opts).batches()) {
    out.push(b);
    if (out.length >= limit) break;
  }
  return out;
}

/** Ids of an epoch in permutation order for a spec, computed from the pure functions. */
function expectedOrder(spec: Spec, epoch = 0): string[] {
  const s = options(spec).shardOf(epoch);
  return Array.from({ length: s.length }, (_, j) => {
    const p = s.storedPosition(j);
    return uuidOf(split.ids.subarray(p * 16, p * 16 + 16));
  });
}

/**
 * The real client, with `before` run ahead of each read, given the read's id (the first
 * parameter): it may hold the read back or throw in its place. `after` runs once the read
 * ended (with `before`'s throw too), whatever its outcome.
 */
function interceptReads(
  before: (id: string) => Promise<void> | void,
  after?: () => void,
): cassandra.Client {
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop !== 'execute') return Reflect.get(target, prop, receiver);
      return async (query: string, params: unknown[], opts: unknown) => {
        try {
          await before(String(params[0]));
          return await target.execute(query, params as never, opts as never);
        } finally {
          after?.();
        }
      };
    },
  });
}

const idsOf = (batches: AssembledBatch[]): string[] =>
  batches.flatMap((b) => b.samples.map((s) => uuidOf(s.id)));

beforeAll(async () => {
  client = await createDbClient(testDbConfig());
  ks = uniqueKeyspace();
  const expected = await ingestSmallDataset(client, ks, N);
  const ns = datasetNamespace(ks);
  labelOf = new Map([...expected].map(([k, v]) => [sampleId(k, ns), v.label]));
  dataOf = new Map([...expected].map(([k, v]) => [sampleId(k, ns), v.data]));
  split = await loadSplitIds(client, ks);
});

afterAll(async () => {
  await dropKeyspace(client, ks);
  await client.shutdown();
});

describe('fetch engine against the real node', () => {
  it('split all holds every sample id once, sorted by its bytes', () => {
    expect(split.count).toBe(N);
    const ids = Array.from({ length: N }, (_, i) => split.ids.subarray(i * 16, i * 16 + 16));
    expect(new Set(ids.map(uuidOf))).toEqual(new Set(labelOf.keys()));
    for (let i = 1; i < N; i++) expect(Buffer.compare(ids[i - 1]!, ids[i]!)).toBe(-1);
  });

  it('delivers every sample of an epoch exactly once, with the stored label and bytes', async () => {
    expect(split.count).toBe(N);
    const batches = await collectBatches(options({ batchSize: 32 }));
    const ids = idsOf(batches);
    expect(ids).toHaveLength(N);
    expect(new Set(ids).size).toBe(N);
    expect([...ids].sort()).toEqual([...labelOf.keys()].sort());
    for (const b of batches) {
      for (const s of b.samples) {
        expect(s.label).toBe(labelOf.get(uuidOf(s.id)));
        expect(s.data.equals(dataOf.get(uuidOf(s.id))!)).toBe(true);
      }
    }
    expect(batches.map((b) => b.index)).toEqual([...batches.keys()]);
    expect(batches.slice(0, -1).every((b) => b.samples.length === 32)).toBe(true);
    expect(batches.at(-1)!.samples.length).toBe(N % 32);
    expect(batches.filter((b) => b.lastInEpoch)).toHaveLength(1);
    expect(batches.at(-1)!.lastInEpoch).toBe(true);
  });

  it('IN_ORDER follows the permutation exactly; OUT_OF_ORDER delivers the same set', async () => {
    const inOrder = idsOf(await collectBatches(options({ ordering: 'in-order', prefetch: 2 })));
    expect(inOrder).toEqual(expectedOrder({}));
    const outOfOrder = idsOf(await collectBatches(options({ ordering: 'out-of-order' })));
    expect([...outOfOrder].sort()).toEqual([...inOrder].sort());
  });

  it('epochs differ in order and each is complete; seeds differ', async () => {
    const two = await collectBatches(options({ ordering: 'in-order', epochs: 2 }));
    const e0 = idsOf(two.filter((b) => b.epoch === 0));
    const e1 = idsOf(two.filter((b) => b.epoch === 1));
    expect(e0).toEqual(expectedOrder({}, 0));
    expect(e1).toEqual(expectedOrder({}, 1));
    expect(e0).not.toEqual(e1);
    expect([...e0].sort()).toEqual([...e1].sort());
    expect(expectedOrder({ seed: 8n })).not.toEqual(e0);
  });

  it('world size 2: uneven gives disjoint shards covering the split; pad and drop as documented', async () => {
    const r0 = idsOf(await collectBatches(options({ worldSize: 2, rank: 0, batchSize: 30 })));
    const r1 = idsOf(await collectBatches(options({ worldSize: 2, rank: 1, batchSize: 30 })));
    expect(r0.filter((id) => r1.includes(id))).toEqual([]);
    expect([...r0, ...r1].sort()).toEqual([...labelOf.keys()].sort());

    // 1000 samples over 3 ranks: pad gives 334 each (2 repeated), drop 333 each (1 left out).
    const perm = expectedOrder({ worldSize: 1 });
    const pad = await Promise.all(
      [0, 1, 2].map(async (rank) =>
        idsOf(await collectBatches(options({ worldSize: 3, rank, shardRule: 'pad' }))),
      ),
    );
    expect(pad.map((r) => r.length)).toEqual([334, 334, 334]);
    const padAll = pad.flat();
    const repeated = padAll.filter((id, i) => padAll.indexOf(id) !== i).sort();
    expect(repeated).toEqual([perm[0], perm[1]].sort());
    const drop = await Promise.all(
      [0, 1, 2].map(async (rank) =>
        idsOf(await collectBatches(options({ worldSize: 3, rank, shardRule: 'drop' }))),
      ),
    );
    expect(drop.map((r) => r.length)).toEqual([333, 333, 333]);
    const left = perm.filter((id) => !drop.flat().includes(id));
    expect(left).toEqual([perm[999]]);
  });

  it('drop_last leaves out exactly the last positions of the shard, in either ordering', async () => {
    const want = expectedOrder({ batchSize: 64 }).slice(0, 960);
    for (const ordering of ['in-order', 'out-of-order'] as const) {
      const batches = await collectBatches(options({ batchSize: 64, dropLast: true, ordering }));
      expect(batches.every((b) => b.samples.length === 64)).toBe(true);
      expect(idsOf(batches).sort()).toEqual([...want].sort());
    }
  });

  it('resuming from any batch token yields exactly the samples not yet delivered', async () => {
    for (const ordering of ['out-of-order', 'in-order'] as const) {
      const spec: Spec = { batchSize: 25, epochs: 2, ordering };
      const full = await collectBatches(options(spec));
      for (const cut of [1, 17, 39, 40, 41, 79]) {
        const head = full.slice(0, cut);
        const resumed = await collectBatches(options(spec, { resume: head.at(-1)!.resume }));
        const seen = [...head, ...resumed];
        for (const epoch of [0, 1]) {
          const ids = idsOf(seen.filter((b) => b.epoch === epoch));
          expect(ids).toHaveLength(N);
          expect(new Set(ids).size).toBe(N);
        }
        expect(resumed[0]?.index ?? 0).toBe(head.at(-1)!.lastInEpoch ? 0 : head.at(-1)!.index + 1);
      }
    }
  });

  it('a resume token made in out-of-order mode resumes in in-order mode, exactly once', async () => {
    const ooo = await collectBatches(options({ batchSize: 20, prefetch: 8 }), 13);
    const rest = await collectBatches(
      options({ batchSize: 20, prefetch: 8, ordering: 'in-order' }, { resume: ooo.at(-1)!.resume }),
    );
    const all = [...idsOf(ooo), ...idsOf(rest)];
    expect(new Set(all).size).toBe(N);
    expect(all).toHaveLength(N);
    // The in-order part follows the permutation, skipping what was delivered.
    const delivered = new Set(idsOf(ooo));
    expect(idsOf(rest)).toEqual(expectedOrder({}).filter((id) => !delivered.has(id)));
  });

  it('stops reading when cancelled: the in-flight gauge returns to zero and no reads follow', async () => {
    const metrics: LoaderMetrics = createLoaderMetrics();
    const abort = new AbortController();
    const opts = options({ batchSize: 10, prefetch: 30 }, { signal: abort.signal }, metrics);
    const fetcher = new BatchFetcher(opts);
    const it = fetcher.batches()[Symbol.asyncIterator]();
    await it.next();
    const inFlight = async (): Promise<number> =>
      (await metrics.dbRequestsInFlight.get()).values[0]!.value;
    const reads = async (): Promise<number> =>
      (await metrics.dbReadSeconds.get()).values.find((v) => v.metricName?.endsWith('_count'))!
        .value;
    expect(await inFlight()).toBeGreaterThan(0);
    abort.abort();
    await expect(it.next()).rejects.toThrow();
    const deadline = Date.now() + 5000;
    while ((await inFlight()) > 0 && Date.now() < deadline) await sleep(10);
    expect(await inFlight()).toBe(0);
    const after = await reads();
    await sleep(300);
    expect(await reads()).toBe(after);
    expect(after).toBeLessThan(N);
  });

  it('a missing row is DATA_LOSS, or skipped and counted on request', async () => {
    const ks2 = uniqueKeyspace();
    try {
      await ingestSmallDataset(client, ks2, 50);
      const split2 = await loadSplitIds(client, ks2);
      const victim = split2.ids.subarray(16 * 3, 16 * 4);
      await client.execute(`DELETE FROM ${ks2}.samples WHERE id = ?`, [uuidOf(victim)], {
        prepare: true,
      });
      const base = {
        ...options({ batchSize: 8 }),
        sources: [{ keyspace: ks2, ids: split2.ids }],
      };
      base.shardOf = (epoch) =>
        epochShard({
          n: 50,
          seed: 1n,
          epoch,
          rank: 0,
          worldSize: 1,
          shardRule: 'uneven',
          shuffle: 'uniform',
          batchSize: 8,
          dropLast: false,
        });
      await expect(collectBatches(base)).rejects.toMatchObject({ code: 'DATA_LOSS' });
      const skipped = await collectBatches({ ...base, missing: 'skip' });
      expect(idsOf(skipped)).toHaveLength(49);
      expect(idsOf(skipped)).not.toContain(uuidOf(victim));
      expect(skipped.reduce((a, b) => a + b.skippedMissing, 0)).toBe(1);
      expect(skipped.at(-1)!.lastInEpoch).toBe(true);
    } finally {
      await dropKeyspace(client, ks2);
    }
  });

  it('many missing rows close together, or at the very end, neither stall nor fail a skip stream', async () => {
    const ks3 = uniqueKeyspace();
    try {
      await ingestSmallDataset(client, ks3, 64);
      const split3 = await loadSplitIds(client, ks3);
      const shardOf = (epoch: number) =>
        epochShard({
          n: 64,
          seed: 1n,
          epoch,
          rank: 0,
          worldSize: 1,
          shardRule: 'uneven',
          shuffle: 'uniform',
          batchSize: 4,
          dropLast: false,
        });
      const order = shardOf(0);
      const idAt = (j: number) => {
        const p = order.storedPosition(j);
        return uuidOf(split3.ids.subarray(p * 16, p * 16 + 16));
      };
      // Ten missing in a row early (more than the window of 1 x 4), and the last three.
      const victims = [
        ...Array.from({ length: 10 }, (_, i) => idAt(5 + i)),
        idAt(61),
        idAt(62),
        idAt(63),
      ];
      for (const v of victims) {
        await client.execute(`DELETE FROM ${ks3}.samples WHERE id = ?`, [v], { prepare: true });
      }
      const base = {
        ...options({ batchSize: 4, prefetch: 1 }),
        sources: [{ keyspace: ks3, ids: split3.ids }],
        shardOf,
      };
      for (const ordering of ['out-of-order', 'in-order'] as const) {
        const batches = await collectBatches({ ...base, ordering, missing: 'skip' });
        expect(idsOf(batches)).toHaveLength(64 - victims.length);
        expect(batches.reduce((a, b) => a + b.skippedMissing, 0)).toBe(victims.length);
        expect(batches.at(-1)!.lastInEpoch).toBe(true);
        expect(batches.every((b) => Number.isFinite(b.firstArrivalAt))).toBe(true);
      }
    } finally {
      await dropKeyspace(client, ks3);
    }
  });

  it('survives a straggler: every sample once, and resume state stays within its bound', async () => {
    // The real client, with the read of the epoch's first sample held back for 1.5 s.
    const spec: Spec = { batchSize: 10, prefetch: 2 };
    const slowId = expectedOrder(spec)[0]!;
    const slowClient = interceptReads(async (id) => {
      if (id === slowId) await sleep(1500);
    });
    const batches = await collectBatches(
      options(spec, { paths: [{ name: 'slow', client: slowClient }] }),
    );
    const ids = idsOf(batches);
    expect(ids).toHaveLength(N);
    expect(new Set(ids).size).toBe(N);
    // Window 20, span 40: delivered positions never spread beyond about two spans above low.
    for (const b of batches) {
      const spread = (b.resume.deliveredAbove.at(-1) ?? b.resume.low) - b.resume.low;
      expect(spread).toBeLessThanOrEqual(2 * 40 + 10);
    }
    expect(batches.slice(0, -1).every((b) => b.samples.length === 10)).toBe(true);
  });

  it('reads a stuck sample a second time and uses whichever answer comes first', async () => {
    const spec: Spec = { batchSize: 10, prefetch: 2 };
    const slowId = expectedOrder(spec)[3]!;
    let firstReadDone = false;
    let reads = 0;
    // The real client; the first read of one sample is held back 2 s, later reads are not.
    const stuckOnce = interceptReads(async (id) => {
      if (id === slowId && reads++ === 0) {
        await sleep(2000);
        firstReadDone = true;
      }
    });
    const metrics = createLoaderMetrics();
    let deliveredBeforeFirstRead: boolean | undefined;
    const batches: AssembledBatch[] = [];
    for await (const b of new BatchFetcher(
      options(spec, { paths: [{ name: 'one', client: stuckOnce }] }, metrics),
    ).batches()) {
      batches.push(b);
      if (b.samples.some((x) => uuidOf(x.id) === slowId)) deliveredBeforeFirstRead = !firstReadDone;
    }
    expect(deliveredBeforeFirstRead).toBe(true);
    expect((await metrics.dbHedgedReads.get()).values[0]!.value).toBeGreaterThanOrEqual(1);
    expect(new Set(idsOf(batches)).size).toBe(N);
    expect(idsOf(batches)).toHaveLength(N);
  });

  it('retries timeouts with backoff, and ends with UNAVAILABLE once attempts run out', async () => {
    const failFirst = new Map<string, number>();
    const flaky = (failuresPerId: number): cassandra.Client =>
      interceptReads((id) => {
        const seen = failFirst.get(id) ?? 0;
        if (id.endsWith('0') && seen < failuresPerId) {
          failFirst.set(id, seen + 1);
          throw new cassandra.errors.OperationTimedOutError('injected timeout', '127.0.0.1');
        }
      });
    const metrics = createLoaderMetrics();
    const batches = await collectBatches(
      options({ batchSize: 50 }, { paths: [{ name: 'flaky', client: flaky(2) }] }, metrics),
    );
    expect(new Set(idsOf(batches)).size).toBe(N);
    const retries = (await metrics.dbRetries.get()).values[0]!.value;
    expect(retries).toBe([...failFirst.values()].reduce((a, b) => a + b, 0));
    expect(retries).toBeGreaterThan(0);

    failFirst.clear();
    await expect(
      collectBatches(options({ batchSize: 50 }, { paths: [{ name: 'flaky', client: flaky(99) }] })),
    ).rejects.toMatchObject({ code: 'UNAVAILABLE', message: /after 3 attempt/ });
  });

  it('spreads reads over several routes, sending fewer to a slow one', async () => {
    // 200 ms slower: far slower than the local node even on a loaded machine (where its reads
    // take 20-30 ms, and 40 ms more left the ratio near 4).
    const slow = interceptReads(() => sleep(200));
    const metrics = createLoaderMetrics();
    const batches = await collectBatches(
      options(
        { batchSize: 50 },
        {
          paths: [
            { name: 'fast', client },
            { name: 'congested', client: slow },
          ],
        },
        metrics,
      ),
    );
    expect(new Set(idsOf(batches)).size).toBe(N);
    const deadline = Date.now() + 5000;
    const inFlight = async (): Promise<number> =>
      (await metrics.dbRequestsInFlight.get()).values[0]!.value;
    while ((await inFlight()) > 0 && Date.now() < deadline) await sleep(10);
    // First reads only: the second read of a straggler goes to the other route whatever its
    // speed, so each slow read on the fast route would add one to the congested route's count.
    const hedged = new Map(
      (await metrics.dbHedgedReads.get()).values.map((v) => [v.labels['path'], v.value]),
    );
    const byPath = new Map(
      (await metrics.dbReadSeconds.get()).values
        .filter((v) => v.metricName?.endsWith('_count'))
        .map((v) => [v.labels['path'], v.value - (hedged.get(v.labels['path']) ?? 0)]),
    );
    expect(byPath.get('congested')).toBeGreaterThan(0);
    expect(byPath.get('fast')!).toBeGreaterThan(4 * byPath.get('congested')!);
  });

  it('grows a window left to the server until slow reads fill the in-flight limit', async () => {
    // Every read takes 40 ms: a window of 2 x 10 positions then bounds the stream at about
    // 500 samples/s, far below what the 64 reads in flight it is allowed could carry.
    const peakReads = async (
      adaptive: boolean,
    ): Promise<{ peak: number; ids: string[]; window: number }> => {
      let now = 0;
      let peak = 0;
      const slow = interceptReads(
        async () => {
          peak = Math.max(peak, ++now);
          await sleep(40);
        },
        () => now--,
      );
      const fetcher = new BatchFetcher(
        options(
          { batchSize: 10, prefetch: 2 },
          {
            paths: [{ name: 'slow', client: slow }],
            ...(adaptive ? { adaptiveWindowMax: adaptiveWindowMax(10, WINDOW_LIMITS) } : {}),
          },
        ),
      );
      const batches: AssembledBatch[] = [];
      for await (const b of fetcher.batches()) batches.push(b);
      return { peak, ids: idsOf(batches), window: fetcher.windowPositions };
    };
    const fixed = await peakReads(false);
    const adaptive = await peakReads(true);
    // The window's reads plus at most 8 second reads of stragglers (hedging).
    expect(fixed.peak).toBeLessThanOrEqual(20 + 8);
    // Grown well past the prefetch window, up to the in-flight limit (64), never beyond it.
    expect(adaptive.peak).toBeGreaterThan(40);
    expect(adaptive.peak).toBeLessThanOrEqual(64 + 8);
    // What the loader logs at a stream's end: the window it grew to, at most 64 + 2 x 10.
    expect(fixed.window).toBe(20);
    expect(adaptive.window).toBeGreaterThan(40);
    expect(adaptive.window).toBeLessThanOrEqual(84);
    for (const run of [fixed, adaptive]) {
      expect(run.ids).toHaveLength(N);
      expect(new Set(run.ids).size).toBe(N);
    }
  });

  it('does not grow a window that arrived samples fill behind a stuck read (in order)', async () => {
    // The epoch's first sample is held back for 1 s: in order, nothing can be sent meanwhile
    // and the window fills with arrived samples, which more reads would not help.
    const spec: Spec = { batchSize: 10, prefetch: 2, ordering: 'in-order' };
    const stuckId = expectedOrder(spec)[0]!;
    let holding = true;
    const readWhileHeld = new Set<string>();
    const stuck = interceptReads(async (id) => {
      if (holding) readWhileHeld.add(id);
      if (id === stuckId) await sleep(1000);
    });
    setTimeout(() => (holding = false), 900);
    const batches = await collectBatches(
      options(spec, {
        paths: [{ name: 'stuck', client: stuck }],
        adaptiveWindowMax: adaptiveWindowMax(10, WINDOW_LIMITS),
      }),
    );
    expect(idsOf(batches)).toEqual(expectedOrder(spec));
    // The prefetch window (2 x 10 positions) and no more, the stuck one included.
    expect(readWhileHeld.size).toBeLessThanOrEqual(20);
  });

  it('counts a read its second read overtook once, so the window does not grow behind a stuck read', async () => {
    // In order, the first sample is held back 1 s. Reads of the next 6 are slow the first time
    // (150 ms) and fast the second, the other 13 of the window slow (600 ms): their second reads answer first and release them, then
    // their first reads answer too. Counted twice, those 6 made 12 "completed reads" with 14
    // still in flight, and the window grew by a batch behind the stuck read (a loaded CI
    // machine hit this: 30 positions read instead of 20).
    const spec: Spec = { batchSize: 10, prefetch: 2, ordering: 'in-order' };
    const order = expectedOrder(spec);
    const stuckId = order[0]!;
    const overtaken = new Set(order.slice(1, 7));
    const slow = new Set(order.slice(7, 20));
    const calls = new Map<string, number>();
    let holding = true;
    const readWhileHeld = new Set<string>();
    const reads = interceptReads(async (id) => {
      const call = (calls.get(id) ?? 0) + 1;
      calls.set(id, call);
      if (holding) readWhileHeld.add(id);
      if (id === stuckId) await sleep(1000);
      else if (overtaken.has(id)) await sleep(call === 1 ? 150 : 0);
      else if (slow.has(id)) await sleep(600);
    });
    setTimeout(() => (holding = false), 900);
    const batches = await collectBatches(
      options(spec, {
        paths: [{ name: 'reads', client: reads }],
        adaptiveWindowMax: adaptiveWindowMax(10, WINDOW_LIMITS),
      }),
    );
    expect(idsOf(batches)).toEqual(order);
    // The overtaking the test is about happened: every one of the 6 was read twice.
    for (const id of overtaken) expect(calls.get(id)).toBeGreaterThanOrEqual(2);
    expect(readWhileHeld.size).toBeLessThanOrEqual(20);
  });

  it('keeps its window bounded while the consumer is slow', async () => {
    const metrics = createLoaderMetrics();
    const fetcher = new BatchFetcher(options({ batchSize: 10, prefetch: 3 }, {}, metrics));
    const it = fetcher.batches()[Symbol.asyncIterator]();
    await it.next();
    await sleep(500); // a slow consumer: nothing is read meanwhile
    const reads = (await metrics.dbReadSeconds.get()).values.find((v) =>
      v.metricName?.endsWith('_count'),
    )!.value;
    // Second reads of stragglers count as reads too, but take no place in the window (the
    // hedger bounds them): on a loaded machine (a fresh clone's first test run) 8 were made.
    const hedged = (await metrics.dbHedgedReads.get()).values.reduce((a, v) => a + v.value, 0);
    // One batch taken, at most the window (3 x 10) held or in flight beyond it.
    expect(reads - hedged).toBeLessThanOrEqual(10 + 30);
    await it.return?.(undefined);
  });
});
