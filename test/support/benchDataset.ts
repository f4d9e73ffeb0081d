import type cassandra from 'cassandra-driver';
import type { Progress } from '../../src/cli/index.js';
import {
  createDbClient,
  datasetExists,
  type DbConfig,
  ingestDataset,
  invalidArgument,
  type ListedSource,
  listedSource,
  readDatasetInfo,
  validateIdentifier,
} from '../../src/core/index.js';

/** Makes a progress display for `total` items (the CLI passes `createProgress`). */
export type BenchProgressFactory = (label: string, total: number, unit: string) => Progress;

/** A benchmark's dataset as the database holds it. @internal */
export interface BenchDataset {
  name: string;
  samples: number;
  totalBytes: number;
  meanBytes: number;
  /** Distinct labels. */
  classes: number;
  /** Whether this run ingested it (false: it was already complete). */
  ingested: boolean;
  /** Seconds spent making the samples and ingesting them, 0 when it was already there. */
  prepareSeconds: number;
}

/** How {@link ensureBenchDataset} makes a dataset it finds incomplete. */
export interface BenchDatasetSpec {
  name: string;
  samples: number;
  /** The samples to ingest; called only when some are missing. */
  source: (progress: BenchProgressFactory) => Promise<ListedSource>;
  /** What a refused larger dataset should do (default: drop it or pick another --dataset). */
  dropHint?: string;
  /** Bytes the whole dataset must hold after the ingest (default: not checked). */
  totalBytes?: number;
  concurrency?: number;
  /** Stop at the first bad sample (default true). */
  strict?: boolean;
  progress?: BenchProgressFactory | undefined;
  signal?: AbortSignal | undefined;
}

/** Progress displays that show nothing. */
const silent: BenchProgressFactory = () => ({
  update: () => undefined,
  log: () => undefined,
  stop: () => undefined,
});

/**
 * Makes sure dataset `name` holds exactly samples 0..samples-1 of `source`: nothing is done
 * when its counts already say so; otherwise the source goes through the real ingest, which
 * skips the samples already present, so an interrupted preparation resumes. A dataset with
 * more samples is refused. Every benchmark prepares its data through this. @internal
 */
export async function ensureBenchDataset(
  client: cassandra.Client,
  spec: BenchDatasetSpec,
): Promise<BenchDataset> {
  const { name, samples } = spec;
  const progress = spec.progress ?? silent;
  validateIdentifier(name, 'dataset');
  const present = (await datasetExists(client, name))
    ? await readDatasetInfo(client, name)
    : undefined;
  const have = present?.sampleCount ?? 0;
  if (have > samples) {
    throw invalidArgument(
      `dataset ${name} holds ${have} samples, more than the ${samples} asked for; ` +
        (spec.dropHint ?? 'drop it (`DROP KEYSPACE`) or pick another --dataset'),
    );
  }
  const figures = (
    info: { totalBytes: number; classCounts: Map<unknown, unknown> },
    seconds: number,
  ): BenchDataset => ({
    name,
    samples,
    totalBytes: info.totalBytes,
    meanBytes: info.totalBytes / samples,
    classes: info.classCounts.size,
    ingested: seconds > 0,
    prepareSeconds: seconds,
  });
  if (present && have === samples) return figures(present, 0);

  const started = performance.now();
  const source = await spec.source(progress);
  const bar = progress(`ingest ${name}`, source.entries.length, 'samples');
  let summary;
  try {
    summary = await ingestDataset(client, {
      dataset: name,
      source,
      replication: { class: 'SimpleStrategy', replicationFactor: 1 },
      concurrency: spec.concurrency ?? 32,
      strict: spec.strict ?? true,
      onProgress: (p) => bar.update(p.done, p.bytesWritten),
      ...(spec.signal ? { signal: spec.signal } : {}),
    });
  } finally {
    bar.stop();
  }
  const { sampleCount, totalBytes } = summary.dataset;
  if (sampleCount !== samples || (spec.totalBytes ?? totalBytes) !== totalBytes) {
    throw invalidArgument(
      `dataset ${name} holds ${sampleCount} samples of ${totalBytes} bytes after the ingest, ` +
        `not ${samples}${spec.totalBytes === undefined ? '' : ` of ${spec.totalBytes}`}; ` +
        (spec.dropHint ?? 'drop it and run again'),
    );
  }
  return figures(summary.dataset, Math.max((performance.now() - started) / 1000, 1e-6));
}

/** Runs `body` with a database session that is closed after it. @internal */
export async function withDbClient<T>(
  db: DbConfig,
  body: (client: cassandra.Client) => Promise<T>,
): Promise<T> {
  const client = await createDbClient(db);
  try {
    return await body(client);
  } finally {
    await client.shutdown();
  }
}

/**
 * Makes sure dataset `name` holds `samples` generated samples (`sample-<i>-` padded with `x`
 * to `sampleBytes`, labels `i mod classes`, a text column `grp` of 7 values so CreateSplits
 * can group by it). The robustness benchmarks stream it; its bytes are not images, which a
 * fuzzed transform must meet as DATA_LOSS. @internal
 */
export async function ensureGeneratedDataset(
  db: DbConfig,
  options: { name: string; samples: number; sampleBytes?: number; classes?: number },
): Promise<void> {
  const size = options.sampleBytes ?? 1000;
  const classes = options.classes ?? 10;
  await withDbClient(db, (client) =>
    ensureBenchDataset(client, {
      name: options.name,
      samples: options.samples,
      concurrency: 64,
      strict: false,
      source: async () =>
        listedSource({
          description: `faults: ${options.samples} generated samples of ${size} bytes`,
          entries: Array.from({ length: options.samples }, (_, i) => ({
            sourceKey: `s/${i}`,
            filePath: `generated/${i}`,
            data: Buffer.from(`sample-${i}-`.padEnd(size, 'x')),
            label: i % classes,
            metadata: { grp: `g${i % 7}` },
            origin: `generated:${i}`,
          })),
          labelNames: [],
          columns: [{ name: 'grp', type: 'text' }],
        }),
    }),
  );
}

/** Drops a benchmark dataset (its keyspace); a dataset that does not exist is fine. @internal */
export async function dropBenchDataset(client: cassandra.Client, name: string): Promise<boolean> {
  validateIdentifier(name, 'dataset');
  const existed = await datasetExists(client, name);
  await client.execute(`DROP KEYSPACE IF EXISTS ${name}`);
  return existed;
}
