import {
  flag,
  names,
  parseFlags,
  wholeNumber,
  wholeNumbers,
  share,
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
 * The paced trainer's rate by default: 80% of what C streams at 0 ms in the same round and
 * placement (issue 42: a trainer the loader should keep fed whatever the round trip).
 */
const DEFAULT_TRAINER_SHARE = 0.8;
/** The paced trainer's rate with the congested route, samples/s (issue 42's goal). */
const DEFAULT_CONGESTED_TRAINER_SAMPLES_PER_SECOND = 750;

/** How fast the paced trainer takes samples: a fixed rate, or a share of C at 0 ms. */
export type TrainerPace =
  { samplesPerSecond: number } | { share: number; congestedSamplesPerSecond: number };

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
    'a fixed rate, samples/s, for the paced trainer whose stalls are reported (0: a share of ' +
      "C's rate, --trainer-share)",
    wholeNumber('--trainer-rate', 0, 1_000_000),
    0,
  ),
  trainerShare: flag(
    '--trainer-share <f>',
    "the paced trainer's rate as a share of C's samples/s at 0 ms in the same round and " +
      'placement (0, and no --trainer-rate: no paced trainer)',
    share('--trainer-share', 4),
    DEFAULT_TRAINER_SHARE,
  ),
  congestedTrainerSamplesPerSecond: flag(
    '--congested-trainer-rate <n>',
    'samples/s of the paced trainer with the congested route, when paced by a share',
    wholeNumber('--congested-trainer-rate', 1, 1_000_000),
    DEFAULT_CONGESTED_TRAINER_SAMPLES_PER_SECOND,
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
    trainerPace: trainerPace(f, rttsMs),
    rttsMs,
    congestedAtRttMs: rttsMs.includes(20) ? 20 : rttsMs[0],
    congested: DEFAULT_CONGESTED,
    warmupFraction: 0.1,
  };
}

/** Settings of `runLatencyBench`, as {@link resolveLatencyBenchOptions} fills them in. */
export type LatencyBenchOptions = ReturnType<typeof resolveLatencyBenchOptions>;

/** The paced trainer's rate from the flags; undefined: no paced trainer. */
function trainerPace(
  f: {
    trainerSamplesPerSecond: number;
    trainerShare: number;
    congestedTrainerSamplesPerSecond: number;
  },
  rttsMs: readonly number[],
): TrainerPace | undefined {
  if (f.trainerSamplesPerSecond > 0) return { samplesPerSecond: f.trainerSamplesPerSecond };
  if (f.trainerShare === 0) return undefined;
  if (!rttsMs.includes(0)) {
    throw new Error(
      "the paced trainer's rate is a share of C's at 0 ms: give --rtts with 0 in it, or a " +
        'fixed --trainer-rate',
    );
  }
  return { share: f.trainerShare, congestedSamplesPerSecond: f.congestedTrainerSamplesPerSecond };
}
