import type { DbFlags } from '../dbOptions.js';

/** Flags of `ingest`. */
export interface IngestFlags extends DbFlags {
  imageFolder?: string;
  manifest?: string;
  webdataset?: string[];
  parquet?: string[];
  root?: string;
  column: string[];
  labelField?: string;
  imageColumn?: string;
  labelColumn?: string;
  keyColumn?: string;
  labelBlobColumn?: string;
  resize?: string;
  crop?: string;
  quality: string;
  concurrency: string;
  groupBytes?: string;
  shard?: string;
  workers?: string;
  strict: boolean;
  replication: string;
  /** The ingest caps (`--max-metadata-columns`...), as Commander hands them over. */
  maxMetadataColumns?: string;
  maxLabelNames?: string;
  maxLabelNameChars?: string;
  maxSources?: string;
  /** Internal: this process is one of `--workers`; report over IPC, leave the counts. */
  workerChild?: boolean;
  /** Internal: the parent of `--workers` found the dataset empty (no existence checks). */
  freshDataset?: boolean;
}
