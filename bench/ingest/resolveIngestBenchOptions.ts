import path from 'node:path';
import { invalidArgument } from '../../src/core/index.js';
import {
  flag,
  onOff,
  parseFlags,
  text,
  wholeNumber,
  wholeNumbers,
  names,
  type FlagInput,
  runsFlag,
  PHOTO_OUTPUT_FLAGS,
} from '../cli/benchOptions.js';
import { benchPaths, type BenchInput } from '../stream/StreamBenchOptions.js';
import { INGEST_WAYS } from './runIngestWay.js';

/** The flags of `bench ingest` with their defaults (full; quick: well under a minute). */
export const INGEST_FLAGS = {
  images: flag(
    '--images <n>',
    'distinct ~100 kB JPEGs',
    wholeNumber('--images', 1, 1_000_000),
    3000,
    200,
  ),
  runs: runsFlag('source, way and concurrency', 3, 1, 100),
  ways: flag(
    '--ways <list>',
    `ways into the dataset, side by side (${INGEST_WAYS.join(', ')})`,
    names('--ways', INGEST_WAYS, 'way'),
    [...INGEST_WAYS],
    [...INGEST_WAYS],
  ),
  concurrencies: flag(
    '--concurrency <list>',
    'samples in flight to try (per process)',
    wholeNumbers('--concurrency', 1, 4096),
    [256],
    [256],
  ),
  mnist: flag('--no-mnist', 'skip MNIST', onOff, true),
  mnistLimit: flag(
    '--mnist-limit <n>',
    'only the first n MNIST images of each subset (default all; quick 500)',
    wholeNumber('--mnist-limit', 1, 60_000),
  ),
  coldStart: flag(
    '--cold-start',
    'also stop and start the local node as many times as --runs, timing the start',
    onOff,
    false,
  ),
  coldStarts: flag(
    '--cold-starts <n>',
    'stop and start the local node this many times',
    wholeNumber('--cold-starts', 0, 20),
  ),
  keyspacePrefix: flag(
    '--keyspace-prefix <p>',
    'keyspaces are <p><images> and <p>mnist',
    text,
    'bench_ingest_',
  ),
  outDir: PHOTO_OUTPUT_FLAGS.outDir,
};

/** What a caller of `bench ingest` gives; the flags may be left out (defaults). */
export interface IngestBenchInput
  extends Omit<BenchInput, 'dbPid'>, FlagInput<typeof INGEST_FLAGS> {
  /** State folder of the local cluster `db` points at; undefined for another cluster. */
  localStateDir: string | undefined;
}

/**
 * Fills in the defaults of `bench ingest` (3,000 images, 3 runs, every way, concurrency 256,
 * all of MNIST) or of its quick mode, and checks the flags. Explicit values win over
 * the quick ones.
 */
export function resolveIngestBenchOptions(input: IngestBenchInput) {
  const quick = input.quick ?? false;
  const f = parseFlags(INGEST_FLAGS, input, quick);
  const mnistLimit = f.mnistLimit ?? (quick ? 500 : undefined);
  const coldStarts = f.coldStarts ?? (f.coldStart ? f.runs : 0);
  // Keyspaces are dropped before and after each run: refuse a prefix that could name a real
  // dataset. The longest name, `<prefix>mnist` or `<prefix><images>`, must stay within 48.
  if (!/^bench_[a-z0-9_]*$/.test(f.keyspacePrefix) || f.keyspacePrefix.length > 40) {
    throw invalidArgument(
      `keyspace prefix ${JSON.stringify(f.keyspacePrefix)} must start with bench_, use only ` +
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
    images: f.images,
    runs: f.runs,
    concurrencies: f.concurrencies,
    ways: f.ways,
    mnist: f.mnist,
    mnistLimit,
    coldStarts,
    keyspacePrefix: f.keyspacePrefix,
    imageRoot: paths.imageRoot,
    // WebDataset shards, Parquet files and manifests made from the payloads, kept for reuse.
    formatsRoot: path.join(input.stateRoot, 'bench', 'ingest-formats'),
    // The full set is the one `prepare mnist --out .state/mnist` makes, so both share it.
    mnistDir: path.join(input.stateRoot, mnistLimit ? `mnist-${mnistLimit}` : 'mnist'),
    outDir: f.outDir === undefined ? paths.outDir : path.resolve(f.outDir),
    // Longest wait before each run for the database to go quiet (compaction, flushes of the
    // previous run), so one run's aftermath is not billed to the next.
    settleMaxMs: quick ? 3000 : 15_000,
    progress: input.progress,
    log: input.log,
    signal: input.signal,
  };
}

/** Settings of `runIngestBench`, as {@link resolveIngestBenchOptions} fills them in. */
export type IngestBenchOptions = ReturnType<typeof resolveIngestBenchOptions>;
