import { type ConnectionFuzzReport, fuzzConnections } from './fuzzConnections.js';
import { type FuzzOutcome, sendFuzzCases } from './sendFuzzCases.js';
import fc from 'fast-check';
import { LoaderClient } from '../../../src/client/index.js';
import type { DbConfig } from '../../../src/core/index.js';
import { ensureGeneratedDataset } from '../../support/index.js';
import { scrapeMetrics } from '../probe/scrapeMetrics.js';
import { startProbedServe } from '../probe/startProbedServe.js';
import { mib, treeUsage } from '../probe/treeUsage.js';
import { createSplitsCases } from './createSplitsCases.js';
import type { FuzzTargets } from './FuzzCase.js';
import { loaderCodec } from './loaderCodec.js';
import { RawLoaderClient } from './RawLoaderClient.js';
import { rawEncodingCases } from './rawEncodingCases.js';
import { streamBatchesCases } from './streamBatchesCases.js';

/** Figures of one `runFuzzBench`: what was sent, what came back, how the loader held up. @internal */
export interface FuzzReport extends FuzzOutcome {
  /** fast-check seed of the generated requests (the same seed sends the same requests). */
  seed: number;
  connections: ConnectionFuzzReport;
  /** How the loader process ended by itself, if it did (a crash); undefined: it never did. */
  crash: string | undefined;
  /** StreamBatches streams that ended INTERNAL or UNKNOWN, by the loader's own metric. */
  internalErrors: number;
  /** Calls the loader refused as undecodable, by its `scylla_loader_calls_refused_total`. */
  undecodableRefused: number;
  /** Loader processes alive at the end (a `serve --workers N` primary and its workers). */
  processes: number;
  /** Workers the primary logged as dead during the run (0: none crashed). */
  workerDeaths: number;
  /** HTTP status of `/healthz` at the end (200: every worker serving). */
  healthzAfter: number;
  /**
   * RSS of the loader (all its processes) before the first fuzzed request, after the last,
   * and at its peak.
   */
  rssBeforeBytes: number;
  rssAfterBytes: number;
  rssPeakBytes: number;
  /** Open file descriptors before and after (hostile connections closed). */
  fdsBefore: number;
  fdsAfter: number;
  /** Samples of a normal epoch streamed while hostile connections were held, and after. */
  normalSamplesWhileHeld: number;
  normalSamplesAfter: number;
  /** Samples the dataset holds (what a normal epoch must yield). */
  datasetSamples: number;
  seconds: number;
}

/**
 * A `bench fuzz` report as Markdown: one row per kind of generated request (sent, statuses
 * seen, wrong answers), then how the loader held up (crashes, INTERNAL streams, hostile
 * connections, RSS and file descriptors before and after, a normal epoch while and after).
 *
 * @internal
 */
export function formatFuzzReport(r: FuzzReport): string {
  const wrongByKind = new Map<string, number>();
  for (const w of r.wrong) wrongByKind.set(w.kind, (wrongByKind.get(w.kind) ?? 0) + 1);
  const rows = Object.entries(r.byKind)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, k]) => {
      const statuses = Object.entries(k.statuses)
        .sort(([, a], [, b]) => b - a)
        .map(([s, n]) => `${s} ${n}`)
        .join(', ');
      return `| ${kind} | ${k.sent} | ${statuses} | ${wrongByKind.get(kind) ?? 0} |`;
    });
  const c = r.connections;
  const lines = [
    `fuzz: ${r.requests} generated requests (fast-check seed ${r.seed}), ${r.seconds.toFixed(0)} s`,
    '',
    '| kind | sent | statuses | wrong |',
    '|---|---|---|---|',
    ...rows,
    '',
    '| figure | value |',
    '|---|---|',
    `| wrong statuses | ${r.wrongCount} |`,
    `| loader crashes (process or worker) | ${r.crash ? `1 (${r.crash})` : 0} (worker deaths ${r.workerDeaths}) |`,
    `| streams ended INTERNAL/UNKNOWN | ${r.internalErrors} |`,
    `| calls refused as undecodable (INVALID_ARGUMENT, by the loader's metric) | ${r.undecodableRefused} |`,
    `| random-bytes connections (closed by the loader) | ${c.randomBytes} (${c.randomBytesClosedByServer}) |`,
    `| half-open connections + partial calls held ${(c.heldMs / 1000).toFixed(0)} s (closed by the loader) | ${c.halfOpen} + ${c.partialCalls} (${c.heldClosedByServer}) |`,
    `| normal epoch while held / after (of ${r.datasetSamples}) | ${r.normalSamplesWhileHeld} / ${r.normalSamplesAfter} |`,
    `| loader processes at the end, /healthz | ${r.processes}, HTTP ${r.healthzAfter} |`,
    `| RSS before / peak / after (MiB, all processes) | ${mib(r.rssBeforeBytes)} / ${mib(r.rssPeakBytes)} / ${mib(r.rssAfterBytes)} |`,
    `| open fds before / after | ${r.fdsBefore} / ${r.fdsAfter} |`,
  ];
  const firsts = r.wrong.filter((w, i) => r.wrong.findIndex((x) => x.kind === w.kind) === i);
  if (firsts.length > 0) {
    lines.push('', 'wrong answers (the first of each kind):');
    for (const w of firsts) {
      lines.push(
        `- ${w.kind}: ${w.status} (expected ${w.expected.join('|')}): ${w.details} [${w.note}]`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Options of {@link runFuzzBench}. @internal */
export interface FuzzBenchOptions {
  db: DbConfig;
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
  const [dataset, samples] = ['faults_fuzz', 500];
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
    let undecodableRefused = 0;
    for (const [series, value] of metrics) {
      if (
        series.startsWith('scylla_loader_calls_refused_total{') &&
        series.includes('code="INVALID_ARGUMENT"')
      ) {
        undecodableRefused += value;
      }
    }
    return {
      seed,
      ...outcome,
      connections,
      crash: serve.crash(),
      internalErrors,
      undecodableRefused,
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
    await serve.stop(log);
  }
}
