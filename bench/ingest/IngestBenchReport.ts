import type { IngestWay } from './runIngestWay.js';

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
  /** How the payload went in (see `INGEST_WAYS`). */
  way: IngestWay;
  /** 1-based round; every source and concurrency runs once per round. */
  run: number;
  concurrency: number;
  keyspace: string;
  samples: number;
  bytes: number;
  /** The way from start to end (keyspace and tables created beforehand, untimed). */
  wallSeconds: number;
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
