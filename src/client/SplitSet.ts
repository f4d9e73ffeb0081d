/** One part of a stored split set. Counts are numbers, exact up to 2^53. */
export interface SplitSetPart {
  name: string;
  /** Number of samples. */
  size: number;
  /** Samples per label (key -1: samples without a label). */
  classCounts: Record<number, number>;
  /** Wanted samples per label. */
  targets: Record<number, number>;
  /** Number of groups placed in the part. */
  groups: number;
}

/**
 * A stored split set, one version ({@link LoaderClient.createSplits},
 * {@link LoaderClient.listSplits}, {@link LoaderClient.getSplit}). Stored sets never change.
 */
export interface SplitSet {
  name: string;
  /** Version, from 1. */
  version: number;
  /** The parameters it was created with (parts, grouping, targets, filters, ...). */
  params: Record<string, unknown>;
  seed: bigint;
  /** Number of folds of a k-fold set; 0 for named parts. */
  folds: number;
  parts: SplitSetPart[];
  /** SHA-256 (hex) over the parts' names and ids. */
  contentHash: string;
  /** Largest |achieved - target| / target over the parts' sizes and per-label counts. */
  worstDeviation: number;
  createdAt: Date;
  /**
   * The names a stream can ask for, pinned to this version: `<set>@<version>/<part>`, and
   * for a k-fold set `<set>@<version>/train-<i>` and `<set>@<version>/val-<i>`.
   */
  streamableSplits: string[];
}
