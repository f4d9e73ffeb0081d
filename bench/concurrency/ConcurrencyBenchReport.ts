import type { ExactlyOnceCheck } from './checkExactlyOnce.js';

/** CPU seconds of the processes involved in a run (absent: not measurable here). */
export interface ConcurrencyCpuSeconds {
  loader?: number;
  db?: number;
  client: number;
}

/** One measured run: k ranks of one job streaming their shares at once. */
export interface ConcurrencyRun {
  /** Ranks streaming at once (the job's world size). */
  streams: number;
  /** Round (0-based); every k runs once per round. */
  run: number;
  seed: number;
  /** Samples and bytes of all ranks together. */
  samples: number;
  bytes: number;
  /** From the first rank's start to the last rank's last batch. */
  wallSeconds: number;
  samplesPerSecond: number;
  megabytesPerSecond: number;
  /** Each rank's samples over its own time from the common start to its last batch. */
  perStreamSamplesPerSecond: number[];
  /** Time between batches, pooled over all ranks, ms. */
  waitMs: { p50: number; p99: number; max: number };
  /** Slowest rank's time to its first batch, ms. */
  firstBatchMsMax: number;
  cpuSeconds: ConcurrencyCpuSeconds;
  loaderCpuSecondsPerGB?: number;
  /** Loader's peak RSS during the run (absent when its peak could not be reset). */
  loaderPeakRssBytes?: number;
  /** Every epoch of the run together: the ranks' ids against the dataset's. */
  exactlyOnce: ExactlyOnceCheck;
}
