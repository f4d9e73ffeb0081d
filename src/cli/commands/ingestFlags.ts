import type { DbFlags } from '../dbOptions.js';

/**
 * Flags of `ingest`. Those of the formats (each format's input, `--parquet`, and its own
 * options, `--image-column`...) are made from the formats' registry (`INGEST_FORMATS`) and
 * read by their option names, so they are not listed here.
 */
export interface IngestFlags extends DbFlags {
  [formatOption: string]: unknown;
  column: string[];
  resize?: string;
  crop?: string;
  quality: string;
  concurrency: string;
  groupBytes?: string;
  shard?: string;
  workers?: string;
  strict: boolean;
  /** `--ignore-labels`: store every sample without a label, whatever the source has. */
  ignoreLabels?: boolean;
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
