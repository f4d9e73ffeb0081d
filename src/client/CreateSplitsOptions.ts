/**
 * A condition on a metadata column ({@link CreateSplitsOptions.filters}); a sample is kept
 * when every filter holds:
 * - `{ column, equals }`: the value's text form equals this (numbers and booleans are compared
 *   as their text, e.g. `3` or `true`);
 * - `{ column, in }`: the value's text form is one of these;
 * - `{ column, min, max }`: a number within the inclusive range (numeric columns only); either
 *   end may be left out.
 */
export type SplitFilter =
  | { column: string; equals: string | number | boolean }
  | { column: string; in: ReadonlyArray<string | number | boolean> }
  | { column: string; min?: number; max?: number };

/**
 * Per-class totals of a split set, before the parts divide them (proto `ClassTargetMode`):
 * `natural` keeps the dataset's own distribution; `balanced` takes as many samples of every
 * class as the rarest class has; `{ ratios }` the largest totals in the given per-label
 * proportions (e.g. `{ ratios: { 0: 1, 1: 1 } }` for 1:1; labels not named get none).
 * Larger classes are undersampled.
 */
export type ClassTargetsOption = 'natural' | 'balanced' | { ratios: Record<number, number> };

/**
 * What {@link LoaderClient.createSplits} asks for: the proto's `CreateSplitsRequest` with
 * TypeScript types. Give `parts` or `folds`.
 */
export interface CreateSplitsOptions {
  /** Dataset (keyspace) name. */
  dataset: string;
  /** Split set name: lower-case letters, digits, `_` and `-`, a letter first. */
  name: string;
  /**
   * Parts and their weights, in the order they are stored, e.g.
   * `{ train: 7, val: 2, test: 1 }`.
   */
  parts?: Record<string, number>;
  /**
   * K-fold mode: k disjoint folds `fold-0`..`fold-<k-1>`, streamed also as `<set>/train-<i>`
   * (every fold but i) and `<set>/val-<i>` (fold i).
   */
  folds?: number;
  /** Metadata columns forming a group; all samples of a group land in one part. */
  groupBy?: string | readonly string[];
  /** Per-class totals (default `natural`). */
  classTargets?: ClassTargetsOption;
  /** At most this many samples in all parts together (default: no limit). */
  maxTotal?: number;
  /** Only samples that pass every filter are split. */
  filters?: readonly SplitFilter[];
  /** Seed of the assignment, an unsigned 64-bit integer (default 0). */
  seed?: bigint | number | string;
  /** Write the next version when the name exists, instead of failing with ALREADY_EXISTS. */
  newVersion?: boolean;
  /**
   * Store the best feasible split when a target cannot be met (see
   * {@link SplitSet.worstDeviation}), instead of failing with INVALID_ARGUMENT.
   */
  allowShortfall?: boolean;
}
