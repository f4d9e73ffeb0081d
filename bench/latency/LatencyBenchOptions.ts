import {
  flag,
  names,
  parseFlags,
  wholeNumber,
  wholeNumbers,
  type FlagInput,
  photoBenchFlags,
} from '../cli/benchOptions.js';
import {
  benchInputSettings,
  DEFAULT_SAMPLES,
  PLACEMENTS,
  type BenchInput,
  type Placement,
} from '../stream/StreamBenchOptions.js';
import { DEFAULT_CONGESTED } from './routeToxics.js';

/**
 * Default rate of the paced trainer, samples/s: below what the loader streams here at 0 ms
 * (about 1,500-2,000 samples/s of ~110 kB), as a trainer the loader should keep fed.
 */
const DEFAULT_TRAINER_SAMPLES_PER_SECOND = 1000;

/** The flags of `bench latency` with their defaults (full; quick: about a minute). */
export const LATENCY_FLAGS = {
  ...photoBenchFlags({
    samples: DEFAULT_SAMPLES,
    runsOf: 'scenario',
    batchSize: 64,
    quickBatchSize: 32,
  }),
  rttsMs: flag(
    '--rtts <list>',
    'injected round trips in ms',
    wholeNumbers('round trip (ms)', 0, 10_000),
    [0, 20, 150],
    [0, 20],
  ),
  placements: flag(
    '--placements <list>',
    'unpinned, pinned (database and toxiproxy on one core, loaders and trainers on the ' +
      'other) or both',
    names('--placements', PLACEMENTS, 'placement'),
    ['pinned', 'unpinned'] as Placement[],
    ['unpinned'] as Placement[],
  ),
  trainerSamplesPerSecond: flag(
    '--trainer-rate <n>',
    'samples/s of the paced trainer whose stalls are reported (0: none)',
    wholeNumber('--trainer-rate', 0, 1_000_000),
    DEFAULT_TRAINER_SAMPLES_PER_SECOND,
  ),
};

/** What a caller of `bench latency` gives; the flags may be left out (defaults). */
export interface LatencyBenchInput extends BenchInput, FlagInput<typeof LATENCY_FLAGS> {
  toxiproxy: string;
}

/**
 * Fills in the defaults of `bench latency` (N=3000 on the `bench stream` dataset, K=3, round
 * trips 0, 20 and 150 ms, batches of 64, the congested route at 20 ms) or of its quick mode,
 * and checks the flags. Batches are smaller than `bench stream`'s so that an epoch has
 * enough of them for a batch-wait p99.
 */
export function resolveLatencyBenchOptions(input: LatencyBenchInput) {
  const f = parseFlags(LATENCY_FLAGS, input, input.quick);
  const rttsMs = [...new Set(f.rttsMs)].sort((a, b) => a - b);
  return {
    ...benchInputSettings(input, f),
    toxiproxy: input.toxiproxy,
    placements: f.placements,
    trainerSamplesPerSecond:
      f.trainerSamplesPerSecond === 0 ? undefined : f.trainerSamplesPerSecond,
    rttsMs,
    congestedAtRttMs: rttsMs.includes(20) ? 20 : rttsMs[0],
    congested: DEFAULT_CONGESTED,
    warmupFraction: 0.1,
  };
}

/** Settings of `runLatencyBench`, as {@link resolveLatencyBenchOptions} fills them in. */
export type LatencyBenchOptions = ReturnType<typeof resolveLatencyBenchOptions>;
