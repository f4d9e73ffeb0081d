import { scrapeMetrics } from '../../test/faults/index.js';

/** The loader's counters this benchmark reads from `/metrics`, each summed over its labels. */
export interface LoaderCounters {
  /**
   * Database read queries answered (`scylla_loader_db_read_duration_seconds_count`): one per
   * sample, or one per group of small samples; hedged and retried reads that answered too.
   */
  dbQueries: number;
  /** Samples the cache did not have, which a stream read from the database itself. */
  cacheMisses: number;
  cacheHitsMemory: number;
  cacheHitsDisk: number;
  /** Samples a stream took from another stream's read of them. */
  cacheSharedReads: number;
  evictionsMemory: number;
  evictionsDisk: number;
  diskWritesDropped: number;
  hedgedReads: number;
  retries: number;
}

/** The cache's gauges at one scrape. */
export interface LoaderGauges {
  cacheMemoryBytes: number;
  /** Bytes the disk tier counts against its bound (not its file's size). */
  cacheDiskBytes: number;
  /** 1 while the disk tier is on. */
  cacheDiskEnabled: number;
}

/** Sum of every series of `name` (`name` alone or `name{...}`). */
function sumOf(metrics: Map<string, number>, name: string): number {
  let sum = 0;
  for (const [series, value] of metrics) {
    if (series === name || series.startsWith(`${name}{`)) sum += value;
  }
  return sum;
}

/**
 * Scrapes the loader at `metricsAddress` once: its read and cache counters and the cache's
 * gauges. @internal
 */
export async function readLoaderCounters(
  metricsAddress: string,
): Promise<{ counters: LoaderCounters; gauges: LoaderGauges }> {
  const m = await scrapeMetrics(metricsAddress);
  const get = (series: string): number => m.get(series) ?? 0;
  return {
    counters: {
      dbQueries: sumOf(m, 'scylla_loader_db_read_duration_seconds_count'),
      cacheMisses: get('scylla_loader_cache_misses_total'),
      cacheHitsMemory: get('scylla_loader_cache_hits_total{tier="memory"}'),
      cacheHitsDisk: get('scylla_loader_cache_hits_total{tier="disk"}'),
      cacheSharedReads: get('scylla_loader_cache_shared_reads_total'),
      evictionsMemory: get('scylla_loader_cache_evictions_total{tier="memory"}'),
      evictionsDisk: get('scylla_loader_cache_evictions_total{tier="disk"}'),
      diskWritesDropped: get('scylla_loader_cache_disk_writes_dropped_total'),
      hedgedReads: sumOf(m, 'scylla_loader_db_hedged_reads_total'),
      retries: sumOf(m, 'scylla_loader_db_retries_total'),
    },
    gauges: {
      cacheMemoryBytes: get('scylla_loader_cache_memory_bytes'),
      cacheDiskBytes: get('scylla_loader_cache_disk_bytes'),
      cacheDiskEnabled: get('scylla_loader_cache_disk_enabled'),
    },
  };
}

/** What the counters grew by from `before` to `after`. @internal */
export function counterDelta(before: LoaderCounters, after: LoaderCounters): LoaderCounters {
  return Object.fromEntries(
    Object.entries(after).map(([k, v]) => [k, v - before[k as keyof LoaderCounters]]),
  ) as unknown as LoaderCounters;
}
