import { invalidArgument } from '../../src/core/index.js';
import {
  flag,
  names,
  parseFlags,
  wholeNumber,
  type FlagInput,
  epochsFlag,
  photoBenchFlags,
} from '../cli/benchOptions.js';
import { benchInputSettings, type BenchInput } from '../stream/StreamBenchOptions.js';
import { TRANSFORM_LEG_NAMES } from './transformLegs.js';

/** Fixed settings of the transform and the Python legs (not flags). */
export const TRANSFORM_BENCH_DEFAULTS = {
  workers: 2,
  size: 224,
  flip: 0.5,
  jpegQuality: 90,
} as const;

/** The flags of `bench transform` with their defaults (full; quick: CI-sized). */
export const TRANSFORM_FLAGS = {
  ...photoBenchFlags({ samples: 2000, runsOf: 'leg', maxRuns: 100, batchSize: 64 }),
  epochs: epochsFlag('each leg', 1),
  rttMs: flag(
    '--rtt <ms>',
    'round trip injected in the latency leg',
    wholeNumber('--rtt', 0, 10_000),
    150,
  ),
  legs: flag(
    '--legs <list>',
    `a subset of: ${TRANSFORM_LEG_NAMES.join(', ')} (default all)`,
    names('--legs', TRANSFORM_LEG_NAMES, 'leg'),
  ),
};

/** What `bench transform` is given; the flags may be left out (defaults). */
export interface TransformBenchInput extends BenchInput, FlagInput<typeof TRANSFORM_FLAGS> {
  toxiproxy: string;
  python: string;
}

/**
 * Fills in the defaults of `bench transform` (or of its quick mode) and checks the flags. The
 * dataset is `bench stream`'s for the sample count, so the benchmarks share their photos.
 */
export function resolveTransformBenchOptions(input: TransformBenchInput) {
  const d = TRANSFORM_BENCH_DEFAULTS;
  const f = parseFlags(TRANSFORM_FLAGS, input, input.quick);
  if (f.samples < f.batchSize * d.workers) {
    // Each DataLoader worker streams its own share: fewer samples than that leave a worker
    // idle and the Python legs would not measure two workers.
    throw invalidArgument(
      `--samples ${f.samples} is below ${f.batchSize * d.workers} (--batch-size ${f.batchSize} ` +
        `for each of the ${d.workers} DataLoader workers); use more samples or a smaller batch`,
    );
  }
  return {
    ...benchInputSettings(input, f),
    toxiproxy: input.toxiproxy,
    python: input.python,
    epochs: f.epochs,
    legs: TRANSFORM_LEG_NAMES.filter((n) => f.legs === undefined || f.legs.includes(n)),
    rttMs: f.rttMs,
    ...d,
  };
}

/** Settings of `runTransformBench`, as {@link resolveTransformBenchOptions} fills them in. */
export type TransformBenchOptions = ReturnType<typeof resolveTransformBenchOptions>;
