/**
 * Child process of `bench latency`: a trainer that streams one epoch of split `all` through
 * the client SDK and reports what it received, the wall time, its CPU seconds, and the time
 * between batches as the consumer sees it after warm-up (the first {@link
 * LatencyClientConfig.warmupFraction} of the batches left out: they include filling the
 * prefetch window, a cost paid once per stream).
 *
 * @internal
 */
import { LoaderClient } from '../../client/LoaderClient.js';
import type { OrderingName, StreamBatchesOptions } from '../../client/StreamBatchesOptions.js';
import { runBenchChild } from '../stream/childProtocol.js';
import { quantile } from '../stream/stats.js';

/** Settings of a latency client child. @internal */
export interface LatencyClientConfig {
  address: string;
  dataset: string;
  batchSize: number;
  seed: number;
  ordering: OrderingName;
  /** Batches requested ahead; absent: the server's default. */
  prefetch?: number;
  /** Before `ready`, untimed, stream rank 0 of this many ranks, to warm up JIT and heap. */
  warmupWorldSize: number;
  /** Share of the first batches whose waits are left out of p50/p99 (e.g. 0.1). */
  warmupFraction: number;
}

/** What a latency client child measured. @internal */
export interface LatencyClientResult {
  samples: number;
  bytes: number;
  batches: number;
  wallSeconds: number;
  cpuSeconds: number;
  /** Batches left out of the wait figures. */
  warmupBatches: number;
  /** Time between batches after warm-up, ms. */
  waitMs: { p50: number; p99: number; max: number };
  /** Time to the first batch, ms. */
  firstBatchMs: number;
}

runBenchChild<LatencyClientConfig, LatencyClientResult>(async (config, ready) => {
  const client = new LoaderClient(config.address);
  try {
    const request: StreamBatchesOptions = {
      dataset: config.dataset,
      split: 'all',
      batchSize: config.batchSize,
      seed: config.seed,
      epochs: 1,
      ordering: config.ordering,
      ...(config.prefetch === undefined ? {} : { prefetch: config.prefetch }),
    };
    for await (const batch of client.streamBatches({
      ...request,
      seed: config.seed + 1_000_000,
      worldSize: config.warmupWorldSize,
      rank: 0,
    })) {
      void batch;
    }
    await ready();
    const waits: number[] = [];
    let samples = 0;
    let bytes = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let last = t0;
    for await (const batch of client.streamBatches(request)) {
      const now = performance.now();
      waits.push(now - last);
      last = now;
      for (const sample of batch.samples) bytes += sample.length;
      samples += batch.samples.length;
    }
    const wallSeconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    // Keep at least one wait even for a stream of a single batch.
    const warmupBatches = Math.min(
      Math.floor(waits.length * config.warmupFraction),
      waits.length - 1,
    );
    const steady = waits.slice(warmupBatches);
    return {
      samples,
      bytes,
      batches: waits.length,
      wallSeconds,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      warmupBatches,
      waitMs: {
        p50: quantile(steady, 0.5),
        p99: quantile(steady, 0.99),
        max: Math.max(...steady),
      },
      firstBatchMs: waits[0] ?? Number.NaN,
    };
  } finally {
    client.close();
  }
});
