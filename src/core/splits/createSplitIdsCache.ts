import { SharedLruCache } from '../offload/SharedLruCache.js';
import type { SplitIds } from './SplitIds.js';

/**
 * Reads a split's ids on a cache miss; the caller passes it with each look up. `signal` fires
 * when no caller waits for them any more: the reads and the sort stop.
 */
export type SplitIdsLoader = (signal: AbortSignal) => Promise<SplitIds>;

/**
 * The process-wide cache of split ids, least recently used first out, bounded by the bytes of
 * ids it holds. Look ups go through `lookup(key, load, { signal, ttl })`: concurrent look ups of
 * one key share a single `load`, which stops once every one of them is cancelled; a failed or
 * stopped load is not cached, and a split larger than the whole bound is returned without
 * being cached.
 */
export type SplitIdsCache = SharedLruCache<SplitIds, SplitIdsLoader>;

/** Makes a {@link SplitIdsCache} holding at most `maxBytes` bytes of ids. */
export function createSplitIdsCache(maxBytes: number): SplitIdsCache {
  return new SharedLruCache<SplitIds, SplitIdsLoader>(
    {
      maxSize: maxBytes,
      // The cache accepts positive sizes only; an empty split still takes an entry.
      sizeCalculation: (split) => Math.max(1, split.ids.length),
    },
    (load, signal) => load(signal),
  );
}
