import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { serverConfigSchema } from '../../src/server/index.js';
import { startServeProcess, warmUpLoader, type ServeProcess } from '../stream/serveProcess.js';
import { preparePhotoBench } from '../dataset/benchDataset.js';
import { startBenchChild } from '../stream/startBenchChild.js';
import { checkRanksFile } from './checkExactlyOnce.js';
import type { ConcurrencyBenchOptions } from './ConcurrencyBenchOptions.js';
import type { ConcurrencyRun } from './ConcurrencyBenchReport.js';
import { interleavedSchedule } from './interleavedSchedule.js';
import type { RanksClientConfig, RanksClientResult } from './ranksClientChild.js';
import { summarizeConcurrencyRuns } from './summarizeConcurrencyRuns.js';
import { measureLoaderRun } from '../measure/measureLoaderRun.js';
import { startBenchRun } from '../report/benchRun.js';

/** The child script, relative to the folder `startBenchChild` runs scripts from. */
const CLIENT_SCRIPT = '../concurrency/ranksClientChild';

/**
 * Benchmark scenario F: one real `serve` process, and for every k of `options.streams` the k
 * ranks of one job (world size k, out of order, the loader's defaults) streaming the same
 * seed's epochs of the `bench stream` dataset at once, from one client child (see
 * `ranksClientChild.ts` for why one). Runs are interleaved across k (see
 * `interleavedSchedule`). Every run's ids are checked against the dataset's: the ranks
 * together must receive each sample exactly once per epoch (a failure is reported, not
 * thrown, so the figures still come out). Every child is ended whatever happens. Writes the
 * JSON report to `outDir`.
 */
export async function runConcurrencyBench(options: ConcurrencyBenchOptions) {
  const { log, progress, childPids, onSpawn, measureEach, writeReport } = startBenchRun(options);

  const { environment, dataset, datasetIds } = await preparePhotoBench({
    ...options,
    ids: true,
    progress,
    log,
  });

  let runs: ConcurrencyRun[];
  let serve: ServeProcess | undefined;
  const idsDir = await mkdtemp(path.join(os.tmpdir(), 'sl-bench-concurrency-'));
  try {
    if (options.cpuProfileDir) await mkdir(options.cpuProfileDir, { recursive: true });
    serve = await startServeProcess({
      db: options.db,
      onSpawn,
      ...(options.cpuProfileDir
        ? { nodeFlags: ['--cpu-prof', '--cpu-prof-dir', options.cpuProfileDir] }
        : {}),
    });
    await warmUpLoader(serve, options);
    const loader = serve;
    runs = await measureEach(
      'bench concurrency',
      'runs',
      interleavedSchedule(options.streams, options.runs),
      ({ streams, run }) =>
        measureRun(options, loader, datasetIds, {
          streams,
          run,
          onSpawn,
          idsFile: path.join(idsDir, `ids-${run}-${streams}.json`),
        }),
      (r, { streams, run }) =>
        `run ${run + 1} k=${streams}: ${Math.round(r.samplesPerSecond)} samples/s, ` +
        `${r.megabytesPerSecond.toFixed(1)} MB/s, per stream min ` +
        `${Math.round(Math.min(...r.perStreamSamplesPerSecond))}, batch wait p50 ` +
        `${r.waitMs.p50.toFixed(1)} / p99 ${r.waitMs.p99.toFixed(1)} ms, exactly once ` +
        `${r.exactlyOnce.ok ? 'yes' : `NO (${JSON.stringify(r.exactlyOnce)})`}`,
    );
  } finally {
    await serve?.stop();
    await rm(idsDir, { recursive: true, force: true });
  }

  const serverDefaults = serverConfigSchema.parse({ db: {} });
  const { summary, scalingBase } = summarizeConcurrencyRuns(runs);
  return writeReport('concurrency', options.outDir, {
    environment,
    settings: {
      samples: options.samples,
      streams: options.streams,
      runs: options.runs,
      batchSize: options.batchSize,
      epochs: options.epochs,
      clients:
        'one client process hosting the k ranks, each with its own LoaderClient ' +
        '(own channel and HTTP/2 connection)',
      serverDefaultPrefetch: serverDefaults.defaultPrefetch,
      serverMaxInFlightPerStream: serverDefaults.maxInFlightPerStream,
      serverMaxConcurrentStreams: serverDefaults.maxConcurrentStreams,
      connectionsPerHost: options.db.connectionsPerHost,
      peakRssPerRun: runs.every((r) => r.loaderPeakRssBytes !== undefined),
      ...(options.cpuProfileDir ? { cpuProfileDir: options.cpuProfileDir } : {}),
    },
    dataset,
    runs,
    summary,
    scalingBase,
    servePid: serve.pid,
    childPids,
  });
}

/**
 * Runs one client child with k ranks: waits until its clients are connected and warmed up,
 * resets the loader's peak RSS, samples CPU times, lets it go, and samples again when it
 * reports; the child is ended whatever happens. Then checks each epoch's ids.
 */
async function measureRun(
  options: ConcurrencyBenchOptions,
  serve: ServeProcess,
  datasetIds: readonly string[],
  place: { streams: number; run: number; onSpawn: (pid: number) => void; idsFile: string },
): Promise<ConcurrencyRun> {
  const config: RanksClientConfig = {
    address: serve.address,
    dataset: options.dataset,
    batchSize: options.batchSize,
    seed: place.run,
    epochs: options.epochs,
    streams: place.streams,
    idsFile: place.idsFile,
  };
  const child = startBenchChild<RanksClientResult>(CLIENT_SCRIPT, config, {
    onSpawn: place.onSpawn,
  });
  const {
    result,
    cpu: { loader, db },
    loaderPeakRssBytes: rss,
  } = await measureLoaderRun(child, { loader: serve.pid, db: options.dbPid }, options.signal);
  const { exactlyOnce, samples, bytes } = await checkRanksFile(
    place.idsFile,
    datasetIds,
    options.epochs,
    result.ranks,
  );
  return {
    streams: place.streams,
    run: place.run,
    seed: config.seed,
    samples,
    bytes,
    wallSeconds: result.wallSeconds,
    samplesPerSecond: samples / result.wallSeconds,
    megabytesPerSecond: bytes / 1e6 / result.wallSeconds,
    perStreamSamplesPerSecond: result.ranks.map((r) => r.samples / r.wallSeconds),
    waitMs: result.waitMs,
    firstBatchMsMax: Math.max(...result.ranks.map((r) => r.firstBatchMs)),
    cpuSeconds: {
      ...(loader === undefined ? {} : { loader }),
      ...(db === undefined ? {} : { db }),
      client: result.cpuSeconds,
    },
    ...(loader === undefined ? {} : { loaderCpuSecondsPerGB: loader / (bytes / 1e9) }),
    ...(rss === undefined ? {} : { loaderPeakRssBytes: rss }),
    exactlyOnce,
  };
}

/** Everything `bench concurrency` measured, as written to its JSON file. */
export type ConcurrencyBenchReport = Awaited<ReturnType<typeof runConcurrencyBench>>;
