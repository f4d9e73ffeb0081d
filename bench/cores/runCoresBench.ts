import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { checkRanksFile } from '../concurrency/checkExactlyOnce.js';
import { interleavedSchedule } from '../concurrency/interleavedSchedule.js';
import type { RanksClientConfig, RanksClientResult } from '../concurrency/ranksClientChild.js';
import { cpuMeter, rssBytes } from '../../test/support/index.js';
import { startServeProcess, type ServeProcess } from '../stream/serveProcess.js';
import { preparePhotoBench } from '../dataset/benchDataset.js';
import { type BenchChild, startBenchChild } from '../stream/startBenchChild.js';
import { median } from '../stream/stats.js';
import type { CoresBenchOptions } from './CoresBenchOptions.js';
import { startBenchRun } from '../report/benchRun.js';

/** The child script, relative to the folder `startBenchChild` runs scripts from. */
const CLIENT_SCRIPT = '../concurrency/ranksClientChild';

/**
 * `bench cores`: for every worker count of `options.workers`, a fresh `serve --workers N`
 * (unpinned: the workers need the cores) and the same k ranks of one job streaming the
 * `bench stream` dataset at once from one client child, each connection on its own HTTP/2
 * connection so the primary's round robin spreads them. Runs are interleaved across worker
 * counts. Measured per run: aggregate samples/s, the CPU seconds of all the loader's processes
 * (primary and workers) per GB, each worker's RSS, how many streams each worker served, and
 * an exactly-once check of the ranks' ids. Every child is ended whatever happens.
 */
export async function runCoresBench(options: CoresBenchOptions) {
  const { log, progress, measureEach, writeReport } = startBenchRun(options);
  const { environment, dataset, datasetIds } = await preparePhotoBench({
    ...options,
    ids: true,
    progress,
    log,
  });

  const idsDir = await mkdtemp(path.join(os.tmpdir(), 'sl-bench-cores-'));
  let runs: CoresRun[];
  try {
    runs = await measureEach(
      'bench cores',
      'runs',
      interleavedSchedule(options.workers, options.runs),
      ({ streams: workers, run }) =>
        measureRun(options, datasetIds, {
          workers,
          run,
          idsFile: path.join(idsDir, `ids-${run}-${workers}.json`),
        }),
      (r, { streams: workers, run }) =>
        `run ${run + 1} workers=${workers}: ${Math.round(r.samplesPerSecond)} samples/s, ` +
        `loader ${r.loaderCpuSecondsPerGB.toFixed(2)} CPU s per GB, streams per worker ` +
        `${r.streamsPerWorker.join('/')}, exactly once ${r.exactlyOnce.ok ? 'yes' : 'NO'}`,
    );
  } finally {
    await rm(idsDir, { recursive: true, force: true });
  }

  return writeReport('cores', options.outDir, {
    environment,
    settings: {
      samples: options.samples,
      workers: options.workers,
      streams: options.streams,
      runs: options.runs,
      batchSize: options.batchSize,
      epochs: options.epochs,
    },
    dataset,
    runs,
    summary: summarize(runs),
  });
}

/** One measured run: k ranks of one job against a loader of `workers` processes. */
type CoresRun = Awaited<ReturnType<typeof measureRun>>;

/**
 * One loader of `workers` processes, one client child of k ranks, measured; both ended. CPU
 * seconds of the loader are its primary's and workers' together; RSS is each worker's (and
 * the primary's) at the end of the run; streams per worker come from their logs.
 */
async function measureRun(
  options: CoresBenchOptions,
  datasetIds: readonly string[],
  place: { workers: number; run: number; idsFile: string },
) {
  let serve: ServeProcess | undefined;
  let ranks: BenchChild<RanksClientResult> | undefined;
  try {
    serve = await startServeProcess({
      db: options.db,
      env: { SCYLLA_LOADER_WORKERS: String(place.workers), SCYLLA_LOADER_LOG_LEVEL: 'info' },
    });
    // A single process serves itself; a cluster's workers serve and the primary routes.
    const workerPids = serve.workerPids.length > 0 ? serve.workerPids : [serve.pid];
    const config: RanksClientConfig = {
      address: serve.address,
      dataset: options.dataset,
      batchSize: options.batchSize,
      seed: place.run,
      epochs: options.epochs,
      streams: options.streams,
      idsFile: place.idsFile,
    };
    ranks = startBenchChild<RanksClientResult>(CLIENT_SCRIPT, config);
    await ranks.ready;
    const endsBefore = serve.streamEnds.length;
    const pids: Record<string, number | undefined> = { primary: serve.pid, db: options.dbPid };
    workerPids.forEach((pid, i) => (pids[`worker${i}`] = pid));
    const meter = cpuMeter(pids);
    ranks.go();
    const result = await ranks.result;
    const cpu = meter();
    // The stream_end records of the measured streams name the worker (pid) that served each.
    await waitFor(() => serve!.streamEnds.length - endsBefore >= options.streams, 10_000);
    const ends = serve.streamEnds.slice(endsBefore);
    const streamsPerWorker = workerPids.map((pid) => ends.filter((e) => e['pid'] === pid).length);
    const workersCpu = workerPids.reduce((a, _, i) => a + (cpu[`worker${i}`] ?? 0), 0);
    const primary = serve.workerPids.length > 0 ? (cpu['primary'] ?? 0) : 0;
    const loader = workersCpu + primary;
    const { exactlyOnce, samples, bytes } = await checkRanksFile(
      place.idsFile,
      datasetIds,
      options.epochs,
      result.ranks,
    );
    const primaryRss = serve.workerPids.length > 0 ? rssBytes(serve.pid) : undefined;
    return {
      workers: place.workers,
      run: place.run,
      samples,
      bytes,
      wallSeconds: result.wallSeconds,
      samplesPerSecond: samples / result.wallSeconds,
      megabytesPerSecond: bytes / 1e6 / result.wallSeconds,
      cpuSeconds: {
        loader,
        primary,
        client: result.cpuSeconds,
        ...(cpu['db'] === undefined ? {} : { db: cpu['db'] }),
      },
      loaderCpuSecondsPerGB: loader / (bytes / 1e9),
      workerRssBytes: workerPids.map((pid) => rssBytes(pid) ?? 0),
      ...(primaryRss === undefined ? {} : { primaryRssBytes: primaryRss }),
      streamsPerWorker,
      exactlyOnce,
    };
  } finally {
    await ranks?.stop();
    await serve?.stop();
  }
}

async function waitFor(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
}

/** Medians per worker count, scaled against the smallest count measured. */
function summarize(runs: readonly CoresRun[]) {
  const counts = [...new Set(runs.map((r) => r.workers))].sort((a, b) => a - b);
  const rows = counts.map((workers) => {
    const rs = runs.filter((r) => r.workers === workers);
    const dbs = rs.map((r) => r.cpuSeconds.db).filter((x): x is number => x !== undefined);
    return {
      workers,
      runs: rs.length,
      samplesPerSecond: median(rs.map((r) => r.samplesPerSecond)),
      megabytesPerSecond: median(rs.map((r) => r.megabytesPerSecond)),
      scaling: 1,
      cpuSeconds: {
        loader: median(rs.map((r) => r.cpuSeconds.loader)),
        client: median(rs.map((r) => r.cpuSeconds.client)),
        ...(dbs.length > 0 ? { db: median(dbs) } : {}),
      },
      loaderCpuSecondsPerGB: median(rs.map((r) => r.loaderCpuSecondsPerGB)),
      loaderCoresBusy: median(rs.map((r) => r.cpuSeconds.loader / r.wallSeconds)),
      workerRssMiB: median(rs.flatMap((r) => r.workerRssBytes)) / 2 ** 20,
      exactlyOnce: rs.every((r) => r.exactlyOnce.ok),
    };
  });
  const base = rows[0]?.samplesPerSecond ?? 1;
  for (const row of rows) row.scaling = row.samplesPerSecond / base;
  return rows;
}

/** Everything `bench cores` measured, as written to its JSON file. */
export type CoresBenchReport = Awaited<ReturnType<typeof runCoresBench>>;
