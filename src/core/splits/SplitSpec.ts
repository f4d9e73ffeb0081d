/** How per-class targets are set before the parts divide them. */
export type ClassTargets =
  | { mode: 'natural' }
  | { mode: 'balanced' }
  /** Per-label weights, e.g. { 0: 1, 1: 1 } for 1:1 normal/tumor. */
  | { mode: 'ratios'; ratios: Record<number, number> };

/** What a split set should look like. */
export interface SplitSpec {
  /** Part names with their weights, e.g. [['train', 7], ['val', 2], ['test', 1]]. */
  parts: Array<[string, number]>;
  classTargets: ClassTargets;
  /** At most this many samples in all parts together. */
  maxTotal?: number;
  seed: bigint;
  /**
   * Return the best feasible result when a target cannot be met (shortfalls are reported),
   * instead of failing.
   */
  allowShortfall: boolean;
}
