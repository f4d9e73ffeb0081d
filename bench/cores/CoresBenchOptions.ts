import os from 'node:os';
import { type DbConfig, invalidArgument } from '../../src/core/index.js';
import {
  benchPaths,
  DEFAULT_SAMPLES,
  defaultDatasetName,
  type BenchProgressFactory,
} from '../stream/StreamBenchOptions.js';

/** Settings of {@link runCoresBench}. */
export interface CoresBenchOptions {
  db: DbConfig;
  /** Pid of the local database node, for its CPU seconds; undefined for another cluster. */
  dbPid: number | undefined;
  samples: number;
  dataset: string;
  /** Loader worker counts (`serve --workers`), each measured `runs` times, interleaved. */
  workers: number[];
  /** Ranks of one job streaming at once, the same for every worker count. */
  streams: number;
  runs: number;
  batchSize: number;
  epochs: number;
  imageRoot: string;
  outDir: string;
  progress?: BenchProgressFactory;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/** What a caller of `bench cores` may set; everything else has a default. */
export interface CoresBenchInput {
  db: DbConfig;
  dbPid: number | undefined;
  /** The repository's `.state` folder. */
  stateRoot: string;
  /** Well under a minute: 300 samples, 1 and 2 workers, 4 streams, one run. */
  quick?: boolean;
  samples?: number;
  workers?: number[];
  streams?: number;
  runs?: number;
  batchSize?: number;
  epochs?: number;
  dataset?: string;
  outDir?: string;
  progress?: BenchProgressFactory;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/**
 * Fills in the defaults of `bench cores`: the `bench stream` dataset (3,000 ~100 kB JPEGs),
 * 1 worker up to one per core of this machine, 8 ranks (enough connections for the
 * primary's round robin to give every worker several), three interleaved runs, batches of
 * 32, two epochs per run; or of its quick mode. Checks the numbers.
 */
export function resolveCoresBenchOptions(input: CoresBenchInput): CoresBenchOptions {
  const quick = input.quick ?? false;
  const cores = os.availableParallelism();
  const samples = input.samples ?? (quick ? 300 : DEFAULT_SAMPLES);
  const runs = input.runs ?? (quick ? 1 : 3);
  const batchSize = input.batchSize ?? 32;
  const epochs = input.epochs ?? (quick ? 1 : 2);
  const streams = input.streams ?? (quick ? 4 : 8);
  const fallback = quick ? [1, 2] : Array.from({ length: Math.max(2, cores) }, (_, i) => i + 1);
  const workers = [...new Set(input.workers ?? fallback)].sort((a, b) => a - b);
  const check = (what: string, value: number, min: number, max: number): void => {
    if (!Number.isInteger(value) || value < min || value > max) {
      throw invalidArgument(`${what} must be a whole number from ${min} to ${max}, not ${value}`);
    }
  };
  check('--samples', samples, 1, 10_000_000);
  check('--runs', runs, 1, 1000);
  check('--batch-size', batchSize, 1, 8192);
  check('--epochs', epochs, 1, 100);
  // Each worker admits 64 streams by default; more would measure RESOURCE_EXHAUSTED retries.
  check('--streams', streams, 1, 64);
  if (workers.length === 0) throw invalidArgument('--workers needs at least one number');
  for (const w of workers) check('--workers', w, 1, 64);
  if (streams > samples)
    throw invalidArgument(`--streams ${streams} exceeds the ${samples} samples`);
  const paths = benchPaths(input.stateRoot);
  return {
    db: input.db,
    dbPid: input.dbPid,
    samples,
    dataset: input.dataset ?? defaultDatasetName(samples),
    workers,
    streams,
    runs,
    batchSize,
    epochs,
    imageRoot: paths.imageRoot,
    outDir: input.outDir ?? paths.outDir,
    ...(input.progress ? { progress: input.progress } : {}),
    ...(input.log ? { log: input.log } : {}),
    ...(input.signal ? { signal: input.signal } : {}),
  };
}
