/** The samples a split set is made from, in columns (compact for 10^6+ rows). */
export interface SplitInput {
  /** Number of samples. */
  count: number;
  /** `count * 16` bytes of ids. */
  ids: Buffer;
  /** Label of each sample (-1: none). */
  labels: Int32Array;
  /** Group index of each sample (all samples of a group land in one part). */
  groups: Int32Array;
  /** Number of distinct groups (indices 0..groupCount-1). */
  groupCount: number;
}
