import type { CachedSample } from '../cache/CachedSample.js';

/** One sample read from the database (or its cache) for a position of the rank's epoch. */
export interface FetchedSample extends CachedSample {
  /** Position in the rank's epoch. */
  position: number;
  /** 16 UUID bytes (a view into the split's ids). */
  id: Buffer;
  /** Index of the sample's source in the stream's sources (0 for a single-source stream). */
  source: number;
}
