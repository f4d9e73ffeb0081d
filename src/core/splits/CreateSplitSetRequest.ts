import type { MetadataFilter } from './MetadataFilter.js';
import type { ClassTargets } from './SplitSpec.js';

/** What to make: a split set of named parts, or k folds. */
export interface CreateSplitSetRequest {
  dataset: string;
  name: string;
  /** Parts and weights, e.g. [['train', 7], ['val', 2], ['test', 1]]; empty with `folds`. */
  parts: Array<[string, number]>;
  /** K-fold mode: k disjoint folds `fold-0`..`fold-<k-1>` (then `parts` must be empty). */
  folds: number;
  groupBy: string[];
  classTargets: ClassTargets;
  maxTotal?: number;
  filters: MetadataFilter[];
  seed: bigint;
  /** Write a new version when the name exists (otherwise that is ALREADY_EXISTS). */
  newVersion: boolean;
  allowShortfall: boolean;
}
