import { createHash } from 'node:crypto';

/**
 * The identity of a dataset's contents as the cache keys them: 16 bytes of a hash of its name
 * and its generation (stored in `dataset_info`, new whenever an ingest writes). A dataset made
 * again under the same name, or ingested into again, has another scope, so the cache never
 * serves it bytes of before.
 */
export function cacheScope(dataset: string, generation: string): Buffer {
  return createHash('sha256').update(`${dataset}\0${generation}`).digest().subarray(0, 16);
}

/** The cache key of sample `id` (16 bytes) in `scope`. */
export function cacheKey(scope: Buffer, id: Buffer): Buffer {
  return Buffer.concat([scope, id], 32);
}
