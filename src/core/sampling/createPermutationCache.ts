import { LRUCache } from 'lru-cache';
import { permutation } from './permutation.js';

/** What {@link permutation} is computed from; the cache key must name the same three. */
export interface PermutationArgs {
  n: number;
  seed: bigint;
  epoch: number;
}

/**
 * Permutations shared by the streams of one process (every rank of a job needs the same one),
 * least recently used first out, bounded by their bytes. Look ups go through
 * `memo(key, { context: { n, seed, epoch } })`; a permutation larger than the whole bound is
 * computed and returned without being cached.
 */
export type PermutationCache = LRUCache<string, Uint32Array, PermutationArgs>;

/** Makes a {@link PermutationCache} holding at most `maxBytes` bytes of permutations. */
export function createPermutationCache(maxBytes: number): PermutationCache {
  return new LRUCache<string, Uint32Array, PermutationArgs>({
    maxSize: maxBytes,
    // The cache accepts positive sizes only; the permutation of an empty split has none.
    sizeCalculation: (order) => Math.max(1, order.byteLength),
    memoMethod: (_key, _old, { context }) => permutation(context.n, context.seed, context.epoch),
  });
}
