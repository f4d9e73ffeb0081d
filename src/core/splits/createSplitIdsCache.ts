import { LRUCache } from 'lru-cache';
import type { SplitIds } from './SplitIds.js';

/** Reads a split's ids on a cache miss; the caller passes it with each lookup. */
export type SplitIdsLoader = () => Promise<SplitIds>;

/**
 * The process-wide cache of split ids, least recently used first out, bounded by the bytes of
 * ids it holds. Look ups go through `forceFetch(key, { context: load, ttl? })`: concurrent
 * look ups of one key share a single `load`, a failed load is not cached, and a split larger
 * than the whole bound is returned without being cached.
 */
export type SplitIdsCache = LRUCache<string, SplitIds, SplitIdsLoader>;

/** Makes a {@link SplitIdsCache} holding at most `maxBytes` bytes of ids. */
export function createSplitIdsCache(maxBytes: number): SplitIdsCache {
  return new LRUCache<string, SplitIds, SplitIdsLoader>({
    maxSize: maxBytes,
    // The cache accepts positive sizes only; an empty split still takes an entry.
    sizeCalculation: (split) => Math.max(1, split.ids.length),
    fetchMethod: (_key, _stale, { context: load }) => load(),
    // A load in flight is an entry of the cache, which other entries can evict while it runs;
    // the stream waiting on it must still get its ids rather than an 'evicted' error.
    ignoreFetchAbort: true,
  });
}
