import fc from 'fast-check';
import { LoaderClient } from '../../../src/client/LoaderClient.js';
import type { DbConfig } from '../../../src/core/index.js';
import { ensureGeneratedDataset } from '../../dataset/benchDataset.js';
import { scrapeMetrics } from '../probe/scrapeMetrics.js';
import { startProbedServe } from '../probe/startProbedServe.js';
import { treeUsage } from '../probe/treeUsage.js';
import { createSplitsCases } from './createSplitsCases.js';
import type { FuzzReport } from './FuzzReport.js';
import type { FuzzTargets } from './FuzzTargets.js';
import { fuzzConnections } from './fuzzConnections.js';
import { loaderCodec } from './loaderCodec.js';
import { RawLoaderClient } from './RawLoaderClient.js';
import { rawEncodingCases } from './rawEncodingCases.js';
import { sendFuzzCases } from './sendFuzzCases.js';
import { streamBatchesCases } from './streamBatchesCases.js';

/** Options of {@link runFuzzBench}. @internal */
export interface FuzzBenchOptions {
  db: DbConfig;
  /** Dataset to make (if missing) and aim at; default `faults_fuzz`. */
  dataset?: string;
  /** Its samples (default 500). */
  samples?: number;
  /** Generated requests (default 1,200). */
  requests?: number;
  /** fast-check seed (default: random, reported). */
  seed?: number;
  /** Requests in flight (default 8), each worker of the fuzzer on a connection of its own. */
  concurrency?: number;
  /** `serve --workers` (default: serve's own default, the CPU quota). */
  workers?: number;
  /** Hostile connections: random-bytes ones, half-open ones, partial calls (default 100, 60, 60). */
  connections?: { randomBytes: number; halfOpen: number; partialCalls: number; holdMs: number };
  log?: (line: string) => void;
  /** Called with requests answered so far and the total, every 100 requests. */
  progress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

/**
 * Fuzzes a real `serve` process (spawned here, ended here): generated StreamBatches and
 * CreateSplits requests sent as raw protobuf, then hostile connections below gRPC held while a
 * normal epoch streams, then a normal epoch again. Reports the statuses per kind of request
 * against the right ones, crashes, INTERNAL streams, RSS and file descriptors before and after.
 * Figures only: the integration test asserts on them.
 *
 * @internal
 */
export async function runFuzzBench(options: FuzzBenchOptions): Promise<FuzzReport> {
  const started = performance.now();
  const log = options.log ?? (() => undefined);
  const dataset = options.dataset ?? 'faults_fuzz';
  const samples = options.samples ?? 500;
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  await ensureGeneratedDataset(options.db, { name: dataset, samples });
  // Keepalive short enough that a held connection which never answers a ping is cut while
  // the benchmark holds it.
  const serve = await startProbedServe({
    db: options.db,
    args: [
      '--keepalive-time-ms',
      '4000',
      '--keepalive-timeout-ms',
      '4000',
      ...(options.workers === undefined ? [] : ['--workers', String(options.workers)]),
    ],
  });
  const concurrency = options.concurrency ?? 8;
  const raws = Array.from({ length: concurrency }, () => new RawLoaderClient(serve.address));
  const raw = raws[0]!;
  const sdk = new LoaderClient(serve.address);
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, treeUsage(serve.pid).rssBytes)), 200);
  try {
    const codec = loaderCodec();
    const setup = await raw.unary(
      'CreateSplits',
      codec.encode('CreateSplits', {
        dataset,
        name: 'fzbase',
        parts: [
          { name: 'train', weight: 7 },
          { name: 'val', weight: 3 },
        ],
        newVersion: true,
      }),
      60_000,
    );
    if (setup.status !== 'OK')
      throw new Error(`CreateSplits fzbase: ${setup.status} ${setup.details}`);
    const tokenRequest = { dataset, split: 'all', batchSize: 32, seed: '11', epochs: 3 };
    const first = await raw.stream(codec.encode('StreamBatches', tokenRequest), 60_000);
    if (!first.first)
      throw new Error(`no batch to take a token from: ${first.status} ${first.details}`);
    const targets: FuzzTargets = {
      dataset,
      splitSet: 'fzbase',
      tokenRequest,
      token: codec.resumeTokenOf(first.first),
      maxBatchSize: 8192,
      maxPrefetch: 64,
      maxWindowSamples: 65536,
    };
    const cases = fc.sample(
      fc.oneof(
        { weight: 5, arbitrary: streamBatchesCases(targets) },
        { weight: 3, arbitrary: createSplitsCases(targets) },
        { weight: 2, arbitrary: rawEncodingCases(targets) },
      ),
      { numRuns: options.requests ?? 1200, seed },
    );
    const normalEpoch = async (): Promise<number> => {
      let n = 0;
      for await (const batch of sdk.streamBatches({
        dataset,
        split: 'all',
        batchSize: 50,
        seed: 5,
      })) {
        n += batch.samples.length;
      }
      return n;
    };
    await normalEpoch(); // warm-up: caches, JIT
    const before = treeUsage(serve.pid);
    log(`fuzz: ${cases.length} requests (seed ${seed}) to ${serve.address}`);
    const outcome = await sendFuzzCases(raws, cases, {
      timeoutMs: 30_000,
      ...(options.progress ? { progress: options.progress } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    log(`fuzz: ${outcome.wrongCount} wrong answers; hostile connections next`);
    let normalSamplesWhileHeld = 0;
    const connections = await fuzzConnections(serve.address, {
      randomBytes: 100,
      halfOpen: 60,
      partialCalls: 60,
      holdMs: 12_000,
      ...options.connections,
      seed,
      whileHeld: async () => {
        normalSamplesWhileHeld = await normalEpoch();
      },
    });
    const normalSamplesAfter = await normalEpoch();
    // Let closed sockets and finished calls be reaped before counting.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const metrics = await scrapeMetrics(serve.metricsAddress);
    const after = treeUsage(serve.pid);
    const healthzAfter = await fetch(`http://${serve.metricsAddress}/healthz`, {
      signal: AbortSignal.timeout(10_000),
    }).then(
      (r) => r.status,
      () => 0,
    );
    const internalErrors =
      (metrics.get('scylla_loader_stream_errors_total{code="INTERNAL"}') ?? 0) +
      (metrics.get('scylla_loader_stream_errors_total{code="UNKNOWN"}') ?? 0);
    return {
      seed,
      ...outcome,
      connections,
      crash: serve.crash(),
      internalErrors,
      processes: after.processes,
      workerDeaths: serve.workerDeaths(),
      rssBeforeBytes: before.rssBytes,
      rssAfterBytes: after.rssBytes,
      rssPeakBytes: Math.max(peak, after.rssBytes),
      fdsBefore: before.fds,
      fdsAfter: after.fds,
      healthzAfter,
      normalSamplesWhileHeld,
      normalSamplesAfter,
      datasetSamples: samples,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    clearInterval(sampler);
    for (const r of raws) r.close();
    sdk.close();
    const crash = serve.crash();
    await serve.stop();
    if (crash) log(`the loader crashed (${crash}):\n${serve.output()}`);
  }
}
