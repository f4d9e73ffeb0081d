import { invalidArgument, type DbConfig } from '../../src/core/index.js';
import {
  benchPaths,
  defaultDatasetName,
  type BenchProgressFactory,
} from '../stream/StreamBenchOptions.js';
import { TRANSFORM_LEG_NAMES, type TransformLegName } from './transformLegs.js';

/** Settings of {@link runTransformBench} (see {@link resolveTransformBenchOptions}). */
export interface TransformBenchOptions {
  db: DbConfig;
  /** Pid of the local database node, for its CPU seconds; undefined for another cluster. */
  dbPid: number | undefined;
  /** `toxiproxy-server`, which injects the round trip of the proxied legs. */
  toxiproxy: string;
  /** Python interpreter with torch, torchvision, PIL, numpy and grpcio. */
  python: string;
  /** Distinct ~104 kB photo JPEGs in the dataset (`bench stream`'s imagenet payload). */
  samples: number;
  dataset: string;
  /** Samples per batch, server-side and in the DataLoader alike. */
  batchSize: number;
  /** Epochs every leg streams in one measured run. */
  epochs: number;
  /** Measured runs of every leg, interleaved; medians reported. */
  runs: number;
  /** The legs to run (default: all), in the table's order. */
  legs: TransformLegName[];
  /** DataLoader workers of the Python legs. */
  workers: number;
  /** Round trip injected between the proxied loader and the database in the last leg, ms. */
  rttMs: number;
  /** Side of the square RandomResizedCrop, px. */
  size: number;
  /** Probability of the horizontal flip. */
  flip: number;
  /** Quality of the JPEG leg. */
  jpegQuality: number;
  /** Folder of the generated images (an ImageFolder tree). */
  imageRoot: string;
  /** Folder the JSON report is written to. */
  outDir: string;
  progress?: BenchProgressFactory;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/** What `bench transform` is given; the rest is defaulted. */
export interface TransformBenchInput {
  db: DbConfig;
  dbPid: number | undefined;
  toxiproxy: string;
  python: string;
  /** The repository's `.state` folder. */
  stateRoot: string;
  /** CI-sized: 300 samples, 1 run. */
  quick?: boolean;
  samples?: number;
  batchSize?: number;
  epochs?: number;
  runs?: number;
  rttMs?: number;
  legs?: readonly TransformLegName[];
  dataset?: string;
  outDir?: string;
  progress?: BenchProgressFactory;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/** Defaults of the full run; `--quick` takes {@link TRANSFORM_BENCH_QUICK} over them. */
export const TRANSFORM_BENCH_DEFAULTS = {
  samples: 2000,
  batchSize: 64,
  epochs: 1,
  runs: 3,
  workers: 2,
  rttMs: 150,
  size: 224,
  flip: 0.5,
  jpegQuality: 90,
} as const;

/** What `--quick` changes: `bench stream --quick`'s dataset (300 samples), one run. */
export const TRANSFORM_BENCH_QUICK = { samples: 300, runs: 1 } as const;

/**
 * Fills in the defaults of `bench transform` (or of its quick mode) and checks the numbers,
 * with errors naming the flag. The dataset is `bench stream`'s for the sample count, so the
 * benchmarks share their ingested photos.
 */
export function resolveTransformBenchOptions(input: TransformBenchInput): TransformBenchOptions {
  const d = TRANSFORM_BENCH_DEFAULTS;
  const quick = input.quick ?? false;
  const samples = input.samples ?? (quick ? TRANSFORM_BENCH_QUICK.samples : d.samples);
  const runs = input.runs ?? (quick ? TRANSFORM_BENCH_QUICK.runs : d.runs);
  const batchSize = input.batchSize ?? d.batchSize;
  const epochs = input.epochs ?? d.epochs;
  const rttMs = input.rttMs ?? d.rttMs;
  const check = (flag: string, value: number, min: number, max: number): void => {
    if (!Number.isInteger(value) || value < min || value > max) {
      throw invalidArgument(`${flag} must be a whole number from ${min} to ${max}, not ${value}`);
    }
  };
  check('--samples', samples, 1, 10_000_000);
  check('--runs', runs, 1, 100);
  check('--batch-size', batchSize, 1, 8192);
  check('--epochs', epochs, 1, 100);
  check('--rtt', rttMs, 0, 10_000);
  if (samples < batchSize * d.workers) {
    // Each DataLoader worker streams its own share: fewer samples than that leave a worker
    // idle and the Python legs would not measure two workers.
    throw invalidArgument(
      `--samples ${samples} is below ${batchSize * d.workers} (--batch-size ${batchSize} for ` +
        `each of the ${d.workers} DataLoader workers); use more samples or a smaller batch`,
    );
  }
  if (input.legs !== undefined && input.legs.length === 0) {
    throw invalidArgument('--legs: at least one leg is needed');
  }
  const paths = benchPaths(input.stateRoot);
  return {
    db: input.db,
    dbPid: input.dbPid,
    toxiproxy: input.toxiproxy,
    python: input.python,
    samples,
    dataset: input.dataset ?? defaultDatasetName(samples),
    batchSize,
    epochs,
    runs,
    legs: TRANSFORM_LEG_NAMES.filter((n) => input.legs === undefined || input.legs.includes(n)),
    workers: d.workers,
    rttMs,
    size: d.size,
    flip: d.flip,
    jpegQuality: d.jpegQuality,
    imageRoot: paths.imageRoot,
    outDir: input.outDir ?? paths.outDir,
    ...(input.progress ? { progress: input.progress } : {}),
    ...(input.log ? { log: input.log } : {}),
    ...(input.signal ? { signal: input.signal } : {}),
  };
}
