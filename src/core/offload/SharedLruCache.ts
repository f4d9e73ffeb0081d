import { LRUCache } from 'lru-cache';
import { SharedFlights } from './SharedFlights.js';

/** How a {@link SharedLruCache} look up waits and what it stores. */
export interface SharedLookupOptions {
  /** The caller's cancellation: it stops waiting, and the computation stops once none wait. */
  signal?: AbortSignal;
  /** The entry's time to live once computed (milliseconds; the cache's own when absent). */
  ttl?: number;
}

/**
 * A least-recently-used cache whose misses are computed asynchronously by `compute` (e.g. on
 * an `Offloader` thread) and shared: concurrent look ups of one key wait for one computation
 * (`SharedFlights`), each with its own signal. A computation every waiter left is stopped and
 * not cached; a failed one is passed to every waiter and not cached; a value larger than the
 * cache's bound is returned without being cached. The synchronous `LRUCache` methods (`memo`
 * with a `memoMethod`, `get`, `has`) still work on the same entries.
 */
export class SharedLruCache<V extends object, C> extends LRUCache<string, V, C> {
  private readonly flights = new SharedFlights<V>();

  constructor(
    options: LRUCache.Options<string, V, C>,
    private readonly compute: (context: C, signal: AbortSignal) => Promise<V>,
  ) {
    super(options);
  }

  /** Computations in flight (each with a waiter). */
  get computing(): number {
    return this.flights.size;
  }

  /**
   * The entry of `key`, computed from `context` on a miss (or joined, when another look up is
   * computing it). Rejects with the signal's reason once `options.signal` fires.
   */
  lookup(key: string, context: C, options: SharedLookupOptions = {}): Promise<V> {
    const { signal, ttl } = options;
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    const hit = this.get(key);
    if (hit !== undefined) return Promise.resolve(hit);
    return this.flights.join(
      key,
      async (stop) => {
        const value = await this.compute(context, stop);
        // Finished just as its last waiter left: nobody asked to keep it.
        if (!stop.aborted) this.set(key, value, ttl === undefined ? {} : { ttl });
        return value;
      },
      signal,
    );
  }
}
