import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import cassandra from 'cassandra-driver';
import pino from 'pino';
import { stringify } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoaderClient } from '../../src/client/index.js';
import { DiskTier } from '../../src/testing/index.js';
import {
  type AssembledBatch,
  SampleCache,
  cacheKey,
  cacheScope,
  createDbClient,
  createLoaderMetrics,
  type FetchOptions,
  type LoaderMetrics,
  loadSplitIds,
  readDatasetGeneration,
  type SplitIds,
} from '../../src/core/index.js';
import { datasetNamespace, sampleId } from '../../src/core/index.js';
import { dbEnv } from '../support/dbEnv.js';
import { collectBatches, engineOptions, metricValue } from '../support/engineOptions.js';
import { type ExpectedSample, ingestMixedLabelDataset } from '../support/manifestDataset.js';
import { runCli } from '../support/runCli.js';
import { runCommand } from '../support/runCommand.js';
import { metric, pidsOf, scrape, startServeCli } from '../support/serveCli.js';
import { startTestServer } from '../support/loaderServer.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

/**
 * The sample cache against the real node: the same samples as the database, single flight,
 * bounds, damaged entries, a dataset made again, a failing disk.
 */

const N = 600;
const SIZE = 700;
let db: cassandra.Client;
let ks: string;
let split: SplitIds;
/** Expected sample by id (UUID string). */
let expected: Map<string, ExpectedSample>;
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sl-cache-it-'));
  dirs.push(dir);
  return dir;
}

function byId(dataset: string, bySource: Map<string, ExpectedSample>): Map<string, ExpectedSample> {
  const ns = datasetNamespace(dataset);
  return new Map([...bySource].map(([key, s]) => [sampleId(key, ns), s]));
}

function options(extra: Partial<FetchOptions>, metrics: LoaderMetrics, seed = 5n): FetchOptions {
  return engineOptions(
    { keyspace: ks, ids: split.ids, client: db, seed },
    { ordering: 'out-of-order', ...extra },
    metrics,
  );
}

const collect = collectBatches;
const value = metricValue;

/** A sample cache with a memory tier only (64 MiB unless said). */
function memoryCache(metrics: LoaderMetrics, bytes = 64 << 20): SampleCache {
  return SampleCache.open(
    { cacheMemoryBytes: bytes, cacheDiskBytes: 0 },
    metrics,
    () => undefined,
  )!;
}

/** Every delivered sample equals the database's, each id once per epoch. */
function expectSamples(batches: AssembledBatch[], want: Map<string, ExpectedSample>, epochs = 1) {
  const seen = new Map<string, number>();
  for (const b of batches) {
    for (const s of b.samples) {
      const id = stringify(s.id);
      const e = want.get(id);
      expect(e, `sample ${id}`).toBeDefined();
      expect(s.data.equals(e!.data)).toBe(true);
      expect(s.label).toBe(e!.label);
      expect(s.labelBlob === null ? null : Buffer.from(s.labelBlob)).toEqual(e!.blob);
      seen.set(id, (seen.get(id) ?? 0) + 1);
    }
  }
  expect(seen.size).toBe(want.size);
  expect([...seen.values()].every((c) => c === epochs)).toBe(true);
}

/** Database reads a fetch made: the read-latency histogram's count. */
const dbReads = (metrics: LoaderMetrics): Promise<number> =>
  metrics.dbReadSeconds
    .get()
    .then((m) =>
      m.values.filter((v) => v.metricName?.endsWith('_count')).reduce((a, v) => a + v.value, 0),
    );

/**
 * Database reads a fetch made, once none is in flight: a stream ends when each position's
 * first answer came, and a straggler's other read (first or second) may still be going then;
 * counted before it ends, the total comes out short of N + second reads.
 */
async function settledReads(metrics: LoaderMetrics): Promise<number> {
  const inFlight = async (): Promise<number> =>
    (await metrics.dbRequestsInFlight.get()).values.reduce((a, v) => a + v.value, 0);
  const deadline = Date.now() + 10_000;
  while ((await inFlight()) > 0 && Date.now() < deadline) await sleep(10);
  expect(await inFlight()).toBe(0);
  return dbReads(metrics);
}

async function scopeOf(dataset: string): Promise<Buffer> {
  return cacheScope(dataset, (await readDatasetGeneration(db, dataset))!);
}

beforeAll(async () => {
  db = await createDbClient(testDbConfig());
  ks = uniqueKeyspace();
  expected = byId(ks, await ingestMixedLabelDataset(db, ks, N, SIZE));
  split = await loadSplitIds(db, ks);
}, 120_000);

afterAll(async () => {
  await dropKeyspace(db, ks);
  await db.shutdown();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the sample cache in the fetch engine', () => {
  it('streams the same bytes, labels and blobs from memory and from disk as from the database', async () => {
    const dir = tempDir();
    const config = { cacheMemoryBytes: 64 << 20, cacheDir: dir, cacheDiskBytes: 256 << 20 };
    const scope = await scopeOf(ks);
    const metrics = createLoaderMetrics();
    const cache = SampleCache.open(config, metrics, (err) => {
      throw err;
    })!;
    const cold = await collect(options({ cache: { store: cache, scopes: [scope] } }, metrics));
    expectSamples(cold, expected);
    expect(await settledReads(metrics)).toBe(N + (await value(metrics, 'dbHedgedReads')));
    expect(await value(metrics, 'cacheMisses')).toBe(N);

    const warmMetrics = createLoaderMetrics();
    const warm = await collect(options({ cache: { store: cache, scopes: [scope] } }, warmMetrics));
    expectSamples(warm, expected);
    expect(await dbReads(warmMetrics)).toBe(0);
    expect(await value(metrics, 'cacheHits', { tier: 'memory' })).toBe(N);
    await cache.close();

    // A new process of the host: nothing in memory, everything on disk.
    const diskMetrics = createLoaderMetrics();
    const diskOnly = SampleCache.open({ ...config, cacheMemoryBytes: 0 }, diskMetrics, (err) => {
      throw err;
    })!;
    const fromDisk = await collect(
      options({ cache: { store: diskOnly, scopes: [scope] } }, diskMetrics),
    );
    expectSamples(fromDisk, expected);
    expect(await dbReads(diskMetrics)).toBe(0);
    expect(await value(diskMetrics, 'cacheHits', { tier: 'disk' })).toBe(N);
    await diskOnly.close();
  });

  it('grouped reads fill the cache and take from it as single reads do', async () => {
    const metrics = createLoaderMetrics();
    const cache = memoryCache(metrics);
    const scope = await scopeOf(ks);
    const batches = await collect(
      options({ cache: { store: cache, scopes: [scope] }, groupReads: 16, endEpoch: 2 }, metrics),
    );
    expectSamples(
      batches.filter((b) => b.epoch === 0),
      expected,
    );
    expectSamples(
      batches.filter((b) => b.epoch === 1),
      expected,
    );
    // Epoch 0 read in groups (far fewer queries than samples), epoch 1 nothing.
    expect(await value(metrics, 'cacheMisses')).toBe(N);
    expect(await value(metrics, 'cacheHits', { tier: 'memory' })).toBe(N);
    expect(await dbReads(metrics)).toBeLessThan(N / 4);
  });

  it('single flight: four streams asking for the same ids at once read each id once', async () => {
    const metrics = createLoaderMetrics();
    const cache = memoryCache(metrics);
    const scope = await scopeOf(ks);
    const streams = await Promise.all(
      [0, 1, 2, 3].map(() =>
        collect(options({ cache: { store: cache, scopes: [scope] } }, metrics)),
      ),
    );
    for (const s of streams) expectSamples(s, expected);
    const reads = await settledReads(metrics);
    expect(reads).toBe(N + (await value(metrics, 'dbHedgedReads')));
    expect(await value(metrics, 'cacheMisses')).toBe(N);
    // The same seed: the streams ask in the same order, so most waited on another's read.
    expect(await value(metrics, 'cacheSharedReads')).toBeGreaterThan(0);
    expect((await value(metrics, 'cacheSharedReads')) + (await value(metrics, 'cacheHits'))).toBe(
      3 * N,
    );
  });

  it('a sweep of four jobs with different seeds reads the split from the database once', async () => {
    const metrics = createLoaderMetrics();
    const cache = memoryCache(metrics);
    const scope = await scopeOf(ks);
    const streams = await Promise.all(
      [11n, 12n, 13n, 14n].map((seed) =>
        collect(options({ cache: { store: cache, scopes: [scope] } }, metrics, seed)),
      ),
    );
    for (const s of streams) expectSamples(s, expected);
    const reads = await settledReads(metrics);
    expect(reads).toBe(N + (await value(metrics, 'dbHedgedReads')));
  });

  it('memory stays within its bound with a split twice its size; the rest is read', async () => {
    const metrics = createLoaderMetrics();
    const bound = Math.floor((N * (SIZE + 200)) / 2);
    const cache = memoryCache(metrics, bound);
    const scope = await scopeOf(ks);
    const batches = await collect(
      options({ cache: { store: cache, scopes: [scope] }, endEpoch: 3 }, metrics),
    );
    for (const epoch of [0, 1, 2]) {
      expectSamples(
        batches.filter((b) => b.epoch === epoch),
        expected,
      );
    }
    expect(await value(metrics, 'cacheMemoryBytes')).toBeLessThanOrEqual(bound);
    expect(await value(metrics, 'cacheEvictions', { tier: 'memory' })).toBeGreaterThan(0);
    const hits = await value(metrics, 'cacheHits');
    // Epochs 1 and 2 find about half the split (a random order against a least recently used
    // half); epoch 0 nothing.
    expect(hits).toBeGreaterThan(0.2 * 2 * N);
    expect(hits).toBeLessThan(0.8 * 2 * N);
    expect(await settledReads(metrics)).toBe(
      3 * N - hits + (await value(metrics, 'dbHedgedReads')),
    );
  });

  it('disk stays within its bound with a split twice its size', async () => {
    const big = uniqueKeyspace();
    const count = 640;
    const size = 52_000; // 33 MB: twice the 16 MiB bound
    try {
      const want = byId(big, await ingestMixedLabelDataset(db, big, count, size));
      const bigSplit = await loadSplitIds(db, big);
      const dir = tempDir();
      const bound = 16 << 20;
      const metrics = createLoaderMetrics();
      const cache = SampleCache.open(
        { cacheMemoryBytes: 0, cacheDir: dir, cacheDiskBytes: bound },
        metrics,
        () => undefined,
      )!;
      const scope = await scopeOf(big);
      const batches = await collect(
        options(
          {
            sources: [{ keyspace: big, ids: bigSplit.ids }],
            cache: { store: cache, scopes: [scope] },
            endEpoch: 2,
          },
          metrics,
        ),
      );
      await cache.settled();
      for (const epoch of [0, 1]) {
        const epochBatches = batches.filter((b) => b.epoch === epoch);
        expectSamples(epochBatches, want);
      }
      expect(statSync(path.join(dir, 'samples', 'data.mdb')).size).toBeLessThanOrEqual(bound);
      expect(await value(metrics, 'cacheDiskBytes')).toBeLessThanOrEqual(bound);
      expect(await value(metrics, 'cacheEvictions', { tier: 'disk' })).toBeGreaterThan(0);
      expect(await value(metrics, 'cacheHits', { tier: 'disk' })).toBeGreaterThan(0);
      await cache.close();
    } finally {
      await dropKeyspace(db, big);
    }
  });

  it('a damaged disk entry is read again from the database, counted, and never delivered', async () => {
    const dir = tempDir();
    const config = { cacheMemoryBytes: 0, cacheDir: dir, cacheDiskBytes: 64 << 20 };
    const scope = await scopeOf(ks);
    const fill = SampleCache.open(config, createLoaderMetrics(), () => undefined)!;
    await collect(options({ cache: { store: fill, scopes: [scope] } }, createLoaderMetrics()));
    await fill.close();
    // Flip one byte of one stored sample, as a bad disk would.
    const victim = split.ids.subarray(0, 16);
    const ignore = (): void => undefined;
    const tier = DiskTier.open(dir, config.cacheDiskBytes, {
      onCommit: ignore,
      onError: ignore,
      onDrop: ignore,
    });
    const key = cacheKey(scope, victim);
    const entry = tier.get(key)!;
    entry[entry.length - 5]! ^= 0xff;
    tier.remove(key);
    tier.write(key, entry);
    await tier.close();

    const metrics = createLoaderMetrics();
    const cache = SampleCache.open(config, metrics, () => undefined)!;
    const batches = await collect(options({ cache: { store: cache, scopes: [scope] } }, metrics));
    expectSamples(batches, expected);
    expect(await value(metrics, 'cacheDamaged')).toBe(1);
    expect(await settledReads(metrics)).toBe(1 + (await value(metrics, 'dbHedgedReads')));
    await cache.close();
  });
});

describe('a loader with a sample cache', () => {
  it('streams the new bytes of a dataset dropped and ingested again under its name', async () => {
    const remade = uniqueKeyspace();
    const server = await startTestServer({
      resumeKey: randomBytes(32).toString('hex'),
      cacheMemoryBytes: 64 << 20,
      cacheDir: tempDir(),
    });
    const client = new LoaderClient(`127.0.0.1:${server.port}`, { reconnect: { attempts: 0 } });
    const streamAll = async (): Promise<Map<string, Buffer>> => {
      const got = new Map<string, Buffer>();
      for await (const b of client.streamBatches({
        dataset: remade,
        split: 'all',
        batchSize: 25,
        seed: 1,
        epochs: 2,
      })) {
        b.ids.forEach((id, i) => got.set(`${b.epoch}/${id}`, Buffer.from(b.samples[i]!)));
      }
      return got;
    };
    try {
      const v1 = byId(remade, await ingestMixedLabelDataset(db, remade, 200, 300, 'v1'));
      const first = await streamAll();
      expect(first.size).toBe(400);
      for (const [key, data] of first)
        expect(data.equals(v1.get(key.split('/')[1]!)!.data)).toBe(true);

      await dropKeyspace(db, remade);
      const v2 = byId(remade, await ingestMixedLabelDataset(db, remade, 200, 300, 'v2'));
      expect([...v2.keys()]).toEqual([...v1.keys()]); // the same ids, other bytes
      const second = await streamAll();
      expect(second.size).toBe(400);
      for (const [key, data] of second) {
        expect(data.toString().startsWith('v2-')).toBe(true);
        expect(data.equals(v2.get(key.split('/')[1]!)!.data)).toBe(true);
      }
    } finally {
      client.close();
      await server.shutdown();
      await dropKeyspace(db, remade);
    }
  });

  it('two workers of one host share the disk tier: the second reads nothing from the database', async () => {
    const loader = await startServeCli(2, ['--cache-dir', tempDir(), '--cache-memory-bytes', '0']);
    try {
      const workers = pidsOf(loader, 'worker serving');
      expect(workers.size).toBe(2);
      /** The end line of each worker's first stream, in the order they came. */
      const firstEnds = new Map<number, Record<string, unknown>>();
      for (let attempt = 0; attempt < 8 && firstEnds.size < 2; attempt++) {
        // A client of its own, a connection of its own: the cluster hands connections to the
        // workers in turn.
        const client = new LoaderClient(`127.0.0.1:${loader.port}`, {
          reconnect: { attempts: 0 },
        });
        const ids: string[] = [];
        try {
          for await (const b of client.streamBatches({
            dataset: ks,
            split: 'all',
            batchSize: 50,
            seed: attempt,
            epochs: 1,
          })) {
            ids.push(...b.ids);
          }
        } finally {
          client.close();
        }
        expect(new Set(ids).size).toBe(N);
        expect(ids).toHaveLength(N);
        let ends: Record<string, unknown>[] = [];
        // The loader logs a stream's end after the call ended: the client may finish first.
        for (let i = 0; i < 250 && ends.length <= attempt; i++) {
          ends = loader.lines.filter((l) => l['event'] === 'stream_end');
          await sleep(20);
        }
        const end = ends.at(-1)!;
        if (!firstEnds.has(end['pid'] as number)) firstEnds.set(end['pid'] as number, end);
        // Let the disk tier commit what this stream read before the next one looks: at least
        // the samples' bytes stored, and no change over three readings 200 ms apart (commits
        // come a turn of the event loop apart, slower on a loaded machine).
        let last = -1;
        let same = 0;
        for (let i = 0; i < 100 && same < 2; i++) {
          const bytes = metric(await scrape(loader), 'scylla_loader_cache_disk_bytes');
          same = bytes >= N * SIZE && bytes === last ? same + 1 : 0;
          last = bytes;
          await sleep(200);
        }
      }
      expect(firstEnds.size).toBe(2);
      const [first, second] = [...firstEnds.values()];
      expect(first).toMatchObject({ code: 'OK', samples: N, cacheMisses: N, cacheHits: 0 });
      // Another process, the same store: every sample from disk, none from the database.
      expect(second).toMatchObject({ code: 'OK', samples: N, cacheMisses: 0, cacheHits: N });
      const text = await scrape(loader);
      expect(metric(text, 'scylla_loader_cache_misses_total')).toBe(N);
      expect(metric(text, 'scylla_loader_cache_disk_enabled')).toBe(1);
    } finally {
      loader.child.kill('SIGTERM');
      await loader.done;
    }
  });

  it('a disk that fills up turns the disk tier off with one warning; the streams go on whole', async (ctx) => {
    const mount = tempDir();
    // A small file system of its own, to fill: needs root (CI and the dev machines run as root).
    const mounted = await runCommand(
      'mount',
      ['-t', 'tmpfs', '-o', 'size=192k', 'tmpfs', mount],
      '/',
    )
      .then((r) => r.code === 0)
      .catch(() => false);
    if (!mounted) ctx.skip('cannot mount a small tmpfs here (not root)');
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    const server = await startTestServer(
      {
        resumeKey: randomBytes(32).toString('hex'),
        cacheMemoryBytes: 0,
        cacheDir: mount,
        cacheDiskBytes: 64 << 20,
      },
      { logger },
    );
    const client = new LoaderClient(`127.0.0.1:${server.port}`, { reconnect: { attempts: 0 } });
    try {
      const byEpoch = new Map<number, string[]>();
      for await (const b of client.streamBatches({
        dataset: ks,
        split: 'all',
        batchSize: 50,
        seed: 4,
        epochs: 3,
      })) {
        byEpoch.set(b.epoch, [...(byEpoch.get(b.epoch) ?? []), ...b.ids]);
      }
      for (const epoch of [0, 1, 2]) {
        expect(byEpoch.get(epoch)).toHaveLength(N);
        expect(new Set(byEpoch.get(epoch)).size).toBe(N);
      }
      const warnings = lines.filter((l) =>
        String(l['msg']).startsWith('the disk tier of the sample cache failed'),
      );
      expect(warnings).toHaveLength(1);
      // The cause itself, not lmdb-js's "Commit failed" wrapper.
      expect(String((warnings[0]!['err'] as { message?: string }).message)).not.toMatch(
        /Commit failed/,
      );
      const { metrics } = server.context;
      expect((await metrics.cacheDiskErrors.get()).values[0]!.value).toBe(1);
      expect((await metrics.cacheDiskEnabled.get()).values[0]!.value).toBe(0);
    } finally {
      client.close();
      await server.shutdown();
      await runCommand('umount', [mount], '/').catch(() => undefined);
    }
  });

  it('cache warm fills the disk tier before a job: its first epoch reads nothing from the database', async () => {
    const dir = tempDir();
    const db = testDbConfig();
    const env = {
      ...dbEnv(db),
    };
    const missing = await runCli(['cache', 'warm', ks, 'all'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/error: cache warm needs the disk cache folder: --cache-dir/);
    const warm = await runCli(['cache', 'warm', ks, 'all', '--cache-dir', dir], env);
    expect(warm.code, warm.stderr).toBe(0);
    expect(warm.stdout).toMatch(new RegExp(`warmed ${N} samples of ${ks} all .*: ${N} read from`));
    const again = await runCli(['cache', 'warm', ks, 'all'], {
      ...env,
      SCYLLA_LOADER_CACHE_DIR: dir,
    });
    expect(again.stdout).toMatch(new RegExp(`: 0 read from the database, ${N} there already`));

    const loader = await startServeCli(1, ['--cache-dir', dir, '--cache-memory-bytes', '0']);
    const client = new LoaderClient(`127.0.0.1:${loader.port}`, { reconnect: { attempts: 0 } });
    try {
      const ids: string[] = [];
      for await (const b of client.streamBatches({
        dataset: ks,
        split: 'all',
        batchSize: 50,
        seed: 8,
        epochs: 1,
      })) {
        ids.push(...b.ids);
      }
      expect(new Set(ids).size).toBe(N);
      let end: Record<string, unknown> | undefined;
      for (let i = 0; i < 250 && !end; i++) {
        end = loader.lines.find((l) => l['event'] === 'stream_end');
        await sleep(20);
      }
      expect(end).toMatchObject({ code: 'OK', samples: N, cacheHits: N, cacheMisses: 0 });
      expect(end!['cacheHitRatio']).toBe(1);
    } finally {
      client.close();
      loader.child.kill('SIGTERM');
      await loader.done;
    }
  });
});
