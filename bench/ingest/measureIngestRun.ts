import type cassandra from 'cassandra-driver';
import {
  ingestDataset,
  type ListedSource,
  ensureDatasetSchema,
  type Replication,
} from '../../src/core/index.js';
import type { BenchProgressFactory } from '../stream/StreamBenchOptions.js';
import { startCpuWindow } from '../measure/cpuWindow.js';
import type { CpuSplit, IngestBenchSource, IngestRunRecord } from './IngestBenchReport.js';
import { waitForQuietDatabase } from './waitForQuietDatabase.js';

/** One run of {@link measureIngestRun}. @internal */
export interface IngestRunPlan {
  source: IngestBenchSource;
  ingest: ListedSource;
  keyspace: string;
  concurrency: number;
  run: number;
  /** Pids of the database processes, for their CPU seconds (empty: not measured). */
  dbPids: readonly number[];
  settleMaxMs: number;
  progress?: BenchProgressFactory;
  signal?: AbortSignal;
}

const SIMPLE_1: Replication = { class: 'SimpleStrategy', replicationFactor: 1 };

/**
 * Ingests a source into a fresh keyspace and measures it: the keyspace is dropped, its tables
 * are created and the database is let settle, all untimed; then `ingestDataset` is timed with
 * the CPU seconds of this process, of the database and of the rest of the machine over exactly
 * that window; then the keyspace is dropped again. Schema changes take a second or two on
 * Cassandra whatever the data, so they are reported apart instead of diluting the rate.
 * Throws when a sample was not written: a rate over a partial ingest would mislead. @internal
 */
export async function measureIngestRun(
  client: cassandra.Client,
  plan: IngestRunPlan,
): Promise<IngestRunRecord> {
  const { keyspace, ingest } = plan;
  await client.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`);
  const schemaStarted = performance.now();
  await ensureDatasetSchema(client, {
    dataset: keyspace,
    replication: SIMPLE_1,
    columns: ingest.columns,
  });
  const schemaSeconds = (performance.now() - schemaStarted) / 1000;
  const settle = await waitForQuietDatabase(plan.dbPids, {
    maxMs: plan.settleMaxMs,
    ...(plan.signal ? { signal: plan.signal } : {}),
  });

  const progress = plan.progress?.(
    `${plan.source} c=${plan.concurrency} run ${plan.run}`,
    ingest.entries.length,
    'samples',
  );
  const stopCpu = startCpuWindow(plan.dbPids);
  const started = performance.now();
  let lastWrite = started;
  let summary;
  try {
    summary = await ingestDataset(client, {
      dataset: keyspace,
      source: ingest,
      replication: SIMPLE_1,
      concurrency: plan.concurrency,
      strict: true,
      onProgress: (p) => {
        lastWrite = performance.now();
        progress?.update(p.done, p.bytesWritten);
      },
      ...(plan.signal ? { signal: plan.signal } : {}),
    });
  } finally {
    progress?.stop();
  }
  const wallSeconds = (performance.now() - started) / 1000;
  const cpuSeconds = stopCpu();
  await client.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`);

  if (summary.written !== ingest.entries.length) {
    throw new Error(
      `${plan.source}: wrote ${summary.written} of ${ingest.entries.length} samples into a ` +
        `fresh keyspace ${keyspace} (already present ${summary.alreadyPresent}, failed ` +
        `${summary.failed}); the figures would not describe a full ingest`,
    );
  }
  const perWall = (s: number | null): number | null => (s === null ? null : s / wallSeconds);
  const cores: CpuSplit = {
    loader: cpuSeconds.loader / wallSeconds,
    database: perWall(cpuSeconds.database),
    rest: perWall(cpuSeconds.rest),
  };
  return {
    source: plan.source,
    run: plan.run,
    concurrency: plan.concurrency,
    keyspace,
    samples: summary.written,
    bytes: summary.bytesWritten,
    wallSeconds,
    writeSeconds: (lastWrite - started) / 1000,
    schemaSeconds,
    settleSeconds: settle.seconds,
    samplesPerSecond: summary.written / wallSeconds,
    megabytesPerSecond: summary.bytesWritten / 1e6 / wallSeconds,
    cpuSeconds,
    cores,
  };
}
