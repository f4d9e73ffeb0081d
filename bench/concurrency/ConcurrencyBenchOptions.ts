import path from 'node:path';
import { invalidArgument } from '../../src/core/index.js';
import {
  flag,
  parseFlags,
  text,
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

/** The flags of `bench concurrency` with their defaults (full; quick: well under a minute). */
export const CONCURRENCY_FLAGS = {
  // The loader admits 64 streams by default; more would measure its RESOURCE_EXHAUSTED retries.
  streams: flag(
    '--streams <list>',
    'numbers of concurrent streams',
    wholeNumbers('--streams', 1, 64),
    [1, 2, 4, 8, 16],
    [1, 4],
  ),
  ...photoBenchFlags({ samples: DEFAULT_SAMPLES, runsOf: 'k', batchSize: 32 }),
  epochs: epochsFlag('every rank', 2),
  cpuProfileDir: flag(
    '--cpu-prof <dir>',
    'write a CPU profile of the loader (node --cpu-prof) into dir',
    text,
  ),
};

/**
 * Fills in the defaults of `bench concurrency` (the `bench stream` dataset of 3,000 ~100 kB
 * JPEGs, k = 1, 2, 4, 8, 16, three runs, batches of 32, two epochs per run) or of its quick
 * mode, and checks the flags. Batches of 32 and two epochs so that at k=16 every rank
 * (~188 samples per epoch) still gets about 12 batches: enough for its waits to mean
 * something and for the run to last long enough (6,000 samples) that start-up is a small part.
 */
export function resolveConcurrencyBenchOptions(
  input: BenchInput & FlagInput<typeof CONCURRENCY_FLAGS>,
) {
  const f = parseFlags(CONCURRENCY_FLAGS, input, input.quick);
  const streams = [...new Set(f.streams)].sort((a, b) => a - b);
  if (streams.at(-1)! > f.samples) {
    throw invalidArgument(`--streams ${streams.at(-1)} exceeds the ${f.samples} samples`);
  }
  return {
    ...benchInputSettings(input, f),
    streams,
    epochs: f.epochs,
    ...(f.cpuProfileDir ? { cpuProfileDir: path.resolve(f.cpuProfileDir) } : {}),
  };
}

/** Settings of `runConcurrencyBench`, as {@link resolveConcurrencyBenchOptions} fills them in. */
export type ConcurrencyBenchOptions = ReturnType<typeof resolveConcurrencyBenchOptions>;
