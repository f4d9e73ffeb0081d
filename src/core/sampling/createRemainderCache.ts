import { type Offloader, sharedOffloader } from '../offload/Offloader.js';
import { SharedLruCache } from '../offload/SharedLruCache.js';
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
 * (`SAMPLING_CACHE_LINGER_MS`), and bounded by bytes, least recently used out; looked up with
 * `lookup(key, args, { signal })` (large ones computed off the event loop, stopped when every
 * waiter is cancelled) or `memo(key, { context: args })`, with a key naming the split and the
 * checkpoint's digest.
 */
export type RemainderCache = SharedLruCache<Uint32Array, RemainderArgs>;

/**
 * Makes a {@link RemainderCache} holding at most `maxBytes` bytes, each remainder for `lingerMs`
 * after its last look up by the clock `now` (milliseconds), computing large ones on
 * `offloader`'s threads.
 */
export function createRemainderCache(
  maxBytes: number,
  lingerMs = SAMPLING_CACHE_LINGER_MS,
  now: () => number = () => performance.now(),
  offloader: Offloader = sharedOffloader(),
): RemainderCache {
  return new SharedLruCache<Uint32Array, RemainderArgs>(
    {
      maxSize: maxBytes,
      ttl: lingerMs,
      updateAgeOnGet: true,
      ttlAutopurge: true,
      perf: { now },
      sizeCalculation: (r) => Math.max(1, r.byteLength),
      memoMethod: (_key, _old, { context }) =>
        epochRemainder(context.n, context.layers, context.rules),
    },
    ({ n, layers, rules }, signal) =>
      offloader.run(
        'epochRemainder',
        {
          n,
          // Only what the remainder depends on crosses to the thread (the rules may be a
          // whole request).
          layers: layers.map((l) => ({
            worldSize: l.worldSize,
            progress: l.progress.map((p) => ({ low: p.low, deliveredAbove: p.deliveredAbove })),
          })),
          rules: {
            shardRule: rules.shardRule,
            batchSize: rules.batchSize,
            dropLast: rules.dropLast,
          },
        },
        signal,
      ),
  );
}
