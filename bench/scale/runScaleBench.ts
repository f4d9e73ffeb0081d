import { setTimeout as sleep } from 'node:timers/promises';
import { createDbClient, listedSource } from '../../src/core/index.js';
import { benchEnvironment } from '../../test/support/index.js';
import type { SdkClientConfig, SdkClientResult } from '../stream/sdkClientChild.js';
import { startServeProcess } from '../stream/serveProcess.js';
import { startBenchChild } from '../stream/startBenchChild.js';
import { ensureBenchDataset } from '../../test/support/index.js';
import { prepareScaleSplits, type ScaleSplit } from './prepareScaleSplits.js';
import type { ScaleBenchOptions } from './ScaleBenchOptions.js';
import type { ScaleRun } from './ScaleBenchReport.js';
import { SCALE_CLASSES, SCALE_SAMPLE_BYTES, scaleIngestEntry } from './scaleSample.js';
import { rssVerdict, summarizeScaleRuns } from './summarizeScaleRuns.js';
import { measureLoaderRun } from '../measure/measureLoaderRun.js';
import { startBenchRun } from '../report/benchRun.js';

/** The client child is `bench stream`'s trainer. */
const CLIENT_SCRIPT = 'sdkClientChild';

/**
 * Benchmark E of the issue (scale): one dataset of 100-byte samples as large as the largest
 * size, split sets capped at each size (made once, reused), and for each size `runs` streams
 * of one epoch, each through a fresh `serve` child so its peak RSS is that of serving one
 * stream of that size. The trainer child first streams a small warm-up split (warming both
 * processes' JIT and connections without loading the measured split's ids, so the measured
 * stream's first batch includes loading them); then the loader's RSS is read, its peak reset
 * and its CPU sampled around the measured stream. Runs go round by round, the order of sizes
 * alternating, so slow drift of a shared machine falls on every size alike. Every child is
 * ended whatever happens; the JSON report is written to `outDir`.
 */
export async function runScaleBench(options: ScaleBenchOptions) {
  const { log, signal, progress, childPids, onSpawn, measureEach, writeReport } =
    startBenchRun(options);
  const sizes = [...options.sizes].sort((a, b) => a - b);
  const samples = sizes[sizes.length - 1]!;
  const warmupSamples = Math.min(options.warmupSamples, samples);

  const client = await createDbClient(options.db);
  let environment;
  let dataset;
  let splits: ScaleSplit[];
  let warmup: ScaleSplit;
  try {
    environment = await benchEnvironment(client);
    dataset = await ensureBenchDataset(client, {
      name: options.dataset,
      samples,
      totalBytes: samples * SCALE_SAMPLE_BYTES,
      concurrency: 64,
      progress,
      signal,
      source: async () =>
        listedSource({
          description: `bench scale: ${samples} generated samples of ${SCALE_SAMPLE_BYTES} bytes`,
          entries: Array.from({ length: samples }, (_, i) => scaleIngestEntry(i)),
          labelNames: Array.from({ length: SCALE_CLASSES }, (_, i) => `c${i}`),
          columns: [],
        }),
    });
    log(
      `dataset ${dataset.name}: ${dataset.samples} samples of ${SCALE_SAMPLE_BYTES} B` +
        (dataset.ingested ? `, written in ${dataset.prepareSeconds.toFixed(0)} s` : ''),
    );
    const hooks = { log, ...(signal ? { signal } : {}) };
    splits = await prepareScaleSplits(client, options.dataset, sizes, hooks);
    // A set of its own, never one of the measured sizes: a measured stream must load its ids.
    const [own] = await prepareScaleSplits(
      client,
      options.dataset,
      [warmupSamples],
      hooks,
      'scale_warmup',
    );
    if (own === undefined) throw new Error('the warm-up split set came back empty');
    warmup = own;
  } finally {
    await client.shutdown();
  }

  const plan = Array.from({ length: options.runs }, (_, run) =>
    (run % 2 === 0 ? splits : [...splits].reverse()).map((split) => ({ split, run })),
  ).flat();
  const runs: ScaleRun[] = await measureEach(
    'bench scale',
    'runs',
    plan,
    ({ split, run }) => measureOne(options, split, warmup!, run, onSpawn),
    (r, { split, run }) =>
      `run ${run + 1} ${split.split} (${r.samples} samples): peak RSS ` +
      `${mib(r.loaderPeakRssBytes)} MiB (before ${mib(r.loaderRssBeforeBytes)}), ` +
      `${r.loaderCpuMsPerBatch?.toFixed(2) ?? '-'} loader CPU ms/batch, first batch ` +
      `${r.firstBatchMs.toFixed(0)} ms, ${Math.round(r.samplesPerSecond)} samples/s`,
  );

  const summary = summarizeScaleRuns(runs);
  const rss = rssVerdict(summary);
  return writeReport('scale', options.outDir, {
    environment,
    settings: {
      sizes,
      runs: options.runs,
      batchSize: options.batchSize,
      ordering: 'out-of-order',
      warmupSplit: warmup!.split,
      warmupSamples: warmup!.size,
      sampleBytes: SCALE_SAMPLE_BYTES,
      ...(options.samplesPerRun === undefined ? {} : { samplesPerRun: options.samplesPerRun }),
    },
    dataset,
    splits,
    runs,
    summary,
    ...(rss ? { rss } : {}),
    childPids,
  });
}

/**
 * One measured stream: a fresh loader, a trainer child that warms up on the warm-up split and
 * then streams `split` when told; both are ended whatever happens.
 */
async function measureOne(
  options: ScaleBenchOptions,
  split: ScaleSplit,
  warmup: ScaleSplit,
  run: number,
  onSpawn: (pid: number) => void,
): Promise<ScaleRun> {
  const { signal } = options;
  const serve = await startServeProcess({ db: options.db, onSpawn });
  try {
    const config: SdkClientConfig = {
      address: serve.address,
      dataset: options.dataset,
      split: split.split,
      warmupSplit: warmup.split,
      warmupWorldSize: 1,
      batchSize: options.batchSize,
      seed: run,
      ordering: 'out-of-order',
      ...(options.samplesPerRun === undefined ? {} : { maxSamples: options.samplesPerRun }),
    };
    const child = startBenchChild<SdkClientResult>(CLIENT_SCRIPT, config, { onSpawn });
    const {
      result,
      cpu: { loader, db },
      loaderRssBeforeBytes: before,
      loaderPeakRssBytes: peak,
      loaderRssAfterBytes: after,
    } = await measureLoaderRun(child, { loader: serve.pid, db: options.dbPid }, signal);
    const expected = expectedSamples(split.size, options);
    if (result.samples !== expected) {
      throw new Error(
        `streaming ${split.split} delivered ${result.samples} samples, expected ${expected}`,
      );
    }
    // The loader's own count of the measured stream (the warm-up's `stream end` comes first;
    // the loader logs the measured one just after ending the call).
    for (let i = 0; i < 40 && serve.streamEnds.length < 2; i++) {
      await sleep(50);
    }
    const loaderSamples = serve.streamEnds[1]?.['samples'];
    return {
      size: split.cap,
      split: split.split,
      run,
      seed: run,
      splitSamples: split.size,
      samples: result.samples,
      ...(typeof loaderSamples === 'number' ? { loaderSamples } : {}),
      batches: result.batches,
      bytes: result.bytes,
      wallSeconds: result.wallSeconds,
      samplesPerSecond: result.samples / result.wallSeconds,
      firstBatchMs: result.firstBatchMs,
      ...(loader === undefined
        ? {}
        : { loaderCpuSeconds: loader, loaderCpuMsPerBatch: (loader * 1000) / result.batches }),
      clientCpuSeconds: result.cpuSeconds,
      ...(db === undefined ? {} : { dbCpuSeconds: db }),
      ...(before === undefined ? {} : { loaderRssBeforeBytes: before }),
      ...(peak === undefined ? {} : { loaderPeakRssBytes: peak }),
      ...(after === undefined ? {} : { loaderRssAfterBytes: after }),
    };
  } finally {
    await serve.stop();
  }
}

function mib(bytes: number | undefined): string {
  return bytes === undefined ? '-' : (bytes / 2 ** 20).toFixed(1);
}

/**
 * Samples a run of a split of `size` delivers: the whole split, or with `samplesPerRun` the
 * whole batches that reach it (the trainer stops after the batch that gets there). @internal
 */
export function expectedSamples(
  size: number,
  options: Pick<ScaleBenchOptions, 'samplesPerRun' | 'batchSize'>,
): number {
  if (options.samplesPerRun === undefined) return size;
  const batches = Math.ceil(options.samplesPerRun / options.batchSize);
  return Math.min(size, batches * options.batchSize);
}

/** Everything `bench scale` measured, as written to its JSON file. */
export type ScaleBenchReport = Awaited<ReturnType<typeof runScaleBench>>;
