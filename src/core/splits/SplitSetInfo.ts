/** One part of a stored split set, as its info row describes it. */
export interface SplitPartInfo {
  name: string;
  size: number;
  /** Samples per label. */
  classCounts: Record<string, number>;
  /** Wanted samples per label. */
  targets: Record<string, number>;
  groups: number;
  /** Number of id chunks the part is stored in. */
  chunks: number;
}

/** A stored split set's info row: written last, so its presence means the set is complete. */
export interface SplitSetInfo {
  name: string;
  version: number;
  /** The parameters it was created with (parts, grouping, targets, filters, ...). */
  params: Record<string, unknown>;
  seed: bigint;
  /** K-fold sets have parts `fold-0`..`fold-<k-1>` and also serve `train-<i>` / `val-<i>`. */
  folds: number;
  parts: SplitPartInfo[];
  /** SHA-256 over the parts' names and ids. */
  contentHash: string;
  /** Which write the chunks belong to (two racing writers never mix chunks). */
  writeId: string;
  worstDeviation: number;
  createdAt: Date;
}
