import type { DecodedColumn } from './DecodedColumn.js';

/** What {@link LoaderClient.getLedger} asks for: a range of batches, or a sample. */
export type LedgerQuery = (
  | {
      /** A range of one rank's batches of an epoch, `first` to `last` (default `first`). */
      batches: { epoch: number; rank: number; first: number; last?: number };
    }
  | {
      /** One sample: by its 16-byte id, or by source key (and dataset, in a mixed job). */
      sample: { id: Uint8Array } | { sourceKey: string; dataset?: string };
    }
) & {
  /** Metadata columns to add to each batch's samples (`source_key` always comes). */
  columns?: string[];
  /** Also return batches written but never received (the stream was resumed earlier). */
  includeSuperseded?: boolean;
};

/** One recorded batch of a job. */
export interface LedgerBatchEntry {
  epoch: number;
  /** The stream's rank and world size (DataLoader workers: rank x workers + worker). */
  rank: number;
  worldSize: number;
  /** The batch's index in the rank's epoch (`batch.index`). */
  index: number;
  /** Sample ids as UUID strings, in the batch's order. */
  ids: string[];
  /** Each sample's source (`LedgerResult.sources`); empty for a job of one source. */
  sourceIndexes: number[];
  sourceKeys: string[];
  columns: Record<string, DecodedColumn>;
  resumeToken: Uint8Array;
  sentAt: Date;
  superseded: boolean;
  /** Hex digest of the job checkpoint the epoch was re-sharded from; '' for an ordinary one. */
  reshardedFrom: string;
  /** Left out of the epoch by a resume with `skipBatches` (never superseded). */
  skipped: boolean;
}

/** One appearance of a sample in a job. */
export interface LedgerAppearanceEntry {
  epoch: number;
  rank: number;
  worldSize: number;
  batchIndex: number;
  /** The sample's place in the batch. */
  position: number;
  sentAt: Date;
  superseded: boolean;
  reshardedFrom: string;
  /** In a batch left out by a resume with `skipBatches`. */
  skipped: boolean;
}

/** The answer of {@link LoaderClient.getLedger}. */
export interface LedgerResult {
  jobId: string;
  /** The job's sources, in its requests' order. */
  sources: { dataset: string; split: string }[];
  /** With a batch range: the batches found, by index. */
  batches: LedgerBatchEntry[];
  /** With a sample: its id (UUID string) and every appearance. */
  sampleId?: string;
  appearances: LedgerAppearanceEntry[];
}
