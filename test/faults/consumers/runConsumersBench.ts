import { setTimeout as sleep } from 'node:timers/promises';
import { LoaderClient } from '../../../src/client/index.js';
import type { DbConfig } from '../../../src/core/index.js';
import { ensureGeneratedDataset } from '../../support/index.js';
import { scrapeMetrics } from '../probe/scrapeMetrics.js';
import { startProbedServe } from '../probe/startProbedServe.js';
import { mib, treeUsage } from '../probe/treeUsage.js';
import { startFreezingProxy } from './freezingProxy.js';
import { openStuckStream, type StuckStream } from './stuckStream.js';

/** Figures of one `runConsumersBench`. @internal */
export interface ConsumersReport {
  stuckStreams: number;
  slowStreams: number;
  /** Samples per batch, prefetch and sample bytes of the stuck and slow streams. */
  batchSize: number;
  prefetch: number;
  sampleBytes: number;
  /**
   * The documented most a stream holds: its window (prefetch x batch size samples) plus the
   * batch being written, in bytes.
   */
  windowBytesPerStream: number;
  /** RSS of all loader processes with one normal stream only, and at its peak with all held. */
  rssBaselineBytes: number;
  rssPeakHeldBytes: number;
  /** V8 heap used (all workers, from /metrics) likewise. */
  heapBaselineBytes: number;
  heapPeakHeldBytes: number;
  /** Memory outside the V8 heap (Buffers: samples, encoded batches), likewise. */
  externalBaselineBytes: number;
  externalPeakHeldBytes: number;
  /** Samples/s of one normal stream alone, and while the stuck and slow ones are held. */
  normalRateAlone: number;
  normalRateWithHeld: number;
  /** Batches per second the slow consumers received, each (they ask for one a second). */
  slowBatchesPerSecond: number;
  /** Stuck (alive, not reading) streams still open at the end: keepalive must spare them. */
  stuckStillOpen: number;
  /** Keepalive settings the loader ran with. */
  keepaliveTimeMs: number;
  keepaliveTimeoutMs: number;
  /** Ms from freezing a dead peer's connection until the loader closed it; -1: it never did. */
  deadClosedAfterMs: number;
  /** Active streams by the loader's gauge: with everything held, after the dead one went. */
  activeStreamsHeld: number;
  activeStreamsAfterDead: number;
  crash: string | undefined;
  seconds: number;
}

/**
 * A `bench consumers` report as Markdown: the memory the held streams cost against the
 * documented window, the normal stream's rate alone and beside them, and keepalive's verdict.
 *
 * @internal
 */
export function formatConsumersReport(r: ConsumersReport): string {
  const held = r.stuckStreams + r.slowStreams;
  const lines = [
    `consumers: ${r.stuckStreams} stuck + ${r.slowStreams} slow streams (batch ${r.batchSize}, prefetch ${r.prefetch}, ${r.sampleBytes / 1000} kB samples), ${r.seconds.toFixed(0)} s`,
    '',
    '| figure | value |',
    '|---|---|',
    `| documented most held per stream (window + the batch being written) | ${mib(r.windowBytesPerStream)} MiB; x ${held} = ${mib(r.windowBytesPerStream * held)} MiB |`,
    `| loader RSS, one normal stream / peak with all held (MiB) | ${mib(r.rssBaselineBytes)} / ${mib(r.rssPeakHeldBytes)} (+${mib(r.rssPeakHeldBytes - r.rssBaselineBytes)}) |`,
    `| loader V8 heap used, likewise (MiB) | ${mib(r.heapBaselineBytes)} / ${mib(r.heapPeakHeldBytes)} (+${mib(r.heapPeakHeldBytes - r.heapBaselineBytes)}) |`,
    `| loader external memory (Buffers), likewise (MiB) | ${mib(r.externalBaselineBytes)} / ${mib(r.externalPeakHeldBytes)} (+${mib(r.externalPeakHeldBytes - r.externalBaselineBytes)}) |`,
    `| normal stream alone / beside them (samples/s) | ${r.normalRateAlone.toFixed(0)} / ${r.normalRateWithHeld.toFixed(0)} (${((100 * r.normalRateWithHeld) / r.normalRateAlone).toFixed(0)}%) |`,
    `| slow consumers' rate (batches/s each, asked 1) | ${r.slowBatchesPerSecond.toFixed(2)} |`,
    `| active streams with all held / after the dead peer | ${r.activeStreamsHeld} / ${r.activeStreamsAfterDead} |`,
    `| dead peer closed by keepalive (${r.keepaliveTimeMs} + ${r.keepaliveTimeoutMs} ms) after | ${r.deadClosedAfterMs < 0 ? 'never' : `${(r.deadClosedAfterMs / 1000).toFixed(1)} s`} |`,
    `| stuck (alive) streams still open at the end | ${r.stuckStillOpen} of ${r.stuckStreams} |`,
    `| loader crashes | ${r.crash ? `1 (${r.crash})` : 0} |`,
  ];
  return `${lines.join('\n')}\n`;
}

/** Options of {@link runConsumersBench}. @internal */
export interface ConsumersBenchOptions {
  db: DbConfig;
  /** Streams that stop reading without closing (default 8). */
  stuckStreams?: number;
  /** Streams read one batch a second (default 4). */
  slowStreams?: number;
  /** Seconds each rate of the normal stream is measured over (default 8). */
  measureSeconds?: number;
  /**
   * Server keepalive (default 2,000 ms and 5,000 ms, short so a test sees it act). A timeout
   * of 2 s ended live but idle-reading sessions on this 2-core machine: a worker's event loop
   * stalled past it, so the ack was read after the timer fired.
   */
  keepaliveTimeMs?: number;
  keepaliveTimeoutMs?: number;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

const DATASET = 'faults_consumers';
const SAMPLES = 1500;
const SAMPLE_BYTES = 50_000;
const BATCH = 32;
const PREFETCH = 4;

/**
 * Slow and stuck consumers against a spawned `serve`: one normal stream's rate is measured
 * alone, then again while `stuckStreams` calls that stopped reading (flow control never given
 * back) and `slowStreams` SDK streams read one batch a second are held; RSS and V8 heap of
 * every loader process are sampled throughout. Then a peer behind a relay that freezes (no
 * bytes either way, pings unanswered) must be closed by the loader's keepalive while the
 * stuck ones, which answer pings, stay open.
 *
 * @internal
 */
export async function runConsumersBench(options: ConsumersBenchOptions): Promise<ConsumersReport> {
  const started = performance.now();
  const log = options.log ?? (() => undefined);
  const stuckCount = options.stuckStreams ?? 8;
  const slowCount = options.slowStreams ?? 4;
  const measureMs = (options.measureSeconds ?? 8) * 1000;
  const keepaliveTimeMs = options.keepaliveTimeMs ?? 2000;
  const keepaliveTimeoutMs = options.keepaliveTimeoutMs ?? 5000;
  await ensureGeneratedDataset(options.db, {
    name: DATASET,
    samples: SAMPLES,
    sampleBytes: SAMPLE_BYTES,
  });
  const serve = await startProbedServe({
    db: options.db,
    args: [
      '--keepalive-time-ms',
      String(keepaliveTimeMs),
      '--keepalive-timeout-ms',
      String(keepaliveTimeoutMs),
    ],
  });
  const request = {
    dataset: DATASET,
    split: 'all',
    batchSize: BATCH,
    prefetch: PREFETCH,
    epochs: 100_000,
    seed: 3,
  };
  const sdk = new LoaderClient(serve.address);
  const stuck: StuckStream[] = [];
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  options.signal?.addEventListener('abort', onAbort);
  let rssPeak = 0;
  let heapPeak = 0;
  let externalPeak = 0;
  const heapUsed = async (): Promise<number> => {
    const m = await scrapeMetrics(serve.metricsAddress);
    externalPeak = Math.max(externalPeak, m.get('nodejs_external_memory_bytes') ?? 0);
    return m.get('nodejs_heap_size_used_bytes') ?? 0;
  };
  // The normal stream has a client of its own: sharing the slow streams' connections would
  // measure the client's connection windows, not the loader.
  const normalRate = async (): Promise<number> => {
    const own = new LoaderClient(serve.address);
    let samples = 0;
    let t0 = 0;
    const warmUntil = Date.now() + 1000;
    try {
      for await (const batch of own.streamBatches({ ...request, seed: 9 })) {
        if (Date.now() < warmUntil) continue;
        if (t0 === 0) t0 = performance.now();
        samples += batch.samples.length;
        if (performance.now() - t0 >= measureMs) break;
      }
    } finally {
      own.close();
    }
    return samples / ((performance.now() - t0) / 1000);
  };
  const slowBatches: number[] = Array.from({ length: slowCount }, () => 0);
  const slowRuns: Promise<void>[] = [];
  try {
    await normalRate(); // warm-up: caches, JIT, connections
    const rssBaseline = treeUsage(serve.pid).rssBytes;
    const heapBaseline = await heapUsed();
    const externalBaseline = externalPeak;
    externalPeak = 0;
    log(`consumers: a normal stream alone for ${measureMs / 1000} s`);
    const normalRateAlone = await normalRate();
    log(
      `consumers: ${normalRateAlone.toFixed(0)} samples/s alone; holding ${stuckCount} stuck and ${slowCount} slow streams`,
    );
    for (let i = 0; i < stuckCount; i++) {
      stuck.push(await openStuckStream(serve.address, { ...request, seed: 100 + i }));
    }
    const slowStartedAt = performance.now();
    for (let i = 0; i < slowCount; i++) {
      slowRuns.push(
        (async () => {
          try {
            for await (const batch of sdk.streamBatches(
              { ...request, seed: 200 + i },
              { signal: stop.signal },
            )) {
              if (batch.samples.length > 0) slowBatches[i]!++;
              await sleep(1000, undefined, { signal: stop.signal });
            }
          } catch (err) {
            if (!stop.signal.aborted) throw err;
          }
        })(),
      );
    }
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, treeUsage(serve.pid).rssBytes);
      void heapUsed().then(
        (h) => (heapPeak = Math.max(heapPeak, h)),
        () => undefined,
      );
    }, 250);
    let normalRateWithHeld: number;
    let activeHeld: number;
    try {
      await sleep(3000); // let every held stream fill its window
      normalRateWithHeld = await normalRate();
      activeHeld =
        (await scrapeMetrics(serve.metricsAddress)).get('scylla_loader_active_streams') ?? -1;
    } finally {
      clearInterval(sampler);
    }
    log(
      `consumers: ${normalRateWithHeld.toFixed(0)} samples/s with them held; freezing a dead peer`,
    );

    const proxy = await startFreezingProxy(serve.address);
    let deadClosedAfterMs = -1;
    try {
      const dead = await openStuckStream(proxy.address, { ...request, seed: 300 });
      proxy.freeze();
      const limit = keepaliveTimeMs + keepaliveTimeoutMs + 10_000;
      deadClosedAfterMs = await Promise.race([proxy.loaderClosed(), sleep(limit, -1)]);
      dead.close();
    } finally {
      await proxy.close();
    }
    await sleep(500);
    const activeAfterDead =
      (await scrapeMetrics(serve.metricsAddress)).get('scylla_loader_active_streams') ?? -1;
    const slowSeconds = (performance.now() - slowStartedAt) / 1000;
    stop.abort();
    await Promise.all(slowRuns);
    return {
      stuckStreams: stuckCount,
      slowStreams: slowCount,
      batchSize: BATCH,
      prefetch: PREFETCH,
      sampleBytes: SAMPLE_BYTES,
      windowBytesPerStream: (PREFETCH + 1) * BATCH * SAMPLE_BYTES,
      rssBaselineBytes: rssBaseline,
      rssPeakHeldBytes: rssPeak,
      heapBaselineBytes: heapBaseline,
      heapPeakHeldBytes: heapPeak,
      externalBaselineBytes: externalBaseline,
      externalPeakHeldBytes: externalPeak,
      normalRateAlone,
      normalRateWithHeld,
      slowBatchesPerSecond:
        slowCount === 0 ? 0 : slowBatches.reduce((a, b) => a + b, 0) / slowCount / slowSeconds,
      stuckStillOpen: stuck.filter((s) => !s.ended()).length,
      keepaliveTimeMs,
      keepaliveTimeoutMs,
      deadClosedAfterMs,
      activeStreamsHeld: activeHeld,
      activeStreamsAfterDead: activeAfterDead,
      crash: serve.crash(),
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    stop.abort();
    options.signal?.removeEventListener('abort', onAbort);
    await Promise.allSettled(slowRuns);
    for (const s of stuck) s.close();
    sdk.close();
    await serve.stop(log);
  }
}
