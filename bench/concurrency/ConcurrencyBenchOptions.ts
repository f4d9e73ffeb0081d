import { type DbConfig, invalidArgument } from '../../src/core/index.js';
import {
  benchPaths,
  DEFAULT_SAMPLES,
  defaultDatasetName,
  type BenchProgressFactory,
} from '../stream/StreamBenchOptions.js';

/** Settings of {@link runConcurrencyBench}. */
export interface ConcurrencyBenchOptions {
  db: DbConfig;
  /** Pid of the local database node, for its CPU seconds; undefined for another cluster. */
  dbPid: number | undefined;
  samples: number;
  dataset: string;
  /** Numbers of ranks streaming at once, each measured `runs` times, interleaved. */
  streams: number[];
  runs: number;
  batchSize: number;
  /** Epochs every rank streams per run. */
  epochs: number;
  imageRoot: string;
  outDir: string;
  /** Write a CPU profile of the loader (`--cpu-prof`) into this folder. */
  cpuProfileDir?: string;
  progress?: BenchProgressFactory;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/** What a caller of `bench concurrency` may set; everything else has a default. */
export interface ConcurrencyBenchInput {
  db: DbConfig;
  dbPid: number | undefined;
  /** The repository's `.state` folder. */
  stateRoot: string;
  /** Well under a minute: 300 samples, 1 and 4 ranks, one run. */
  quick?: boolean;
  samples?: number;
  streams?: number[];
  runs?: number;
  batchSize?: number;
  epochs?: number;
  dataset?: string;
  outDir?: string;
  cpuProfileDir?: string;
  progress?: BenchProgressFactory;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/** Ranks of the full mode. */
export const DEFAULT_STREAMS = [1, 2, 4, 8, 16];

/**
 * Fills in the defaults of `bench concurrency` (the `bench stream` dataset of 3,000 ~100 kB
 * JPEGs, k = 1, 2, 4, 8, 16, three runs, batches of 32, two epochs per run) or of its quick
 * mode, and checks the numbers. Batches of 32 and two epochs so that at k=16 every rank
 * (~188 samples per epoch) still gets about 12 batches: enough for its waits to mean
 * something and for the run to last long enough (6,000 samples) that start-up is a small part.
 */
export function resolveConcurrencyBenchOptions(
  input: ConcurrencyBenchInput,
): ConcurrencyBenchOptions {
  const quick = input.quick ?? false;
  const samples = input.samples ?? (quick ? 300 : DEFAULT_SAMPLES);
  const runs = input.runs ?? (quick ? 1 : 3);
  const batchSize = input.batchSize ?? 32;
  const epochs = input.epochs ?? 2;
  const streams = [...new Set(input.streams ?? (quick ? [1, 4] : DEFAULT_STREAMS))].sort(
    (a, b) => a - b,
  );
  const check = (what: string, value: number, min: number, max: number): void => {
    if (!Number.isInteger(value) || value < min || value > max) {
      throw invalidArgument(`${what} must be a whole number from ${min} to ${max}, not ${value}`);
    }
  };
  check('--samples', samples, 1, 10_000_000);
  check('--runs', runs, 1, 1000);
  check('--batch-size', batchSize, 1, 8192);
  check('--epochs', epochs, 1, 100);
  if (streams.length === 0) throw invalidArgument('--streams needs at least one number');
  // The loader admits 64 streams by default; more would measure its RESOURCE_EXHAUSTED retries.
  for (const k of streams) check('--streams', k, 1, 64);
  if (streams[streams.length - 1]! > samples) {
    throw invalidArgument(`--streams ${streams.at(-1)} exceeds the ${samples} samples`);
  }
  const paths = benchPaths(input.stateRoot);
  return {
    db: input.db,
    dbPid: input.dbPid,
    samples,
    dataset: input.dataset ?? defaultDatasetName(samples),
    streams,
    runs,
    batchSize,
    epochs,
    imageRoot: paths.imageRoot,
    outDir: input.outDir ?? paths.outDir,
    ...(input.cpuProfileDir ? { cpuProfileDir: input.cpuProfileDir } : {}),
    ...(input.progress ? { progress: input.progress } : {}),
    ...(input.log ? { log: input.log } : {}),
    ...(input.signal ? { signal: input.signal } : {}),
  };
}
