/**
 * A least-recently-used cache bounded by the total size of its values (as the caller measures
 * them), with an optional time to live. Loads of the same key that overlap share one promise.
 */
export class BoundedCache<V> {
  private readonly entries = new Map<string, { value: V; size: number; expires: number }>();
  private readonly loading = new Map<string, Promise<V>>();
  private used = 0;

  constructor(
    private readonly maxSize: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  /** Returns the cached value, or loads, stores and returns it. */
  async get(key: string, load: () => Promise<V>, ttlMs = Infinity): Promise<V> {
    const hit = this.entries.get(key);
    if (hit && hit.expires > Date.now()) {
      this.entries.delete(key);
      this.entries.set(key, hit); // most recently used goes last
      return hit.value;
    }
    if (hit) this.remove(key);
    const pending = this.loading.get(key);
    if (pending) return pending;
    const promise = load().then(
      (value) => {
        this.loading.delete(key);
        this.put(key, value, ttlMs);
        return value;
      },
      (err: unknown) => {
        this.loading.delete(key);
        throw err;
      },
    );
    this.loading.set(key, promise);
    return promise;
  }

  /** Synchronous variant of {@link get} for values computed in place. */
  getOrCompute(key: string, compute: () => V): V {
    const hit = this.entries.get(key);
    if (hit && hit.expires > Date.now()) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.value;
    }
    const value = compute();
    this.put(key, value, Infinity);
    return value;
  }

  /** Total size of the cached values. */
  get size(): number {
    return this.used;
  }

  private put(key: string, value: V, ttlMs: number): void {
    const size = this.sizeOf(value);
    if (size > this.maxSize) return; // too large to cache; the caller still gets it
    this.remove(key);
    while (this.used + size > this.maxSize) {
      const oldest = this.entries.keys().next().value as string;
      this.remove(oldest);
    }
    this.entries.set(key, { value, size, expires: Date.now() + ttlMs });
    this.used += size;
  }

  private remove(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.used -= e.size;
  }
}
