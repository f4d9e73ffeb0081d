import { type SettingNames, settingName } from '../config/settingNames.js';
import { invalidArgument } from '../errors/LoaderError.js';
import type { LoaderMetrics } from '../metrics/loaderMetrics.js';
import { decodeCacheEntry, encodeCacheEntry } from './cacheEntry.js';
import type { CachedSample } from './CachedSample.js';
import { DiskTier } from './DiskTier.js';
import { MemoryTier } from './MemoryTier.js';

/**
 * What a read that another stream has in flight ends with: the sample, null when the database
 * has no row for the id, or undefined when that read gave up (the waiter reads it itself).
 */
export type SharedRead = Promise<CachedSample | null | undefined>;

/** What a claim is told apart by (see {@link SampleCache.claim}). */
export type ClaimToken = object;

/** Where a sample can be had without a database request of one's own. */
export type CacheLookup = { sample: CachedSample } | { shared: SharedRead } | undefined;

/** The cache's settings, as `serve` takes them. */
export interface SampleCacheConfig {
  /** Bytes of the memory tier of each process (0: none). */
  cacheMemoryBytes: number;
  /** Folder of the disk tier, shared by the host's processes (absent: none). */
  cacheDir?: string | undefined;
  /** Bytes of the disk tier, all processes together. */
  cacheDiskBytes: number;
  /** How the refusal of a disk tier's folder names its setting (default: `cacheDir`). */
  settingNames?: SettingNames | undefined;
}

type CacheMetrics = Pick<
  LoaderMetrics,
  | 'cacheHits'
  | 'cacheMisses'
  | 'cacheSharedReads'
  | 'cacheMemoryBytes'
  | 'cacheDiskBytes'
  | 'cacheEvictions'
  | 'cacheDamaged'
  | 'cacheDiskErrors'
  | 'cacheDiskEnabled'
  | 'cacheWritesDropped'
>;

/**
 * The sample cache of one loader process, shared by all its streams: a memory tier of its own
 * and a disk tier shared with the host's other processes, either optional, both bounded in
 * bytes. Keys are 32 bytes: the dataset's identity (see `cacheScope`), then the sample id.
 *
 * It also makes reads single flight: a stream that misses claims the id for the database read
 * it is about to make, and other streams asking for that id meanwhile wait for that read
 * ({@link SampleCache.lookup} hands them its promise) instead of making their own.
 *
 * Trouble with the disk never fails a stream: a damaged entry is counted, dropped and read
 * from the database; a disk that fails (full, read-only, gone) turns the disk tier off with
 * one call of `onDiskFailure`, and streams go on from memory and the database.
 */
export class SampleCache {
  private readonly memory: MemoryTier | undefined;
  private disk: DiskTier | undefined;
  private readonly inFlight = new Map<
    string,
    { token: ClaimToken; resolve: (sample: CachedSample | null | undefined) => void }
  >();
  private readonly shared = new Map<string, SharedRead>();

  private constructor(
    config: SampleCacheConfig,
    private readonly metrics: CacheMetrics,
    private readonly onDiskFailure: (err: unknown) => void,
  ) {
    this.memory =
      config.cacheMemoryBytes > 0
        ? new MemoryTier(config.cacheMemoryBytes, () =>
            metrics.cacheEvictions.inc({ tier: 'memory' }),
          )
        : undefined;
    metrics.cacheDiskEnabled.set(0);
  }

  /**
   * Opens the tiers `config` asks for; undefined when it asks for none. Throws an Error naming
   * the folder's setting (as `config.settingNames` does) when the disk tier's folder cannot be made or opened. A store there that
   * does not open is made anew (`onDiskRemade` hears why).
   */
  static open(
    config: SampleCacheConfig,
    metrics: CacheMetrics,
    onDiskFailure: (err: unknown) => void,
    onDiskRemade?: (err: unknown) => void,
  ): SampleCache | undefined {
    if (config.cacheMemoryBytes <= 0 && config.cacheDir === undefined) return undefined;
    const cache = new SampleCache(config, metrics, onDiskFailure);
    if (config.cacheDir !== undefined) {
      try {
        cache.disk = DiskTier.open(config.cacheDir, config.cacheDiskBytes, {
          onCommit: (evicted) => cache.onCommit(evicted),
          onError: (err) => cache.diskFailed(err),
          onDrop: () => metrics.cacheWritesDropped.inc(),
          onRemade: (err) => onDiskRemade?.(err),
        });
      } catch (err) {
        throw invalidArgument(
          `${settingName(config.settingNames, 'cacheDir')} ${config.cacheDir}: the disk cache cannot be opened there ` +
            `(${(err as Error).message}); give a writable folder on local storage, or leave ` +
            'the setting out to run without a disk tier',
          err,
        );
      }
      metrics.cacheDiskEnabled.set(1);
      metrics.cacheDiskBytes.set(cache.disk.bytes);
    }
    return cache;
  }

  /** True while the disk tier is on. */
  get diskEnabled(): boolean {
    return this.disk !== undefined;
  }

  /**
   * The sample under `key` from memory or disk (a disk hit is kept in memory too), or a read
   * of it another stream has in flight, or undefined: a miss, which the caller reads from the
   * database after {@link SampleCache.claim}ing it. Counts hits by tier, shared reads and
   * misses.
   */
  lookup(key: Buffer): CacheLookup {
    const k = key.toString('latin1');
    const inMemory = this.memory?.get(k);
    if (inMemory) {
      this.metrics.cacheHits.inc({ tier: 'memory' });
      return { sample: inMemory };
    }
    const onDisk = this.readDisk(key);
    if (onDisk) {
      this.metrics.cacheHits.inc({ tier: 'disk' });
      this.keepInMemory(k, onDisk, true); // views into the entry read, a copy of its own
      return { sample: onDisk };
    }
    const shared = this.shared.get(k);
    if (shared) {
      this.metrics.cacheSharedReads.inc();
      return { shared };
    }
    this.metrics.cacheMisses.inc();
    return undefined;
  }

  /**
   * Claims `key` for a database read about to be made: until it is {@link SampleCache.fill}ed
   * or {@link SampleCache.abandon}ed, other streams' look ups wait for that read. Returns the
   * claim's token, or undefined when another read has the key claimed already.
   */
  claim(key: Buffer): ClaimToken | undefined {
    const k = key.toString('latin1');
    if (this.shared.has(k)) return undefined;
    const token: ClaimToken = {};
    this.shared.set(
      k,
      new Promise((resolve) => {
        this.inFlight.set(k, { token, resolve });
      }),
    );
    return token;
  }

  /**
   * A database read of `key` answered with `sample` (null: no row): keeps it in the tiers and
   * hands it to the streams waiting for it. A row that is missing is not kept.
   */
  fill(key: Buffer, sample: CachedSample | null): void {
    const k = key.toString('latin1');
    try {
      if (sample && this.disk) {
        // One copy for both tiers: the disk entry, which the memory tier keeps views into.
        const entry = encodeCacheEntry(key, sample);
        this.disk.write(key, entry);
        this.keepInMemory(k, decodeCacheEntry(key, entry)!, true);
      } else if (sample) {
        this.keepInMemory(k, sample);
      }
    } finally {
      // Whatever keeping it did, the streams waiting for the read get its answer.
      this.settle(k, sample);
    }
  }

  /**
   * The read that claimed `key` with `token` gave up: the streams waiting for it read the
   * sample themselves. A claim made since by another read (the first one settled meanwhile)
   * is left alone.
   */
  abandon(key: Buffer, token: ClaimToken): void {
    const k = key.toString('latin1');
    if (this.inFlight.get(k)?.token === token) this.settle(k, undefined);
  }

  /** Commits the disk tier's queued writes, then closes it. */
  async close(): Promise<void> {
    const disk = this.disk;
    this.disk = undefined;
    await disk?.close();
  }

  /** Bytes of disk writes queued and not committed yet (0 without a disk tier). */
  get diskBacklogBytes(): number {
    return this.disk?.backlogBytes ?? 0;
  }

  /** Resolves once the disk tier's queued writes are committed. */
  async settled(): Promise<void> {
    await this.disk?.settled();
  }

  private settle(k: string, outcome: CachedSample | null | undefined): void {
    const claim = this.inFlight.get(k);
    if (!claim) return;
    this.inFlight.delete(k);
    this.shared.delete(k);
    claim.resolve(outcome);
  }

  private keepInMemory(k: string, sample: CachedSample, owned = false): void {
    if (!this.memory) return;
    this.memory.set(k, sample, owned);
    this.metrics.cacheMemoryBytes.set(this.memory.bytes);
  }

  /** The disk tier's good entry of `key`; a damaged one is counted and dropped. */
  private readDisk(key: Buffer): CachedSample | undefined {
    const disk = this.disk;
    if (!disk) return undefined;
    let raw: Buffer | undefined;
    try {
      raw = disk.get(key);
    } catch (err) {
      this.diskFailed(err);
      return undefined;
    }
    if (!raw) return undefined;
    const sample = decodeCacheEntry(key, raw);
    if (sample) return sample;
    this.metrics.cacheDamaged.inc();
    disk.remove(key);
    return undefined;
  }

  private onCommit(evicted: number): void {
    if (evicted > 0) this.metrics.cacheEvictions.inc({ tier: 'disk' }, evicted);
    if (this.disk) this.metrics.cacheDiskBytes.set(this.disk.bytes);
  }

  /** Turns the disk tier off, once, for the rest of the process's life. */
  private diskFailed(err: unknown): void {
    const disk = this.disk;
    if (!disk) return;
    this.disk = undefined;
    this.metrics.cacheDiskErrors.inc();
    this.metrics.cacheDiskEnabled.set(0);
    this.onDiskFailure(err);
    disk.close().catch(() => undefined);
  }
}
