import { LRUCache } from 'lru-cache';
import { permutation } from './permutation.js';

/** What {@link permutation} is computed from; the cache key must name the same three. */
export interface PermutationArgs {
  n: number;
  seed: bigint;
  epoch: number;
  /**
   * Computes the entry instead of `permutation(n, seed, epoch)`: an order derived otherwise,
   * such as a mixed epoch's sequence, shared the same way (its key must name all it depends
   * on).
   */
  make?: () => Uint32Array;
}

/**
 * How long a permutation or remainder stays cached after it was last asked for. The cache is
 * for sharing (the ranks of a job start an epoch within seconds of each other; a stream that
 * resumes soon after a drop), not for history: a stream keeps its epoch's order itself. Without
 * it, finished epochs stayed until the byte bound pushed them out, so memory grew with every
 * epoch of every job (a 64-stream soak: 16 KB per stream-epoch, ~26 MiB a minute, up to
 * `--id-cache-bytes` per cache and process).
 */
export const SAMPLING_CACHE_LINGER_MS = 30_000;

/**
 * Permutations shared by the streams of one process (every rank of a job needs the same one),
 * dropped {@link SAMPLING_CACHE_LINGER_MS} after their last look up, least recently used out
 * first when over their byte bound. Look ups go through `memo(key, { context: { n, seed, epoch
 * } })`; a permutation larger than the whole bound is computed and returned without being
 * cached.
 */
export type PermutationCache = LRUCache<string, Uint32Array, PermutationArgs>;

/**
 * Makes a {@link PermutationCache} holding at most `maxBytes` bytes of permutations, each for
 * `lingerMs` after its last look up by the clock `now` (milliseconds).
 */
export function createPermutationCache(
  maxBytes: number,
  lingerMs = SAMPLING_CACHE_LINGER_MS,
  now: () => number = () => performance.now(),
): PermutationCache {
  return new LRUCache<string, Uint32Array, PermutationArgs>({
    maxSize: maxBytes,
    ttl: lingerMs,
    updateAgeOnGet: true,
    // Dropped on time, not when next touched: an idle loader gives the memory back.
    ttlAutopurge: true,
    perf: { now },
    // The cache accepts positive sizes only; the permutation of an empty split has none.
    sizeCalculation: (order) => Math.max(1, order.byteLength),
    memoMethod: (_key, _old, { context }) =>
      context.make ? context.make() : permutation(context.n, context.seed, context.epoch),
  });
}
