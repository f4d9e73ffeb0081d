import type { Placement } from './StreamBenchOptions.js';

/** The scenarios compared in each placement. */
export type ScenarioName =
  | 'tight-loop'
  | 'tight-loop-grouped'
  | 'service'
  | 'service-in-order-p2'
  | 'service-grouped'
  | 'service-mixed'
  | 'service-columns'
  | 'service-ledger';

/** One run of one scenario. */
export interface RunRecord {
  placement: Placement;
  scenario: ScenarioName;
  /** Calibration runs pick the tight loop's concurrency; timed runs make the table. */
  phase: 'calibration' | 'timed';
  /** 0-based index among the timed runs (or the calibration runs) of this placement. */
  run: number;
  /** Tight loop: samples in flight. */
  concurrency?: number;
  /** Grouped scenarios: samples per read query at most. */
  groupReads?: number;
  /** Service: ordering and prefetch asked for (absent prefetch: the server's default). */
  ordering?: 'out-of-order' | 'in-order';
  prefetch?: number;
  seed: number;
  samples: number;
  bytes: number;
  wallSeconds: number;
  samplesPerSecond: number;
  megabytesPerSecond: number;
  /**
   * CPU seconds over the measured part: database node (`dbNet`: less what it used in the same
   * time while nothing of the benchmark ran, see `dbBackgroundCpuPerSecond`), loader (serve),
   * client or tight loop.
   */
  cpuSeconds: { db?: number; dbNet?: number; loader?: number; client: number };
  /**
   * CPU seconds per second the database used in the second before this round of runs, with
   * nothing of the benchmark running: other clients of a shared node, compaction, its own
   * timers.
   */
  dbBackgroundCpuPerSecond?: number;
  /** Service: time between batches as the consumer saw them. */
  waitMs?: { p50: number; p99: number; max: number };
  /** Mixed service: samples the client received from each source, in the request's order. */
  sourceSamples?: number[];
  /** Columns service: column values the client received (samples x columns). */
  columnValues?: number;
  /** Ledger service: the job the stream named (its warm-up named `<jobId>-warmup`). */
  jobId?: string;
  /** Ledger service: samples of the warm-up stream, recorded under its own job too. */
  warmupSamples?: number;
}
