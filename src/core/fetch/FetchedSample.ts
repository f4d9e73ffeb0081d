/** One sample read from the database. */
export interface FetchedSample {
  /** Position in the rank's epoch. */
  position: number;
  /** 16 UUID bytes (a view into the split's ids). */
  id: Buffer;
  /** -1 when the sample has no integer label. */
  label: number;
  labelBlob: Buffer | null;
  data: Buffer;
}
