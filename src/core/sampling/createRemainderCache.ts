import { LRUCache } from 'lru-cache';
import { SAMPLING_CACHE_LINGER_MS } from './createPermutationCache.js';
import { type EpochLayer, type LayerRules, epochRemainder } from './epochRemainder.js';

/** What {@link epochRemainder} is computed from; the cache key must name the same. */
export interface RemainderArgs {
  n: number;
  layers: readonly EpochLayer[];
  rules: LayerRules;
}

/**
 * Remainders of re-sharded epochs shared by the streams of one process: every new rank of a
 * job resumed from one job checkpoint needs the same one (up to 4 bytes per sample of the
 * split), so it is computed once. Dropped a while after its last look up
 * (`SAMPLING_CACHE_LINGER_MS`), and bounded by bytes, least recently used out; look ups go
 * through `memo(key, { context })` with a key naming the split and the checkpoint's digest.
 */
export type RemainderCache = LRUCache<string, Uint32Array, RemainderArgs>;

/**
 * Makes a {@link RemainderCache} holding at most `maxBytes` bytes, each remainder for `lingerMs`
 * after its last look up by the clock `now` (milliseconds).
 */
export function createRemainderCache(
  maxBytes: number,
  lingerMs = SAMPLING_CACHE_LINGER_MS,
  now: () => number = () => performance.now(),
): RemainderCache {
  return new LRUCache<string, Uint32Array, RemainderArgs>({
    maxSize: maxBytes,
    ttl: lingerMs,
    updateAgeOnGet: true,
    ttlAutopurge: true,
    perf: { now },
    sizeCalculation: (r) => Math.max(1, r.byteLength),
    memoMethod: (_key, _old, { context }) =>
      epochRemainder(context.n, context.layers, context.rules),
  });
}
