import path from 'node:path';
import { type DbConfig, invalidArgument } from '../../src/core/index.js';
import type { BenchProgressFactory } from '../stream/StreamBenchOptions.js';

/** Settings of `runScaleBench`. */
export interface ScaleBenchOptions {
  /** Database the loader and this process connect to. */
  db: DbConfig;
  /** Pid of the local database node, for its CPU seconds; undefined for another cluster. */
  dbPid?: number | undefined;
  /** Split sizes (caps) to stream, ascending; the dataset holds the largest. */
  sizes: number[];
  /** Dataset (keyspace) name. */
  dataset: string;
  /** Measured runs of each size, each in a fresh loader. */
  runs: number;
  batchSize: number;
  /**
   * Samples each run streams before it stops (whole batches; absent: the whole epoch), so that
   * splits of every size are compared at the same stream length.
   */
  samplesPerRun: number | undefined;
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

/** What a caller of `bench scale` may set; everything else has a default. */
export interface ScaleBenchInput {
  db: DbConfig;
  dbPid?: number | undefined;
  /** The repository's `.state` folder (reports go to its `bench` folder unless `outDir`). */
  stateRoot: string;
  /** Sizes 10^3 and 10^4 (a dataset of 10^4), one run: well under a minute once written. */
  quick?: boolean;
  sizes?: number[];
  runs?: number;
  batchSize?: number;
  samplesPerRun?: number;
  dataset?: string;
  outDir?: string;
  progress?: BenchProgressFactory;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/**
 * Fills in the defaults of `bench scale` (sizes 10^4, 10^5, 10^6, 3 runs, batch 256, a warm-up
 * split of 5,000) or of its quick mode, and checks the numbers.
 */
export function resolveScaleBenchOptions(input: ScaleBenchInput): ScaleBenchOptions {
  const quick = input.quick ?? false;
  const sizes = [...new Set(input.sizes ?? (quick ? QUICK_SIZES : FULL_SIZES))].sort(
    (a, b) => a - b,
  );
  const runs = input.runs ?? (quick ? 1 : 3);
  const batchSize = input.batchSize ?? 256;
  const check = (what: string, value: number, min: number, max: number): void => {
    if (!Number.isInteger(value) || value < min || value > max) {
      throw invalidArgument(`${what} must be a whole number from ${min} to ${max}, not ${value}`);
    }
  };
  if (sizes.length === 0) throw invalidArgument('--sizes needs at least one size');
  for (const size of sizes) check('--sizes', size, 1, 100_000_000);
  check('--runs', runs, 1, 1000);
  check('--batch-size', batchSize, 1, 8192);
  if (input.samplesPerRun !== undefined) {
    check('--samples-per-run', input.samplesPerRun, 1, 100_000_000);
  }
  return {
    db: input.db,
    dbPid: input.dbPid,
    sizes,
    dataset: input.dataset ?? defaultScaleDatasetName(sizes[sizes.length - 1]!),
    runs,
    batchSize,
    samplesPerRun: input.samplesPerRun,
    warmupSamples: 5_000,
    outDir: input.outDir ?? scaleOutDir(input.stateRoot),
    ...(input.progress ? { progress: input.progress } : {}),
    ...(input.log ? { log: input.log } : {}),
    ...(input.signal ? { signal: input.signal } : {}),
  };
}
