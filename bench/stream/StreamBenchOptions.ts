import path from 'node:path';
import type { PhotoPresetName } from '../../src/datasets/photos/index.js';
import type { DbConfig } from '../../src/core/index.js';

/** Where the processes run: wherever the OS puts them, or database and loader on own cores. */
export type Placement = (typeof PLACEMENTS)[number];

/** Every placement, in the order the tables show them. */
export const PLACEMENTS = ['unpinned', 'pinned'] as const;

export type { BenchProgressFactory } from '../../test/support/index.js';
import type { BenchProgressFactory } from '../../test/support/index.js';

/** `progress` if given, else displays that show nothing but pass their lines to `log`. @internal */
export function progressOrLog(
  progress: BenchProgressFactory | undefined,
  log: (line: string) => void,
): BenchProgressFactory {
  return (
    progress ??
    (() => ({ update: () => undefined, log: (line) => log(line), stop: () => undefined }))
  );
}

/** Default sample count of the benchmarks. @internal */
export const DEFAULT_SAMPLES = 3000;

/**
 * `bench_photo_<payload>_n<N>`: one dataset per payload and sample count, so a quick run
 * never streams the full dataset and never spoils it. The payload is `imagenet` for every
 * benchmark but `bench stream --payload small`. @internal
 */
export function defaultDatasetName(samples: number, payload: PhotoPresetName = 'imagenet'): string {
  return `bench_photo_${payload}_n${samples}`;
}

/**
 * Everything the benchmarks keep under `<repo>/.state/bench`: the image tree of a payload,
 * `photos-<payload>` (shared by every sample count and benchmark: a dataset of N samples
 * takes images 0..N-1), and the JSON reports. @internal
 */
export function benchPaths(
  stateRoot: string,
  payload: PhotoPresetName = 'imagenet',
): { imageRoot: string; outDir: string } {
  const outDir = path.join(stateRoot, 'bench');
  return { imageRoot: path.join(outDir, `photos-${payload}`), outDir };
}

/** What every photo benchmark is given besides its flags. */
export interface BenchInput {
  db: DbConfig;
  /** Pid of the local database node, for its CPU seconds; undefined for another cluster. */
  dbPid: number | undefined;
  /** The repository's `.state` folder. */
  stateRoot: string;
  /** The small, quick form of the benchmark (the test command runs it). */
  quick?: boolean | undefined;
  progress?: BenchProgressFactory | undefined;
  log?: ((line: string) => void) | undefined;
  signal?: AbortSignal | undefined;
}

/** The parsed flags every photo benchmark has (see `photoBenchFlags`). */
export interface PhotoBenchFlagValues {
  samples: number;
  runs: number;
  batchSize: number;
  dataset: string | undefined;
  outDir: string | undefined;
}

/**
 * The settings every photo benchmark derives alike from its input: the database, the
 * dataset of `bench stream` for the sample count (unless named), the shared image tree, the
 * report folder, runs and batch size. @internal
 */
export function benchInputSettings(
  input: BenchInput,
  { samples, runs, batchSize, dataset, outDir }: PhotoBenchFlagValues,
  payload: PhotoPresetName = 'imagenet',
) {
  const paths = benchPaths(input.stateRoot, payload);
  return {
    db: input.db,
    dbPid: input.dbPid,
    samples,
    runs,
    batchSize,
    dataset: dataset ?? defaultDatasetName(samples, payload),
    imageRoot: paths.imageRoot,
    outDir: outDir === undefined ? paths.outDir : path.resolve(outDir),
    progress: input.progress,
    log: input.log,
    signal: input.signal,
  };
}
