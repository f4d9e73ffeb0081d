import { setTimeout as sleep } from 'node:timers/promises';
import { LoaderClient } from '../../../src/client/index.js';
import type { DbConfig } from '../../../src/core/index.js';
import { ensureGeneratedDataset } from '../../support/index.js';
import { scrapeMetrics } from '../probe/scrapeMetrics.js';
import { startProbedServe } from '../probe/startProbedServe.js';
import { mib, treeUsage } from '../probe/treeUsage.js';

/** One sample of a soak, taken every few seconds. @internal */
export interface SoakSample {
  /** Seconds since the streams started. */
  at: number;
  rssBytes: number;
  fds: number;
  processes: number;
  /** Samples delivered to the clients so far. */
  delivered: number;
  /** V8 heap in use and memory outside it (Buffers), summed over workers from /metrics. */
  heapUsedBytes: number;
  externalBytes: number;
}

/** Figures of one `runSoakBench`. @internal */
export interface SoakReport {
  streams: number;
  seconds: number;
  /** Seconds of warm-up excluded from growth figures. */
  warmupSeconds: number;
  samplesDelivered: number;
  samplesPerSecond: number;
  /** Streams that ended with an error (each is retried by the SDK; counted, not hidden). */
  streamErrors: number;
  /** RSS of all loader processes just after warm-up, at the end, and the growth between. */
  rssAfterWarmupBytes: number;
  rssEndBytes: number;
  rssGrowthPercent: number;
  rssPeakBytes: number;
  /** Open file descriptors of all loader processes after warm-up and at the end. */
  fdsAfterWarmup: number;
  fdsEnd: number;
  fdsMax: number;
  /**
   * Event-loop delay of the loader from its /metrics (prom-client, between scrapes): the
   * largest p99 seen (the mean of the workers' p99s) and the largest max.
   */
  eventLoopP99Seconds: number;
  eventLoopMaxSeconds: number;
  processes: number;
  /** Scrapes of /metrics that failed (no answer, or not HTTP 200). */
  failedScrapes: number;
  /**
   * Scrapes in which a worker did not answer the primary in time (its figures there were
   * those of its last answer): the loader's own `scylla_loader_metrics_workers_missing`.
   */
  partialScrapes: number;
  crash: string | undefined;
  samples: SoakSample[];
}

/**
 * A `bench soak` report as Markdown: throughput, RSS and file descriptors after warm-up and
 * at the end, the loader's event-loop delay.
 *
 * @internal
 */
export function formatSoakReport(r: SoakReport): string {
  const lines = [
    `soak: ${r.streams} streams for ${r.seconds.toFixed(0)} s (warm-up ${r.warmupSeconds} s), ${r.processes} loader processes`,
    '',
    '| figure | value |',
    '|---|---|',
    `| samples delivered (samples/s) | ${r.samplesDelivered} (${r.samplesPerSecond.toFixed(0)}) |`,
    `| stream errors | ${r.streamErrors} |`,
    `| RSS after warm-up / end / peak (MiB, all processes) | ${mib(r.rssAfterWarmupBytes)} / ${mib(r.rssEndBytes)} / ${mib(r.rssPeakBytes)} |`,
    `| RSS growth after warm-up | ${r.rssGrowthPercent.toFixed(2)}% |`,
    `| open fds after warm-up / end / max | ${r.fdsAfterWarmup} / ${r.fdsEnd} / ${r.fdsMax} |`,
    `| event-loop delay p99 / max (worst scrape after warm-up) | ${(r.eventLoopP99Seconds * 1000).toFixed(0)} ms / ${(r.eventLoopMaxSeconds * 1000).toFixed(0)} ms |`,
    `| /metrics scrapes that failed / with a worker too busy to answer the primary | ${r.failedScrapes} / ${r.partialScrapes} |`,
    `| loader crashes | ${r.crash ? `1 (${r.crash})` : 0} |`,
  ];
  return `${lines.join('\n')}\n`;
}

/** Options of {@link runSoakBench}. @internal */
export interface SoakBenchOptions {
  db: DbConfig;
  /** Concurrent streams (default 64). */
  streams?: number;
  /** Seconds the streams run (default 60). */
  seconds?: number;
  /** Seconds of warm-up before the reference sample (default: 40% of the run, at least 30). */
  warmupSeconds?: number;
  /** Seconds between samples (default 5). */
  sampleEverySeconds?: number;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

const DATASET = 'faults_soak';
const SAMPLES = 4000;
const SAMPLE_BYTES = 2000;

/**
 * Soaks a spawned `serve`: `streams` SDK streams (one client, its pool of connections, so
 * every worker gets some) read as fast as they can for `seconds`, looping over epochs, while
 * RSS and open file descriptors of every loader process are sampled and the loader's own
 * event-loop delay is scraped. Growth is measured from the first sample after warm-up (JIT,
 * caches, pools and V8's heap sizing settle first): the mean of the first three samples after
 * it against the mean of the last three.
 *
 * @internal
 */
export async function runSoakBench(options: SoakBenchOptions): Promise<SoakReport> {
  const log = options.log ?? (() => undefined);
  const streams = options.streams ?? 64;
  const seconds = options.seconds ?? 60;
  // 64 streams on 2 busy cores took about a minute to reach steady RSS (V8 sizing its heap
  // under a lagging event loop), so the warm-up is 40% of the run, at least 30 s.
  const warmup = options.warmupSeconds ?? Math.max(30, Math.round(seconds * 0.4));
  const every = options.sampleEverySeconds ?? 5;
  await ensureGeneratedDataset(options.db, {
    name: DATASET,
    samples: SAMPLES,
    sampleBytes: SAMPLE_BYTES,
  });
  const serve = await startProbedServe({ db: options.db });
  const sdk = new LoaderClient(serve.address);
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  options.signal?.addEventListener('abort', onAbort);
  let delivered = 0;
  let streamErrors = 0;
  const runs: Promise<void>[] = [];
  try {
    // One scrape before the streams so the first event-loop window starts now.
    await scrapeMetrics(serve.metricsAddress);
    const t0 = performance.now();
    for (let i = 0; i < streams; i++) {
      runs.push(
        (async () => {
          while (!stop.signal.aborted) {
            try {
              for await (const batch of sdk.streamBatches(
                {
                  dataset: DATASET,
                  split: 'all',
                  batchSize: 64,
                  seed: 1000 + i,
                  epochs: 1_000_000,
                  rank: i % 4,
                  worldSize: 4,
                },
                { signal: stop.signal },
              )) {
                delivered += batch.samples.length;
              }
            } catch (err) {
              if (stop.signal.aborted) return;
              streamErrors++;
              log(`soak: stream ${i} ended: ${(err as Error).message}`);
            }
          }
        })(),
      );
    }
    const samples: SoakSample[] = [];
    let p99 = 0;
    let failedScrapes = 0;
    let partialScrapes = 0;
    let max = 0;
    const end = t0 + seconds * 1000;
    while (performance.now() < end) {
      await sleep(Math.min(every * 1000, Math.max(0, end - performance.now())), undefined, {
        signal: stop.signal,
      });
      const u = treeUsage(serve.pid);
      const at = (performance.now() - t0) / 1000;
      // The primary gathers /metrics from every worker over IPC, with a timeout: a worker
      // too busy to answer in time is summed with its last figures and counted as missing.
      const m = await scrapeMetrics(serve.metricsAddress).catch((err: unknown) => {
        failedScrapes++;
        log(`soak: scrape failed: ${(err as Error).message}`);
        return new Map<string, number>();
      });
      if ((m.get('scylla_loader_metrics_workers_missing') ?? 0) > 0) partialScrapes++;
      samples.push({
        at,
        rssBytes: u.rssBytes,
        fds: u.fds,
        processes: u.processes,
        delivered,
        heapUsedBytes: m.get('nodejs_heap_size_used_bytes') ?? 0,
        externalBytes: m.get('nodejs_external_memory_bytes') ?? 0,
      });
      if (at > warmup) {
        p99 = Math.max(p99, m.get('nodejs_eventloop_lag_p99_seconds') ?? 0);
        max = Math.max(max, m.get('nodejs_eventloop_lag_max_seconds') ?? 0);
      }
      log(
        `soak: ${at.toFixed(0)}/${seconds} s, ${delivered} samples, RSS ${mib(u.rssBytes)} MiB, ` +
          `heap ${mib(m.get('nodejs_heap_size_used_bytes') ?? 0)} MiB, external ${mib(m.get('nodejs_external_memory_bytes') ?? 0)} MiB, ` +
          `${u.fds} fds, event loop p99 ${((m.get('nodejs_eventloop_lag_p99_seconds') ?? 0) * 1000).toFixed(0)} ms`,
      );
    }
    const elapsed = (performance.now() - t0) / 1000;
    stop.abort();
    await Promise.all(runs);
    const steady = samples.filter((s) => s.at >= warmup);
    if (steady.length < 2) {
      throw new Error(`soak of ${seconds} s left fewer than 2 samples after a ${warmup} s warm-up`);
    }
    // Means of three samples at each end: one sample lands wherever a GC left the heap.
    const mean = (xs: SoakSample[]): number => xs.reduce((a, s) => a + s.rssBytes, 0) / xs.length;
    const ref = steady[0]!;
    const rssRef = mean(steady.slice(0, Math.min(3, Math.floor(steady.length / 2))));
    const rssEnd = mean(steady.slice(-3));
    const last = samples.at(-1)!;
    return {
      streams,
      seconds: elapsed,
      warmupSeconds: warmup,
      samplesDelivered: delivered,
      samplesPerSecond: delivered / elapsed,
      streamErrors,
      rssAfterWarmupBytes: rssRef,
      rssEndBytes: rssEnd,
      rssGrowthPercent: (100 * (rssEnd - rssRef)) / rssRef,
      rssPeakBytes: Math.max(...samples.map((s) => s.rssBytes)),
      fdsAfterWarmup: ref.fds,
      fdsEnd: last.fds,
      fdsMax: Math.max(...steady.map((s) => s.fds)),
      eventLoopP99Seconds: p99,
      eventLoopMaxSeconds: max,
      processes: last.processes,
      failedScrapes,
      partialScrapes,
      crash: serve.crash(),
      samples,
    };
  } finally {
    stop.abort();
    options.signal?.removeEventListener('abort', onAbort);
    await Promise.allSettled(runs);
    sdk.close();
    await serve.stop(log);
  }
}
