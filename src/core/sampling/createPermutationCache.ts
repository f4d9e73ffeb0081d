import { type MixedSequenceSpec, mixedSequence } from '../mixing/mixedSequence.js';
import { type Offloader, sharedOffloader } from '../offload/Offloader.js';
import { SharedLruCache } from '../offload/SharedLruCache.js';
import { permutation } from './permutation.js';

/** What {@link permutation} is computed from; the cache key must name the same three. */
export interface PermutationArgs {
  n: number;
  seed: bigint;
  epoch: number;
  /**
   * A mixture's epoch sequence (`mixedSequence`) instead of `permutation(n, seed, epoch)`: an
   * order derived otherwise, shared the same way (its key must name all it depends on).
   */
  mix?: MixedSequenceSpec;
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
 * first when over their byte bound; a permutation larger than the whole bound is computed and
 * returned without being cached. Streams look up with `lookup(key, args, { signal })`, which
 * computes a large one off the event loop, once for all its concurrent waiters, and stops it
 * when they all are cancelled; `memo(key, { context: args })` computes on the spot.
 */
export type PermutationCache = SharedLruCache<Uint32Array, PermutationArgs>;

/** The order `args` names, computed on this thread. */
export function computeOrder(args: PermutationArgs): Uint32Array {
  return args.mix
    ? mixedSequence(args.mix, args.seed, args.epoch)
    : permutation(args.n, args.seed, args.epoch);
}

/**
 * Makes a {@link PermutationCache} holding at most `maxBytes` bytes of permutations, each for
 * `lingerMs` after its last look up by the clock `now` (milliseconds), computing large ones on
 * `offloader`'s threads.
 */
export function createPermutationCache(
  maxBytes: number,
  lingerMs = SAMPLING_CACHE_LINGER_MS,
  now: () => number = () => performance.now(),
  offloader: Offloader = sharedOffloader(),
): PermutationCache {
  return new SharedLruCache<Uint32Array, PermutationArgs>(
    {
      maxSize: maxBytes,
      ttl: lingerMs,
      updateAgeOnGet: true,
      // Dropped on time, not when next touched: an idle loader gives the memory back.
      ttlAutopurge: true,
      perf: { now },
      // The cache accepts positive sizes only; the permutation of an empty split has none.
      sizeCalculation: (order) => Math.max(1, order.byteLength),
      memoMethod: (_key, _old, { context }) => computeOrder(context),
    },
    ({ n, seed, epoch, mix }, signal) =>
      mix
        ? offloader.run('mixedSequence', { spec: mix, seed, epoch }, signal)
        : offloader.run('permutation', { n, seed, epoch }, signal),
  );
}
