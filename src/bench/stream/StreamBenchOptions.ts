import path from 'node:path';
import type { Progress } from '../../cli/progress.js';
import type { DbConfig } from '../../server/config/dbConfig.js';

/** Where the processes run: wherever the OS puts them, or database and loader on own cores. */
export type Placement = 'unpinned' | 'pinned';

/** Makes a progress display for `total` items (the CLI passes `createProgress`). */
export type BenchProgressFactory = (label: string, total: number, unit: string) => Progress;

/** Settings of {@link runStreamBench}. */
export interface StreamBenchOptions {
  /** Database the loader, the tight loop and this process connect to. */
  db: DbConfig;
  /** Samples (distinct ~100 kB JPEG files) in the dataset. */
  samples: number;
  /** Dataset (keyspace) name. */
  dataset: string;
  /** Measured runs of each scenario and placement, interleaved. */
  runs: number;
  /** Concurrencies the tight loop is calibrated over; the best is used for its timed runs. */
  concurrencies: number[];
  batchSize: number;
  placements: Placement[];
  /** Iterations of each layout in the encode/decode micro-benchmark. */
  layoutIterations: number;
  /** Folder of the generated images (an ImageFolder tree). */
  imageRoot: string;
  /** Folder the JSON report is written to. */
  outDir: string;
  /**
   * Pid of the database node, for its CPU seconds and for pinning; undefined when the
   * database is not the local development node.
   */
  dbPid: number | undefined;
  /** Progress displays; default: none. */
  progress?: BenchProgressFactory;
  /** Status lines (default: none). */
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/** Default sample count, and the dataset name that goes with it. @internal */
export const DEFAULT_SAMPLES = 3000;

/**
 * `bench_stream_100k` for the default sample count, `bench_stream_100k_n<N>` otherwise, so a
 * quick run never streams the full dataset and never spoils it.
 *
 * @internal
 */
export function defaultDatasetName(samples: number): string {
  return samples === DEFAULT_SAMPLES ? 'bench_stream_100k' : `bench_stream_100k_n${samples}`;
}

/**
 * Everything the benchmark keeps under `<repo>/.state/bench`: the image tree (shared by every
 * sample count: a dataset of N samples takes images 0..N-1) and the JSON reports.
 *
 * @internal
 */
export function benchPaths(stateRoot: string): { imageRoot: string; outDir: string } {
  const outDir = path.join(stateRoot, 'bench');
  return { imageRoot: path.join(outDir, 'stream-100k'), outDir };
}
