import type { DbPath } from '../db/DbPath.js';
import { BatchFetcher } from '../fetch/BatchFetcher.js';
import type { LoaderMetrics } from '../metrics/loaderMetrics.js';
import { epochShard } from '../sampling/epochShard.js';
import type { SplitIds } from '../splits/SplitIds.js';
import type { SampleCache } from '../cache/SampleCache.js';

/** Disk writes queued past which warming waits for them to be committed. */
const WARM_BACKLOG_BYTES = 8 * 1024 * 1024;

/** What {@link warmCache} did. */
export interface WarmSummary {
  samples: number;
  /** Samples read from the database (the rest were cached already). */
  read: number;
  bytes: number;
  seconds: number;
}

/** What {@link warmCache} needs. */
export interface WarmOptions {
  dataset: string;
  split: SplitIds;
  /** The dataset's identity in the cache (see `cacheScope`). */
  scope: Buffer;
  cache: SampleCache;
  paths: readonly DbPath[];
  metrics: LoaderMetrics;
  /** Reads in flight at most. */
  concurrency: number;
  signal?: AbortSignal;
  /** Told the samples and bytes done so far, every batch. */
  onProgress?(samples: number, bytes: number): void;
}

/**
 * Fills a host's sample cache with a split before a job starts: every sample read once through
 * the fetch engine (its retries, hedges and single flight), in stored order, samples the cache
 * has already skipped, at the disk's pace. Resolves once the disk tier has committed what was
 * read.
 */
export async function warmCache(options: WarmOptions): Promise<WarmSummary> {
  const started = performance.now();
  const batchSize = 256;
  const fetcher = new BatchFetcher({
    sources: [{ keyspace: options.dataset, ids: options.split.ids }],
    firstEpoch: 0,
    endEpoch: 1,
    shardOf: (epoch) =>
      epochShard({
        n: options.split.count,
        seed: 0n,
        epoch,
        rank: 0,
        worldSize: 1,
        shardRule: 'uneven',
        shuffle: 'none',
        batchSize,
        dropLast: false,
      }),
    batchSize,
    prefetch: Math.max(2, Math.ceil((options.concurrency * 2) / batchSize)),
    ordering: 'out-of-order',
    missing: 'skip',
    maxInFlight: options.concurrency,
    readAttempts: 5,
    retryBaseMs: 50,
    cache: { store: options.cache, scopes: [options.scope] },
    paths: options.paths,
    metrics: options.metrics,
    signal: options.signal ?? new AbortController().signal,
  });
  let samples = 0;
  let bytes = 0;
  for await (const batch of fetcher.batches()) {
    // Reads wait for the disk rather than outrun it (a stream would drop writes instead).
    if (options.cache.diskBacklogBytes > WARM_BACKLOG_BYTES) await options.cache.settled();
    samples += batch.samples.length;
    for (const s of batch.samples) bytes += s.data.length + (s.labelBlob?.length ?? 0);
    options.onProgress?.(samples, bytes);
  }
  await options.cache.settled();
  return {
    samples,
    read: fetcher.cacheFigures.misses,
    bytes,
    seconds: (performance.now() - started) / 1000,
  };
}
