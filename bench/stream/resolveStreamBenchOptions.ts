import { PHOTO_PRESET_NAMES, type PhotoPresetName } from '../../src/datasets/photos/index.js';
import {
  choice,
  flag,
  names,
  onOff,
  parseFlags,
  positiveNumbers,
  text,
  wholeNumber,
  wholeNumbers,
  type FlagInput,
  samplesFlag,
  runsFlag,
  batchSizeFlag,
  PHOTO_OUTPUT_FLAGS,
} from '../cli/benchOptions.js';
import {
  benchInputSettings,
  DEFAULT_SAMPLES,
  PLACEMENTS,
  type BenchInput,
} from './StreamBenchOptions.js';

/** The tight loop's concurrencies tried by default; the best is kept. */
export const DEFAULT_CONCURRENCIES = [32, 64, 128, 256];

/** Most sources `--sources` takes. */
export const MAX_BENCH_SOURCES = 8;

/** The flags of `bench stream` with their defaults (full; quick: about a minute). */
export const STREAM_FLAGS = {
  samples: samplesFlag(DEFAULT_SAMPLES),
  payload: flag(
    '--payload <preset>',
    'sample size: imagenet (~104 kB), small (224x224, ~15 kB) or tiny (32x32, ~500 B)',
    choice('--payload', PHOTO_PRESET_NAMES),
    'imagenet' as PhotoPresetName,
  ),
  runs: runsFlag('scenario'),
  concurrencies: flag(
    '--concurrency <list>',
    'tight-loop reads in flight to calibrate over, best kept',
    wholeNumbers('--concurrency', 1, 100_000),
    DEFAULT_CONCURRENCIES,
    [128],
  ),
  batchSize: batchSizeFlag(128),
  placements: flag(
    '--placements <list>',
    'unpinned, pinned or unpinned,pinned (default both; quick unpinned unless --pin)',
    names('--placements', PLACEMENTS, 'placement'),
  ),
  ...PHOTO_OUTPUT_FLAGS,
  dataset: flag('--dataset <name>', 'dataset name (default bench_photo_<payload>_n<N>)', text),
  layoutIterations: flag(
    '--layout-iterations <n>',
    'iterations per layout of the micro-benchmark',
    wholeNumber('--layout-iterations', 1, 1_000_000),
    50,
    15,
  ),
  pin: flag('--pin', 'with --quick: run the pinned placement too', onOff, false),
  groupReads: flag(
    '--group-reads <n>',
    'also run the tight loop and the service reading n samples per query, grouped by ' +
      'replica (the plain service rows then read one row per sample)',
    wholeNumber('--group-reads', 2, 1024),
  ),
  sources: flag(
    '--sources <weights>',
    'also stream a mixture of that many parts of the dataset (split set mix<w1>_<w2>..., ' +
      'parts sized by the weights) weighted by them, e.g. 5,3,2, as many samples as the ' +
      'single-source service; compared with it run by run (2 to 8 weights)',
    positiveNumbers('--sources', 2, MAX_BENCH_SOURCES),
  ),
  columns: flag(
    '--columns',
    'also stream with metadata columns (a ~100 B text column and an int column, added to the ' +
      'dataset if missing), compared with the same stream without columns run by run',
    onOff,
    false,
  ),
  ledger: flag(
    '--ledger',
    'also stream naming a job, so the loader records every batch in its training ledger ' +
      '(keyspace <dataset>_ledger, dropped after), compared with the same stream without a job ' +
      "run by run, and measure the ledger's bytes per sample",
    onOff,
    false,
  ),
};

/**
 * Fills in the defaults of `bench stream` (N=3000 imagenet-size photos, K=3, C in {32, 64,
 * 128, 256}, batch 128, both placements) or of its quick mode, and checks the flags. With
 * `--sources`, `mixWeights` holds the mixture's weights.
 */
export function resolveStreamBenchOptions(input: BenchInput & FlagInput<typeof STREAM_FLAGS>) {
  const quick = input.quick ?? false;
  const f = parseFlags(STREAM_FLAGS, input, quick);
  return {
    ...benchInputSettings(input, f, f.payload),
    payload: f.payload,
    concurrencies: f.concurrencies,
    placements: f.placements ?? (quick && !f.pin ? ['unpinned'] : ['unpinned', 'pinned']),
    layoutIterations: f.layoutIterations,
    ...(f.groupReads === undefined ? {} : { groupReads: f.groupReads }),
    ...(f.sources === undefined ? {} : { mixWeights: f.sources }),
    columns: f.columns,
    ledger: f.ledger,
  };
}

/** Settings of `runStreamBench`, as {@link resolveStreamBenchOptions} fills them in. */
export type StreamBenchOptions = ReturnType<typeof resolveStreamBenchOptions>;
