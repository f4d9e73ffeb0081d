import type { DbConfig } from '../../src/core/index.js';
import type { BenchProgressFactory } from '../stream/StreamBenchOptions.js';

/** Settings of {@link runIngestBench}, with every default filled in. */
export interface IngestBenchOptions {
  /** The database to ingest into. */
  db: DbConfig;
  /**
   * State folder of the local development cluster that `db` points at: its nodes' pids give
   * the database's CPU seconds, and cold starts stop and start it. Undefined for any other
   * cluster (no database CPU figures, no cold start).
   */
  localStateDir: string | undefined;
  /** Distinct ~100 kB JPEG files to ingest as they are. */
  images: number;
  /** Timed runs of each source and concurrency, interleaved. */
  runs: number;
  /** Ingest concurrencies (samples read and written at once) to try. */
  concurrencies: number[];
  /** Whether to run MNIST too. */
  mnist: boolean;
  /** Only the first `mnistLimit` images of each MNIST subset (undefined: all 70,000). */
  mnistLimit: number | undefined;
  /** Stop-and-start cycles of the local node to time (0: none). */
  coldStarts: number;
  /** Keyspaces are `<prefix><images>` and `<prefix>mnist`; must start with `bench_`. */
  keyspacePrefix: string;
  /** Folder of the generated JPEGs (an ImageFolder tree shared with `bench stream`). */
  imageRoot: string;
  /** Folder of the prepared MNIST PNGs and manifest. */
  mnistDir: string;
  /** Folder the JSON report is written to. */
  outDir: string;
  /**
   * Longest wait before each run for the database to go quiet (compaction, flushes of the
   * previous run), so one run's aftermath is not billed to the next.
   */
  settleMaxMs: number;
  /** Progress displays; default: none. */
  progress?: BenchProgressFactory;
  /** Status lines; default: none. */
  log?: (line: string) => void;
  signal?: AbortSignal;
}
