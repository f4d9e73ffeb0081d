/**
 * Child process of `bench stream`: a trainer that streams one epoch of split `all` (or of a
 * mixture) through the client SDK, touching every sample, and reports what it received, how
 * long it took, its own CPU seconds, and the time between batches as the consumer sees it.
 * @internal
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type ClientTlsOptions,
  LoaderClient,
  type OrderingName,
  type StreamBatchesOptions,
  type StreamSourceOptions,
} from '../../src/client/index.js';
import { runBenchChild } from './childProtocol.js';
import { quantile } from './stats.js';
import { startSelfMeasure } from '../measure/startSelfMeasure.js';
import { streamRamp, type StreamRamp } from '../measure/streamRamp.js';

/** Settings of an SDK client child. @internal */
export interface SdkClientConfig {
  address: string;
  dataset: string;
  batchSize: number;
  seed: number;
  ordering: OrderingName;
  /** Batches requested ahead; absent: the server's default. */
  prefetch?: number;
  /**
   * Before `ready`, untimed, stream rank 0 of this many ranks (1: a whole epoch), so the
   * measured epoch finds the process warmed up (JIT, heap sizes); the warm-up ends on its own,
   * so no cancelled reads spill into the measured stream.
   */
  warmupWorldSize: number;
  /**
   * Share of the first batches whose waits are left out of p50/p99 (default 0): they include
   * filling the prefetch window, a cost paid once per stream (`bench latency` uses 0.1).
   */
  warmupFraction?: number;
  /** Split to stream (default `all`). */
  split?: string;
  /**
   * A mixture to stream instead of `dataset` and `split` (the warm-up streams it too, with
   * another seed); the result then counts the samples of each source.
   */
  sources?: StreamSourceOptions[];
  /** With `sources`: positions of the mixed epoch (default: the server's). */
  samplesPerEpoch?: number;
  /**
   * Split of the warm-up stream (default: the measured one); another one leaves loading the
   * measured split's ids to the measured stream (`bench scale`).
   */
  warmupSplit?: string;
  /**
   * A simulated training step: ms spent (idle, as while a GPU computes) on every batch before
   * asking for the next; absent or 0: the trainer takes the next batch at once. With a step,
   * a wait is the time from the step's end to the next batch, i.e. the trainer's stall.
   */
  stepMs?: number;
  /**
   * Stop (cancelling the stream) once at least this many samples arrived; absent: the whole
   * epoch (`bench scale --samples-per-run` compares splits at equal stream length).
   */
  maxSamples?: number;
  /** Metadata columns every batch carries (the client reads each value); absent: none. */
  columns?: string[];
  /**
   * A job to name: the loader records the measured stream in its training ledger, and the
   * warm-up under `<jobId>-warmup` (its seed differs, so it is another job); absent: none.
   */
  jobId?: string;
  /** TLS to the loader (PEM file paths), as the SDK takes it; absent: plain text. */
  tls?: ClientTlsOptions;
  /** Bearer token sent with every call (`bench tls`'s token leg); absent: none. */
  token?: string;
}

/** What an SDK client child measured. @internal */
export interface SdkClientResult {
  samples: number;
  bytes: number;
  batches: number;
  wallSeconds: number;
  cpuSeconds: number;
  /** Batches left out of the wait figures (see `warmupFraction`). */
  warmupBatches: number;
  /** Time to the first batch, ms. */
  firstBatchMs: number;
  /** Time between batches as the consumer saw them (the first from the call's start), ms. */
  waitMs: { p50: number; p99: number; max: number };
  /** Sum of the waits after warm-up, ms (with a step: the trainer's stalled time). */
  steadyWaitTotalMs: number;
  /** Wall time after warm-up, ms. */
  steadyWallMs: number;
  /**
   * The share of time spent waiting in each half of the batches after warm-up: where in the
   * run a paced trainer's stalls fall (absent: under 2 batches after warm-up).
   */
  stallHalves?: [number, number];
  /** With `sources`: samples received from each source, by the batches' source indexes. */
  sourceSamples?: number[];
  /** The second half's rate and when the stream reached it (absent: under 4 batches). */
  ramp?: StreamRamp;
  /** With `columns`: the values read, null or not (samples x columns). */
  columnValues?: number;
  /** Samples of the warm-up stream. */
  warmupSamples: number;
}

runBenchChild<SdkClientConfig, SdkClientResult>(async (config, ready) => {
  const client = new LoaderClient(config.address, {
    ...(config.tls ? { tls: config.tls } : {}),
    ...(config.token ? { token: config.token } : {}),
  });
  try {
    const request: StreamBatchesOptions = {
      ...(config.sources
        ? {
            sources: config.sources,
            ...(config.samplesPerEpoch === undefined
              ? {}
              : { samplesPerEpoch: config.samplesPerEpoch }),
          }
        : { dataset: config.dataset, split: config.split ?? 'all' }),
      batchSize: config.batchSize,
      seed: config.seed,
      epochs: 1,
      ordering: config.ordering,
      ...(config.prefetch === undefined ? {} : { prefetch: config.prefetch }),
      ...(config.columns ? { columns: config.columns } : {}),
      ...(config.jobId === undefined ? {} : { jobId: config.jobId }),
    };
    const warmup = {
      ...request,
      ...(config.sources ? {} : { split: config.warmupSplit ?? request.split }),
      seed: config.seed + 1_000_000,
      ...(config.jobId === undefined ? {} : { jobId: `${config.jobId}-warmup` }),
    };
    let warmupSamples = 0;
    for await (const batch of client.streamBatches({
      ...warmup,
      worldSize: config.warmupWorldSize,
      rank: 0,
    })) {
      warmupSamples += batch.samples.length;
    }
    await ready();
    const waits: number[] = [];
    /** When the trainer was done with each batch (after its step, if any). */
    const doneAt: number[] = [];
    /** When each batch arrived, and its samples. */
    const arrivedAt: number[] = [];
    const sizes: number[] = [];
    let samples = 0;
    let bytes = 0;
    const sourceSamples = config.sources?.map(() => 0);
    let columnValues = 0;
    const measure = startSelfMeasure();
    const t0 = performance.now();
    let last = t0;
    for await (const batch of client.streamBatches(request)) {
      const now = performance.now();
      waits.push(now - last);
      last = now;
      arrivedAt.push(now);
      sizes.push(batch.samples.length);
      for (const sample of batch.samples) bytes += sample.length;
      samples += batch.samples.length;
      // A trainer reads its columns: every value is taken, as a training loop would.
      for (const column of Object.values(batch.columns)) {
        for (let i = 0; i < batch.samples.length; i++) {
          if (column.valueAt(i) !== undefined) columnValues++;
        }
      }
      if (sourceSamples) {
        // A sample credited to no source of the request would skew the per-source figures.
        for (const s of batch.sourceIndexes ?? []) {
          if (s >= sourceSamples.length) throw new Error(`source index ${s} out of range`);
          sourceSamples[s]! += 1;
        }
      }
      if (config.maxSamples !== undefined && samples >= config.maxSamples) break;
      if (config.stepMs) {
        await sleep(config.stepMs);
        last = performance.now();
      }
      doneAt.push(last);
    }
    const end = performance.now();
    const { wallSeconds, cpuSeconds } = measure();
    // Keep at least one wait even for a stream of a single batch.
    const warmupBatches = Math.min(
      Math.floor(waits.length * (config.warmupFraction ?? 0)),
      Math.max(waits.length - 1, 0),
    );
    const steady = waits.slice(warmupBatches);
    // Steady time starts when the trainer was done with the last warm-up batch (timers fire
    // late, so nominal steps would not do) and ends with the stream.
    const steadyFrom = warmupBatches === 0 ? t0 : doneAt[warmupBatches - 1]!;
    const ramp = streamRamp(t0, arrivedAt, sizes);
    // Batch i's wait ends at arrivedAt[i]; a half's wall time runs from the trainer being done
    // with the batch before it to the trainer being done with its last.
    const halfAt = warmupBatches + Math.floor(steady.length / 2);
    const stallShare = (from: number, to: number): number => {
      const start = from === 0 ? t0 : doneAt[from - 1]!;
      const wall = doneAt[to - 1]! - start;
      let waited = 0;
      for (let i = from; i < to; i++) waited += waits[i]!;
      return wall > 0 ? waited / wall : 0;
    };
    const halves: [number, number] | undefined =
      steady.length >= 2 && doneAt.length === waits.length
        ? [stallShare(warmupBatches, halfAt), stallShare(halfAt, waits.length)]
        : undefined;
    return {
      samples,
      bytes,
      ...(config.columns ? { columnValues } : {}),
      warmupSamples,
      batches: waits.length,
      wallSeconds,
      cpuSeconds,
      warmupBatches,
      firstBatchMs: waits[0] ?? Number.NaN,
      waitMs: {
        p50: quantile(steady, 0.5),
        p99: quantile(steady, 0.99),
        max: Math.max(...steady),
      },
      steadyWaitTotalMs: steady.reduce((sum, w) => sum + w, 0),
      steadyWallMs: end - steadyFrom,
      ...(halves ? { stallHalves: halves } : {}),
      ...(sourceSamples ? { sourceSamples } : {}),
      ...(ramp ? { ramp } : {}),
    };
  } finally {
    client.close();
  }
});
