import type { Placement } from '../stream/StreamBenchOptions.js';

/** B: the classic loader (IN_ORDER, prefetch 2); C: the service's defaults (OUT_OF_ORDER). */
export type LatencyScenario = 'B' | 'C';

/** The database routes of a run: the main route only, or with the congested route added. */
export type RouteSet = 'main' | 'main+congested';

/**
 * How the trainer consumes: `max` takes every batch at once (throughput); `trainer` spends a
 * simulated training step on each batch, so its waits are the stalls a real trainer sees.
 */
export type LatencyPace = 'max' | 'trainer';

/** One measured run. */
export interface LatencyRun {
  placement: Placement;
  pace: LatencyPace;
  /** The simulated training step per batch (pace `trainer`), ms. */
  stepMs?: number;
  scenario: LatencyScenario;
  ordering: 'in-order' | 'out-of-order';
  /** Absent: the server's default. */
  prefetch?: number;
  routes: RouteSet;
  /** Round trip injected on the main route, ms. */
  rttMs: number;
  /** 0-based index of the round of runs. */
  run: number;
  seed: number;
  samples: number;
  bytes: number;
  wallSeconds: number;
  samplesPerSecond: number;
  megabytesPerSecond: number;
  /** Time between batches after warm-up, as the trainer saw them, ms. */
  waitMs: { p50: number; p99: number; max: number };
  firstBatchMs: number;
  /**
   * Samples/s over the second half of the batches, and the time the stream first came at 90%
   * of that (a 500 ms window), ms: how long its start took.
   */
  ramp?: { secondHalfSamplesPerSecond: number; atRateMs: number };
  warmupBatches: number;
  /** Share of the wall time after warm-up spent waiting for batches. */
  stallFraction: number;
  /** The same in each half of the batches after warm-up. */
  stallHalves?: [number, number];
  /** CPU seconds of the measured part: loader, database, toxiproxy, trainer child. */
  cpuSeconds: { loader?: number; db?: number; proxy?: number; client: number };
  loaderCpuSecondsPerGB?: number;
  /**
   * Samples delivered per CPU second of the loader and toxiproxy together: the path's cost,
   * since at a long round trip the proxy's CPU competes with the loader's for the same cores.
   */
  samplesPerLoaderAndProxyCpuSecond?: number;
  /** The loader's database reads in flight, sampled every 250 ms during the run. */
  readsInFlight?: { mean: number; max: number };
  /** Loader's peak RSS during the run (or its life, see `peakRssPerRun`). */
  loaderPeakRssBytes?: number;
}

/** Ratios the issue asks to report (medians of the paired runs' ratios); absent: not run. */
export interface LatencyRatios {
  /** C at the largest round trip over C at 0 ms (main route). */
  cHighOverC0?: {
    highRttMs: number;
    ratio: number;
    /** The same over the second half of each run's batches: once the stream's start is over. */
    secondHalfRatio?: number;
  };
  /** C over B with the congested route added. */
  cOverBCongested?: number;
  /** C's batch-wait p99 with the congested route, as the paced trainer saw it, ms. */
  cCongestedTrainerP99Ms?: number;
  /** C's paced trainer at the largest round trip (main route): its stalled share and p99 wait. */
  cHighTrainer?: {
    rttMs: number;
    stallFraction: number;
    p99Ms: number;
    /** Stalled share in the first and the second half of the batches after warm-up. */
    stallHalves?: [number, number];
    /**
     * The same paced trainer at 0 ms in the same rounds: what it stalls with no round trip to
     * hide (its own receiving of batches, the machine), beside what 150 ms adds.
     */
    atZero?: { stallFraction: number; p99Ms: number };
  };
}
