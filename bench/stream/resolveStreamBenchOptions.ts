import type { PhotoPresetName } from '../../src/datasets/photos/PhotoPreset.js';
import { type DbConfig, invalidArgument } from '../../src/core/index.js';
import {
  benchPaths,
  DEFAULT_SAMPLES,
  defaultDatasetName,
  type BenchProgressFactory,
  type Placement,
  type StreamBenchOptions,
} from './StreamBenchOptions.js';

/** What a caller of `bench stream` may set; everything else has a default. */
export interface StreamBenchInput {
  db: DbConfig;
  /** Pid of the local database node (CPU seconds, pinning); undefined for another cluster. */
  dbPid: number | undefined;
  /** The repository's `.state` folder. */
  stateRoot: string;
  /**
   * About a minute: 300 samples, one run, one tight-loop concurrency (128), the unpinned
   * placement only (unless `pin` or `placements` say otherwise), a short layout benchmark.
   */
  quick?: boolean;
  /** With `quick`: run the pinned placement too. */
  pin?: boolean;
  samples?: number;
  /** Default `imagenet`. */
  payload?: PhotoPresetName;
  runs?: number;
  concurrencies?: number[];
  batchSize?: number;
  placements?: Placement[];
  dataset?: string;
  layoutIterations?: number;
  /** Samples per query of the grouped scenarios; absent: they are not run. */
  groupReads?: number;
  outDir?: string;
  progress?: BenchProgressFactory;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/** The tight loop's concurrencies tried by default; the best is kept. */
export const DEFAULT_CONCURRENCIES = [32, 64, 128, 256];

/**
 * Fills in the defaults of `bench stream` (N=3000 imagenet-size photos, K=3, C in {32, 64,
 * 128, 256}, batch 128, both placements) or of its quick mode, and checks the numbers.
 */
export function resolveStreamBenchOptions(input: StreamBenchInput): StreamBenchOptions {
  const quick = input.quick ?? false;
  const samples = input.samples ?? (quick ? 300 : DEFAULT_SAMPLES);
  const runs = input.runs ?? (quick ? 1 : 3);
  const concurrencies = input.concurrencies ?? (quick ? [128] : DEFAULT_CONCURRENCIES);
  const batchSize = input.batchSize ?? 128;
  const placements: Placement[] =
    input.placements ?? (quick && !input.pin ? ['unpinned'] : ['unpinned', 'pinned']);
  const check = (what: string, value: number, min: number, max: number): void => {
    if (!Number.isInteger(value) || value < min || value > max) {
      throw invalidArgument(`${what} must be a whole number from ${min} to ${max}, not ${value}`);
    }
  };
  check('--samples', samples, 1, 10_000_000);
  check('--runs', runs, 1, 1000);
  check('--batch-size', batchSize, 1, 8192);
  if (concurrencies.length === 0) throw invalidArgument('--concurrency needs at least one value');
  for (const c of concurrencies) check('--concurrency', c, 1, 100_000);
  if (input.groupReads !== undefined) check('--group-reads', input.groupReads, 2, 1024);
  const payload = input.payload ?? 'imagenet';
  const paths = benchPaths(input.stateRoot, payload);
  return {
    db: input.db,
    dbPid: input.dbPid,
    samples,
    payload,
    dataset: input.dataset ?? defaultDatasetName(samples, payload),
    runs,
    concurrencies,
    batchSize,
    placements: [...new Set(placements)],
    layoutIterations: input.layoutIterations ?? (quick ? 15 : 50),
    ...(input.groupReads === undefined ? {} : { groupReads: input.groupReads }),
    imageRoot: paths.imageRoot,
    outDir: input.outDir ?? paths.outDir,
    ...(input.progress ? { progress: input.progress } : {}),
    ...(input.log ? { log: input.log } : {}),
    ...(input.signal ? { signal: input.signal } : {}),
  };
}
