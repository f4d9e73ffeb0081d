import os from 'node:os';
import { invalidArgument } from '../../src/core/index.js';
import {
  flag,
  parseFlags,
  wholeNumber,
  wholeNumbers,
  type FlagInput,
  epochsFlag,
  photoBenchFlags,
} from '../cli/benchOptions.js';
import {
  benchInputSettings,
  DEFAULT_SAMPLES,
  type BenchInput,
} from '../stream/StreamBenchOptions.js';

/** Worker counts of the full mode: 1 up to the cores of this machine, at least 1 and 2. */
function allCores(): number[] {
  return Array.from({ length: Math.max(2, os.availableParallelism()) }, (_, i) => i + 1);
}

/** The flags of `bench cores` with their defaults (full; quick: about a minute). */
export const CORES_FLAGS = {
  workers: flag(
    '--workers <list>',
    'worker counts (default 1 up to the cores, at least 1,2; quick 1,2)',
    wholeNumbers('--workers', 1, 64),
  ),
  // Each worker admits 64 streams by default; more would measure RESOURCE_EXHAUSTED retries.
  streams: flag('--streams <k>', 'ranks streaming at once', wholeNumber('--streams', 1, 64), 8, 4),
  ...photoBenchFlags({ samples: DEFAULT_SAMPLES, runsOf: 'worker count', batchSize: 32 }),
  epochs: epochsFlag('every rank', 2, 1),
};

/**
 * Fills in the defaults of `bench cores`: the `bench stream` dataset (3,000 ~100 kB JPEGs),
 * 1 worker up to one per core of this machine, 8 ranks (enough connections for the
 * primary's round robin to give every worker several), three interleaved runs, batches of
 * 32, two epochs per run; or of its quick mode. Checks the flags.
 */
export function resolveCoresBenchOptions(input: BenchInput & FlagInput<typeof CORES_FLAGS>) {
  const f = parseFlags(CORES_FLAGS, input, input.quick);
  const workers = [...new Set(f.workers ?? (input.quick ? [1, 2] : allCores()))].sort(
    (a, b) => a - b,
  );
  if (f.streams > f.samples) {
    throw invalidArgument(`--streams ${f.streams} exceeds the ${f.samples} samples`);
  }
  return {
    ...benchInputSettings(input, f),
    workers,
    streams: f.streams,
    epochs: f.epochs,
  };
}

/** Settings of `runCoresBench`, as {@link resolveCoresBenchOptions} fills them in. */
export type CoresBenchOptions = ReturnType<typeof resolveCoresBenchOptions>;
