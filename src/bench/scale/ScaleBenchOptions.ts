import path from 'node:path';
import type { DbConfig } from '../../server/config/dbConfig.js';
import type { BenchProgressFactory } from '../stream/StreamBenchOptions.js';

/** Settings of `runScaleBench`. */
export interface ScaleBenchOptions {
  /** Database the loader and this process connect to. */
  db: DbConfig;
  /** Split sizes (caps) to stream, ascending; the dataset holds the largest. */
  sizes: number[];
  /** Dataset (keyspace) name. */
  dataset: string;
  /** Measured runs of each size, each in a fresh loader. */
  runs: number;
  batchSize: number;
  /** Samples of the warm-up split streamed before each measured stream. */
  warmupSamples: number;
  /** Folder the JSON report is written to. */
  outDir: string;
  /** Progress displays; default: none. */
  progress?: BenchProgressFactory;
  /** Status lines (default: none). */
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/** Sizes of the full run: splits of 10^4, 10^5 and 10^6 samples. @internal */
export const FULL_SIZES = [10_000, 100_000, 1_000_000];
/** Sizes of `--quick`: 10^3 and 10^4. @internal */
export const QUICK_SIZES = [1_000, 10_000];

/**
 * `bench_scale_100b` for the full run's 10^6 samples, `bench_scale_100b_n<N>` otherwise, so a
 * quick run never scans the large dataset to make its splits.
 *
 * @internal
 */
export function defaultScaleDatasetName(samples: number): string {
  return samples === 1_000_000 ? 'bench_scale_100b' : `bench_scale_100b_n${samples}`;
}

/** Where the JSON reports go: `<state root>/bench`. @internal */
export function scaleOutDir(stateRoot: string): string {
  return path.join(stateRoot, 'bench');
}
