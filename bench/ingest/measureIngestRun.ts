import type cassandra from 'cassandra-driver';
import { type DbConfig, ensureDatasetSchema, type Replication } from '../../src/core/index.js';
import type { BenchProgressFactory } from '../stream/StreamBenchOptions.js';
import { startCpuWindow } from '../measure/cpuWindow.js';
import type { CpuSplit, IngestBenchSource, IngestRunRecord } from './IngestBenchReport.js';
import { type IngestPayload, type IngestWay, runIngestWay } from './runIngestWay.js';
import { waitForQuietDatabase } from './waitForQuietDatabase.js';

/** One run of {@link measureIngestRun}. @internal */
export interface IngestRunPlan {
  source: IngestBenchSource;
  way: IngestWay;
  payload: IngestPayload;
  keyspace: string;
  concurrency: number;
  run: number;
  db: DbConfig;
  /** Pids of the database processes, for their CPU seconds (empty: not measured). */
  dbPids: readonly number[];
  /** A running loader for the `rpc` way: its address, and its pid (its CPU is the loader's). */
  loader?: { address: string; pid: number };
  settleMaxMs: number;
  progress?: BenchProgressFactory;
  signal?: AbortSignal;
}

const SIMPLE_1: Replication = { class: 'SimpleStrategy', replicationFactor: 1 };

/**
 * Runs one way of ingesting a payload into a fresh keyspace and measures it: the keyspace is
 * dropped, its tables are created and the database is let settle, all untimed; then the way is
 * timed with the CPU seconds of the ingesting processes (this one, its children, and the
 * loader for the `rpc` way), of the database and of the rest of the machine over exactly that
 * window; then the keyspace is dropped again. Schema changes take a second or two on
 * Cassandra whatever the data, so they are reported apart instead of diluting the rate.
 * Throws when a sample was not written: a rate over a partial ingest would mislead. @internal
 */
export async function measureIngestRun(
  client: cassandra.Client,
  plan: IngestRunPlan,
): Promise<IngestRunRecord> {
  const { keyspace, payload } = plan;
  await client.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`);
  const schemaStarted = performance.now();
  await ensureDatasetSchema(client, {
    dataset: keyspace,
    replication: SIMPLE_1,
    columns: payload.listed.columns,
  });
  const schemaSeconds = (performance.now() - schemaStarted) / 1000;
  const settle = await waitForQuietDatabase(plan.dbPids, {
    maxMs: plan.settleMaxMs,
    ...(plan.signal ? { signal: plan.signal } : {}),
  });

  const expected = payload.rows.length;
  const progress = plan.progress?.(
    `${plan.source} ${plan.way} c=${plan.concurrency} run ${plan.run}`,
    expected,
    'samples',
  );
  const stopCpu = startCpuWindow(plan.dbPids, plan.loader ? [plan.loader.pid] : []);
  const started = performance.now();
  let result;
  try {
    result = await runIngestWay(plan.way, payload, {
      client,
      db: plan.db,
      keyspace,
      concurrency: plan.concurrency,
      ...(plan.loader ? { loaderAddress: plan.loader.address } : {}),
      onProgress: (done, bytes) => progress?.update(done, bytes),
      ...(plan.signal ? { signal: plan.signal } : {}),
    });
  } finally {
    progress?.stop();
  }
  const wallSeconds = (performance.now() - started) / 1000;
  const cpuSeconds = stopCpu();
  await client.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`);

  if (result.written !== expected) {
    throw new Error(
      `${plan.source} ${plan.way}: wrote ${result.written} of ${expected} samples into a ` +
        `fresh keyspace ${keyspace}; the figures would not describe a full ingest`,
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
    way: plan.way,
    run: plan.run,
    concurrency: plan.concurrency,
    keyspace,
    samples: result.written,
    bytes: result.bytes,
    wallSeconds,
    schemaSeconds,
    settleSeconds: settle.seconds,
    samplesPerSecond: result.written / wallSeconds,
    megabytesPerSecond: result.bytes / 1e6 / wallSeconds,
    cpuSeconds,
    cores,
  };
}
