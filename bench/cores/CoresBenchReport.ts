import type { ExactlyOnceCheck } from '../concurrency/checkExactlyOnce.js';

/** One measured run: k ranks of one job against a loader of `workers` processes. */
export interface CoresRun {
  workers: number;
  run: number;
  samples: number;
  bytes: number;
  wallSeconds: number;
  samplesPerSecond: number;
  megabytesPerSecond: number;
  /** CPU seconds of the loader's processes (primary and workers), the client and the node. */
  cpuSeconds: { loader: number; primary: number; client: number; db?: number };
  /** The loader's CPU seconds (all its processes) per GB sent. */
  loaderCpuSecondsPerGB: number;
  /** Each worker's RSS at the end of the run (one entry for a single process). */
  workerRssBytes: number[];
  /** The primary's RSS at the end of the run (absent for a single process). */
  primaryRssBytes?: number;
  /** Streams each worker served in the run (from their log), to show the spread. */
  streamsPerWorker: number[];
  exactlyOnce: ExactlyOnceCheck;
}
