/**
 * What the cache keeps of a sample: what the database returns for it, never transformed
 * pixels (those differ per epoch).
 */
export interface CachedSample {
  /** -1 when the sample has no integer label. */
  label: number;
  labelBlob: Buffer | null;
  data: Buffer;
}

/** Bytes a cached sample is counted as in the memory tier: its buffers and their bookkeeping. */
export function memoryFootprint(sample: CachedSample): number {
  // Two Buffer objects with their ArrayBuffers, the entry object and the key: ~200 bytes.
  return sample.data.length + (sample.labelBlob?.length ?? 0) + 200;
}
