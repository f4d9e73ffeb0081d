import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DbConfig } from '../../src/core/index.js';
import { withDbClient, type BenchDataset } from '../../test/support/index.js';
import { latencyToxics } from '../latency/routeToxics.js';
import { startToxiproxy, type Toxiproxy } from '../../test/support/index.js';
import { startBenchRun } from '../report/benchRun.js';
import { benchEnvironment } from '../../test/support/index.js';
import type { CacheBenchOptions } from './CacheBenchOptions.js';
import type { CacheLeg, CacheOversize, CacheSweep } from './CacheBenchReport.js';
import { cacheGoals } from './cacheGoals.js';
import { ensureCacheDataset } from './ensureCacheDataset.js';
import { measureEpochs, type CacheBenchRun } from './measureEpoch.js';
import { measureOversizeSplit } from './measureOversizeSplit.js';
import { measureSweep } from './measureSweep.js';
import type { CacheTiers } from './startCacheServe.js';
import { streamEpochs } from './streamEpochs.js';
import { withCacheLoader } from './withCacheLoader.js';

/** Seed of every leg and of the split twice the cache (the sweep's jobs take others). */
const LEG_SEED = 1;
/** Seed of job j of the sweep: `SWEEP_SEED + j`. */
const SWEEP_SEED = 101;
/** Seed of the untimed epoch that warms the database up. */
const WARMUP_SEED = 999_999;

/**
 * The sample cache's benchmark. Every database connection of the loaders goes through
 * toxiproxy (its main route gets a round trip of 0 ms, then `highRttMs`, half each way, as in
 * `bench latency`). First one untimed epoch through a loader straight to the database, so the
 * first leg does not pay alone for the database's cold caches. Then, side by side:
 *
 * 1. per round trip, a fresh loader without a cache and a fresh loader with a fresh cache
 *    (memory and disk tiers, the disk in a temporary folder, both sized to hold the split):
 *    epoch 0 (cold) and epochs 1-2 (warm), each epoch a stream of its own, with the loader's
 *    counters (database queries, cache hits, misses, shared reads) scraped before and after;
 * 2. at `highRttMs`, `jobs` concurrent jobs of different seeds over the split, one loader with
 *    a fresh cache: the samples it read from the database over the split's size;
 * 3. at `highRttMs`, a split twice the cache (no memory tier, a disk tier bound to half the
 *    split's bytes): the warm epochs' hit ratio and rate, the store's file against its bound.
 *
 * Toxiproxy, every loader and every cache folder are gone whatever happens. Writes the JSON
 * report to `outDir`.
 */
export async function runCacheBench(options: CacheBenchOptions) {
  const { log, signal, progress, childPids, onSpawn, writeReport } = startBenchRun(options);
  const environment = await withDbClient(options.db, benchEnvironment);
  const prepare = async (name: string, samples: number): Promise<BenchDataset> => {
    const d = await ensureCacheDataset(options.db, {
      name,
      samples,
      sampleBytes: options.sampleBytes,
      progress,
      signal,
    });
    log(
      `dataset ${d.name}: ${d.samples} samples of ${options.sampleBytes} bytes, ` +
        `${(d.totalBytes / 1e6).toFixed(1)} MB` +
        (d.ingested ? ` (made in ${d.prepareSeconds.toFixed(1)} s)` : ' (already there)'),
    );
    return d;
  };
  const dataset = await prepare(options.dataset, options.samples);
  const o = options.oversize;
  const oversizeDataset =
    o.dataset === options.dataset ? dataset : await prepare(o.dataset, o.samples);

  const n = options.samples;
  const { epochs, highRttMs } = options;
  const split = { dataset: options.dataset, samples: n };
  const total = n + options.rttsMs.length * 2 * epochs * n + options.jobs * n + epochs * o.samples;
  const bar = progress('bench cache', total, 'samples');
  let streamed = 0;
  const run: CacheBenchRun = {
    batchSize: options.batchSize,
    signal,
    onSpawn,
    notes: [],
    onSamples: (count) => bar.update((streamed += count)),
    log: (line) => bar.log(line),
  };
  const legs: CacheLeg[] = [];
  let sweep: CacheSweep | undefined;
  let oversize: CacheOversize | undefined;
  let toxiproxy: Toxiproxy | undefined;
  const tempRoot = await mkdtemp(path.join(os.tmpdir(), 'sl-bench-cache-'));
  let folders = 0;
  const freshDir = (): string => path.join(tempRoot, `cache-${folders++}`);
  const fullCache = (): CacheTiers => ({
    memoryBytes: options.cache.memoryBytes,
    dir: freshDir(),
    diskBytes: options.cache.diskBytes,
  });
  try {
    // Untimed, straight to the database: it reads the split once, as it will in every leg.
    await withCacheLoader(run, options.db, undefined, 'warm-up', (serve) =>
      streamEpochs({
        ...split,
        address: serve.address,
        batchSize: options.batchSize,
        jobs: [{ seed: WARMUP_SEED, epoch: 0 }],
        onSamples: run.onSamples,
        signal,
      }),
    );
    toxiproxy = await startToxiproxy(options.toxiproxy, { onSpawn });
    const upstream = `${options.db.contactPoints[0] ?? '127.0.0.1'}:${options.db.port}`;
    const proxyPort = await toxiproxy.createProxy('main', upstream);
    const viaProxy: DbConfig = { ...options.db, contactPoints: ['127.0.0.1'], port: proxyPort };

    for (const rttMs of options.rttsMs) {
      await toxiproxy.setToxics('main', latencyToxics(rttMs));
      for (const cached of [false, true]) {
        const label = `${cached ? 'cache' : 'no cache'}, ${rttMs} ms`;
        const tiers = cached ? fullCache() : undefined;
        const legEpochs = await withCacheLoader(run, viaProxy, tiers, label, (serve) =>
          measureEpochs(run, serve, { ...split, epochs, seed: LEG_SEED, label }),
        );
        legs.push({ cached, rttMs, epochs: legEpochs });
      }
    }

    // Everything at the high round trip from here on.
    await toxiproxy.setToxics('main', latencyToxics(highRttMs));
    sweep = await measureSweep(run, {
      db: viaProxy,
      tiers: fullCache(),
      ...split,
      jobs: options.jobs,
      firstSeed: SWEEP_SEED,
      rttMs: highRttMs,
    });
    oversize = await measureOversizeSplit(run, {
      db: viaProxy,
      dir: freshDir(),
      diskBytes: o.diskBytes,
      dataset: o.dataset,
      samples: o.samples,
      splitBytes: oversizeDataset.totalBytes,
      epochs,
      seed: LEG_SEED,
      rttMs: highRttMs,
    });
  } finally {
    bar.stop();
    await toxiproxy?.stop();
    await rm(tempRoot, { recursive: true, force: true });
  }

  return writeReport('cache', options.outDir, {
    environment: { ...environment, toxiproxy: toxiproxyVersion(options.toxiproxy) },
    settings: {
      samples: n,
      sampleBytes: options.sampleBytes,
      batchSize: options.batchSize,
      epochs,
      rttsMs: options.rttsMs,
      rtt: 'added round trip, half of it each way (toxiproxy latency toxics, jitter 10% up to 5 ms)',
      jobs: options.jobs,
      cache: options.cache,
      oversize: o,
      cacheFolder: os.tmpdir(),
      stream: 'split all, out of order, server prefetch; one stream per epoch',
    },
    dataset,
    oversizeDataset,
    legs,
    sweep,
    oversize,
    goals: cacheGoals(legs, sweep),
    notes: run.notes,
    childPids,
    toxiproxyPid: toxiproxy.pid,
  });
}

/** `toxiproxy-server -version`'s answer, or `unknown`. */
function toxiproxyVersion(binary: string): string {
  try {
    return execFileSync(binary, ['-version'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

/** Everything `bench cache` measured, as written to its JSON file. */
export type CacheBenchReport = Awaited<ReturnType<typeof runCacheBench>>;
