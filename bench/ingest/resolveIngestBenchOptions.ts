import path from 'node:path';
import { type DbConfig, invalidArgument } from '../../src/core/index.js';
import { benchPaths, type BenchProgressFactory } from '../stream/StreamBenchOptions.js';
import {
  INGEST_BENCH_DEFAULTS,
  INGEST_BENCH_QUICK,
  type IngestBenchOptions,
} from './IngestBenchOptions.js';

/** What a caller of `bench ingest` may set; everything else has a default. */
export interface IngestBenchInput {
  db: DbConfig;
  /** State folder of the local cluster `db` points at; undefined for another cluster. */
  localStateDir: string | undefined;
  /** The repository's `.state` folder (images, MNIST, reports go below it). */
  stateRoot: string;
  /** 200 images, one run, concurrency 128, MNIST limited to 500 per subset. */
  quick?: boolean;
  images?: number;
  runs?: number;
  concurrencies?: number[];
  mnist?: boolean;
  mnistLimit?: number;
  /** Time as many cold starts of the local node as there are runs. */
  coldStart?: boolean;
  /** Cold starts to time; wins over `coldStart`. */
  coldStarts?: number;
  keyspacePrefix?: string;
  outDir?: string;
  progress?: BenchProgressFactory;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/**
 * Fills in the defaults of `bench ingest` (3,000 images, 3 runs, concurrency 16, 32, 64 and
 * 128, all of MNIST) or of its quick mode, and checks the numbers. Explicit values win over
 * the quick ones.
 */
export function resolveIngestBenchOptions(input: IngestBenchInput): IngestBenchOptions {
  const quick = input.quick ?? false;
  const preset = quick ? INGEST_BENCH_QUICK : undefined;
  const images = input.images ?? preset?.images ?? INGEST_BENCH_DEFAULTS.images;
  const runs = input.runs ?? preset?.runs ?? INGEST_BENCH_DEFAULTS.runs;
  const concurrencies = input.concurrencies ?? [
    ...(preset?.concurrencies ?? INGEST_BENCH_DEFAULTS.concurrencies),
  ];
  const mnistLimit = input.mnistLimit ?? preset?.mnistLimit;
  const coldStarts = input.coldStarts ?? (input.coldStart ? runs : 0);
  const keyspacePrefix = input.keyspacePrefix ?? INGEST_BENCH_DEFAULTS.keyspacePrefix;

  const check = (what: string, value: number, min: number, max: number): void => {
    if (!Number.isInteger(value) || value < min || value > max) {
      throw invalidArgument(`${what} must be a whole number from ${min} to ${max}, not ${value}`);
    }
  };
  check('--images', images, 1, 1_000_000);
  check('--runs', runs, 1, 100);
  if (concurrencies.length === 0) throw invalidArgument('--concurrency needs at least one value');
  for (const c of concurrencies) check('--concurrency', c, 1, 4096);
  if (mnistLimit !== undefined) check('--mnist-limit', mnistLimit, 1, 60_000);
  check('--cold-starts', coldStarts, 0, 20);
  // Keyspaces are dropped before and after each run: refuse a prefix that could name a real
  // dataset. The longest name, `<prefix>mnist` or `<prefix><images>`, must stay within 48.
  if (!/^bench_[a-z0-9_]*$/.test(keyspacePrefix) || keyspacePrefix.length > 40) {
    throw invalidArgument(
      `keyspace prefix ${JSON.stringify(keyspacePrefix)} must start with bench_, use only ` +
        'lower-case letters, digits and underscores, and be at most 40 characters',
    );
  }
  if (coldStarts > 0 && input.localStateDir === undefined) {
    throw invalidArgument(
      'cold starts stop and start the local development node, but the database is another ' +
        'cluster (SCYLLA_LOADER_CONTACT_POINTS or --contact-points is set)',
    );
  }

  const paths = benchPaths(input.stateRoot);
  return {
    db: input.db,
    localStateDir: input.localStateDir,
    images,
    runs,
    concurrencies,
    mnist: input.mnist ?? true,
    mnistLimit,
    coldStarts,
    keyspacePrefix,
    imageRoot: paths.imageRoot,
    // The full set is the one `prepare mnist --out .state/mnist` makes, so both share it.
    mnistDir: path.join(input.stateRoot, mnistLimit ? `mnist-${mnistLimit}` : 'mnist'),
    outDir: input.outDir ?? paths.outDir,
    settleMaxMs: quick ? 3000 : 15_000,
    ...(input.progress ? { progress: input.progress } : {}),
    ...(input.log ? { log: input.log } : {}),
    ...(input.signal ? { signal: input.signal } : {}),
  };
}
