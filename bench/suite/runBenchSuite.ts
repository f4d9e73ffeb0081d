import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createDbClient, type DbConfig, invalidArgument } from '../../src/core/index.js';
import type { PhotoPresetName } from '../../src/datasets/photos/index.js';
import { runCeilingBench, type CeilingBenchReport } from '../ceiling/runCeilingBench.js';
import { resolveConcurrencyBenchOptions } from '../concurrency/ConcurrencyBenchOptions.js';
import type { ConcurrencyBenchReport } from '../concurrency/runConcurrencyBench.js';
import { runConcurrencyBench } from '../concurrency/runConcurrencyBench.js';
import { resolveLatencyBenchOptions } from '../latency/LatencyBenchOptions.js';
import type { LatencyBenchReport } from '../latency/runLatencyBench.js';
import { runLatencyBench } from '../latency/runLatencyBench.js';
import { resolveScaleBenchOptions } from '../scale/ScaleBenchOptions.js';
import type { ScaleBenchReport } from '../scale/runScaleBench.js';
import { runScaleBench } from '../scale/runScaleBench.js';
import { benchEnvironment, type BenchEnvironment } from '../../test/support/index.js';
import { resolveStreamBenchOptions } from '../stream/resolveStreamBenchOptions.js';
import { runStreamBench } from '../stream/runStreamBench.js';
import type { BenchProgressFactory } from '../stream/StreamBenchOptions.js';
import type { StreamBenchReport } from '../stream/runStreamBench.js';
import type { BenchSuiteReport } from './BenchSuiteReport.js';
import { formatSuiteReport } from './formatSuiteReport.js';
import { latencyVsA, suiteTargets } from './suiteTargets.js';

/** The suite's scenarios, in the order they run. */
export const SUITE_PARTS = ['ceiling', 'stream', 'latency', 'concurrency', 'scale'] as const;
/** A part of the suite: G, A-C, D, F, E. */
export type SuitePart = (typeof SUITE_PARTS)[number];

/** Settings of {@link runBenchSuite}. */
export interface BenchSuiteOptions {
  db: DbConfig;
  /** Pid of the local database node (CPU seconds, pinning); undefined for another cluster. */
  dbPid: number | undefined;
  toxiproxy: string;
  /** The repository's `.state` folder (datasets' image trees live under it). */
  stateRoot: string;
  /** Every part in its quick mode (small data, one run): a few minutes in all. */
  quick: boolean;
  /** Parts to run (default all). */
  parts?: readonly SuitePart[];
  /** The results folder: every part's JSON, `suite.json`, `suite.md`, `latency.svg`. */
  outDir: string;
  progress?: BenchProgressFactory;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/**
 * Runs the benchmark suite side by side in one invocation: G (the gRPC leg's ceiling), A to C
 * (`bench stream`, both placements; the ~110 kB and, in full mode, the ~20 kB payload), D
 * (`bench latency`: B and C under injected round trips and a congested route, both
 * placements), F (`bench concurrency`) and E (`bench scale`), then checks the targets
 * and writes the results folder. Each part writes its own JSON there too.
 */
export async function runBenchSuite(options: BenchSuiteOptions): Promise<BenchSuiteReport> {
  const started = performance.now();
  const startedAt = new Date();
  const parts = new Set(options.parts ?? SUITE_PARTS);
  const { db, dbPid, quick, outDir, stateRoot } = options;
  const log = options.log ?? (() => undefined);
  const common = {
    ...(options.progress ? { progress: options.progress } : {}),
    log,
    ...(options.signal ? { signal: options.signal } : {}),
  };
  await mkdir(outDir, { recursive: true });
  const client = await createDbClient(db);
  let environment: BenchEnvironment;
  try {
    environment = await benchEnvironment(client);
  } finally {
    await client.shutdown();
  }
  const heading = (text: string): void => log(`\n=== ${text} ===`);

  let ceiling: CeilingBenchReport | undefined;
  if (parts.has('ceiling')) {
    heading('G: the gRPC leg against raw HTTP/2 (bench ceiling)');
    ceiling = await runCeilingBench({ db, quick, outDir, log });
  }
  const stream: Partial<Record<PhotoPresetName, StreamBenchReport>> = {};
  if (parts.has('stream')) {
    const payloads: PhotoPresetName[] = quick ? ['imagenet'] : ['imagenet', 'small'];
    for (const payload of payloads) {
      heading(`A-C: tight loop and service at 0 ms, ${payload} payload (bench stream)`);
      stream[payload] = await runStreamBench(
        resolveStreamBenchOptions({ db, dbPid, stateRoot, quick, payload, outDir, ...common }),
      );
    }
  }
  let latency: LatencyBenchReport | undefined;
  if (parts.has('latency')) {
    heading('D: B and C under injected latency (bench latency)');
    latency = await runLatencyBench(
      resolveLatencyBenchOptions({
        db,
        dbPid,
        toxiproxy: options.toxiproxy,
        stateRoot,
        quick,
        outDir,
        ...common,
      }),
    );
  }
  let concurrency: ConcurrencyBenchReport | undefined;
  if (parts.has('concurrency')) {
    heading('F: concurrent streams as ranks of one job (bench concurrency)');
    concurrency = await runConcurrencyBench(
      resolveConcurrencyBenchOptions({ db, dbPid, stateRoot, quick, outDir, ...common }),
    );
  }
  let scale: ScaleBenchReport | undefined;
  if (parts.has('scale')) {
    heading('E: split size against loader memory (bench scale)');
    scale = await runScaleBench(
      resolveScaleBenchOptions({ db, dbPid, stateRoot, quick, outDir, ...common }),
    );
  }

  const files: BenchSuiteReport['files'] = {
    json: path.join(outDir, 'suite.json'),
    markdown: path.join(outDir, 'suite.md'),
  };
  if (latency) {
    files.chart = path.join(outDir, 'latency.svg');
    await copyFile(latency.svgPath, files.chart);
  }
  const report: BenchSuiteReport = {
    startedAt: startedAt.toISOString(),
    seconds: (performance.now() - started) / 1000,
    quick,
    command: suiteCommand(options),
    environment,
    stream,
    ...(latency ? { latency } : {}),
    ...(concurrency ? { concurrency } : {}),
    ...(scale ? { scale } : {}),
    ...(ceiling ? { ceiling } : {}),
    targets: suiteTargets({
      ...(stream.imagenet ? { stream: stream.imagenet } : {}),
      ...(latency ? { latency } : {}),
      ...(scale ? { scale } : {}),
      ...(ceiling ? { ceiling } : {}),
    }),
    latencyVsA: latencyVsA({
      ...(stream.imagenet ? { stream: stream.imagenet } : {}),
      ...(latency ? { latency } : {}),
    }),
    files,
  };
  await writeFile(files.json, `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(files.markdown, formatSuiteReport(report));
  return report;
}

/** The command line that reproduces the run. */
function suiteCommand(options: BenchSuiteOptions): string {
  const args = ['npm run bench -- suite'];
  if (options.quick) args.push('--quick');
  if (options.parts) args.push(`--parts ${options.parts.join(',')}`);
  return args.join(' ');
}

/**
 * Recomputes the targets and the comparisons of a results folder's `suite.json` from the
 * figures it holds and writes `suite.json` and `suite.md` again (after a change to how they are
 * judged or shown; no benchmark runs).
 */
export async function rerenderBenchSuite(jsonPath: string): Promise<BenchSuiteReport> {
  let saved: BenchSuiteReport;
  try {
    saved = JSON.parse(await readFile(jsonPath, 'utf8')) as BenchSuiteReport;
  } catch (err) {
    throw invalidArgument(
      `--from ${jsonPath}: ${(err as Error).message}; give the suite.json of a results folder`,
    );
  }
  if (!Array.isArray(saved?.targets) || typeof saved.files?.json !== 'string') {
    throw invalidArgument(`--from ${jsonPath}: not a suite.json written by bench suite`);
  }
  const parts = {
    ...(saved.stream.imagenet ? { stream: saved.stream.imagenet } : {}),
    ...(saved.latency ? { latency: saved.latency } : {}),
    ...(saved.scale ? { scale: saved.scale } : {}),
    ...(saved.ceiling ? { ceiling: saved.ceiling } : {}),
  };
  // The folder given, wherever it was written (it may have been moved or copied since).
  const dir = path.dirname(jsonPath);
  const files: BenchSuiteReport['files'] = {
    json: jsonPath,
    markdown: path.join(dir, 'suite.md'),
    ...(saved.files.chart ? { chart: path.join(dir, path.basename(saved.files.chart)) } : {}),
  };
  const report: BenchSuiteReport = {
    ...saved,
    files,
    targets: suiteTargets(parts),
    latencyVsA: latencyVsA(parts),
  };
  await writeFile(report.files.json, `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(report.files.markdown, formatSuiteReport(report));
  return report;
}
