import path from 'node:path';
import {
  flag,
  parseFlags,
  text,
  wholeNumber,
  wholeNumbers,
  type FlagInput,
  runsFlag,
  batchSizeFlag,
  PHOTO_OUTPUT_FLAGS,
} from '../cli/benchOptions.js';
import type { BenchInput } from '../stream/StreamBenchOptions.js';

/** Sizes of the full run: splits of 10^4, 10^5 and 10^6 samples. @internal */
export const FULL_SIZES = [10_000, 100_000, 1_000_000];
/** Sizes of `--quick`: 10^3 and 10^4. @internal */
const QUICK_SIZES = [1_000, 10_000];

/**
 * `bench_scale_100b` for the full run's 10^6 samples, `bench_scale_100b_n<N>` otherwise, so a
 * quick run never scans the large dataset to make its splits. @internal
 */
function defaultScaleDatasetName(samples: number): string {
  return samples === 1_000_000 ? 'bench_scale_100b' : `bench_scale_100b_n${samples}`;
}

/** The flags of `bench scale` with their defaults (full; quick: well under a minute). */
export const SCALE_FLAGS = {
  sizes: flag(
    '--sizes <list>',
    'split sizes',
    wholeNumbers('--sizes', 1, 100_000_000),
    FULL_SIZES,
    QUICK_SIZES,
  ),
  runs: runsFlag('size (each in a fresh loader)'),
  batchSize: batchSizeFlag(256),
  samplesPerRun: flag(
    '--samples-per-run <n>',
    'stop each run after this many samples (whole batches): splits compared at equal stream length',
    wholeNumber('--samples-per-run', 1, 100_000_000),
  ),
  ...PHOTO_OUTPUT_FLAGS,
  dataset: flag('--dataset <name>', 'dataset name (default bench_scale_100b, or _n<N>)', text),
};

/** What a caller of `bench scale` gives; the flags may be left out (defaults). */
export interface ScaleBenchInput extends Omit<BenchInput, 'dbPid'>, FlagInput<typeof SCALE_FLAGS> {
  dbPid?: number | undefined;
}

/**
 * Fills in the defaults of `bench scale` (sizes 10^4, 10^5, 10^6, 3 runs, batch 256, a warm-up
 * split of 5,000) or of its quick mode, and checks the flags.
 */
export function resolveScaleBenchOptions(input: ScaleBenchInput) {
  const f = parseFlags(SCALE_FLAGS, input, input.quick);
  const sizes = [...new Set(f.sizes)].sort((a, b) => a - b);
  return {
    db: input.db,
    dbPid: input.dbPid,
    sizes,
    dataset: f.dataset ?? defaultScaleDatasetName(sizes.at(-1)!),
    runs: f.runs,
    batchSize: f.batchSize,
    samplesPerRun: f.samplesPerRun,
    warmupSamples: 5_000,
    outDir: f.outDir ?? path.join(input.stateRoot, 'bench'),
    progress: input.progress,
    log: input.log,
    signal: input.signal,
  };
}

/** Settings of `runScaleBench`, as {@link resolveScaleBenchOptions} fills them in. */
export type ScaleBenchOptions = ReturnType<typeof resolveScaleBenchOptions>;
