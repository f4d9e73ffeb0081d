import type { BenchEnvironment } from '../stream/benchEnvironment.js';

/** The two sources of the issue: ~100 kB JPEGs stored as they are, and MNIST PNGs. */
export type IngestBenchSource = 'jpeg100k' | 'mnist';

/**
 * CPU seconds over a timed window. `rest` is every other process of the machine (busy time of
 * `/proc/stat` minus the two): large values mean something else competed for the cores.
 * Null where it could not be measured (a database that is not the local node, no `/proc`).
 */
export interface CpuSplit {
  loader: number;
  database: number | null;
  rest: number | null;
}

/** One timed ingest into a fresh keyspace. */
export interface IngestRunRecord {
  source: IngestBenchSource;
  /** 1-based round; every source and concurrency runs once per round. */
  run: number;
  concurrency: number;
  keyspace: string;
  samples: number;
  bytes: number;
  /** `ingestDataset` from call to return (keyspace and tables created beforehand, untimed). */
  wallSeconds: number;
  /** Until the last sample was written; the rest of the wall time recounts the dataset. */
  writeSeconds: number;
  /** Creating the keyspace and tables before the run (not in the wall time). */
  schemaSeconds: number;
  /** Waiting for the database to go quiet before the run (not in the wall time). */
  settleSeconds: number;
  samplesPerSecond: number;
  megabytesPerSecond: number;
  cpuSeconds: CpuSplit;
  /** CPU seconds per wall second: 1 is one core busy the whole run. */
  cores: CpuSplit;
}

/** Medians over the runs of one source and concurrency (each figure's own median). */
export interface IngestSummaryRow {
  source: IngestBenchSource;
  concurrency: number;
  runs: number;
  samples: number;
  bytes: number;
  samplesPerSecond: number;
  megabytesPerSecond: number;
  wallSeconds: number;
  writeSeconds: number;
  cpuSeconds: CpuSplit;
  cores: CpuSplit;
}

/** A source as ingested: where it lives and the sizes of its files. */
export interface IngestSourceInfo {
  source: IngestBenchSource;
  description: string;
  keyspace: string;
  samples: number;
  bytes: number;
  meanBytes: number;
  minBytes: number;
  maxBytes: number;
}

/** One stop-and-start of the local node. */
export interface ColdStartRecord {
  run: number;
  /** SIGTERM until the process is gone (Cassandra drains: memtables are flushed). */
  stopSeconds: number;
  /** `startLocalCluster` until the node answers CQL (jars already cached). */
  startSeconds: number;
}

/** Everything `bench ingest` measured, as written to its JSON file. */
export interface IngestBenchReport {
  startedAt: string;
  finishedAt: string;
  seconds: number;
  settings: {
    images: number;
    runs: number;
    concurrencies: number[];
    mnist: boolean;
    mnistLimit: number | null;
    coldStarts: number;
  };
  environment: BenchEnvironment & { databaseNodes: number; databaseIsLocalNode: boolean };
  sources: IngestSourceInfo[];
  runs: IngestRunRecord[];
  summary: IngestSummaryRow[];
  coldStart: {
    runs: ColdStartRecord[];
    medianStartSeconds: number;
    medianStopSeconds: number;
  } | null;
  /** Keyspaces the benchmark used; all dropped at the end. */
  keyspaces: string[];
  /** Things a reader of the figures should know (disturbance, skipped parts). */
  notes: string[];
  jsonPath: string;
}
