/** A condition on a metadata column; a sample is kept when every filter holds. */
export type MetadataFilter =
  | { column: string; equals: string }
  | { column: string; in: string[] }
  /** Inclusive numeric range; either end may be open. */
  | { column: string; min?: number; max?: number };
