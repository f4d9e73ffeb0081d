/** The ids of a split, in its stored order, packed 16 bytes each. */
export interface SplitIds {
  /** `count * 16` bytes of UUIDs. */
  ids: Buffer;
  count: number;
  /** SHA-256 (hex) of `ids`: resume tokens are bound to it, so a changed split is noticed. */
  contentHash: string;
}
