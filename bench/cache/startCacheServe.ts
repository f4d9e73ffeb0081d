import type { DbConfig } from '../../src/core/index.js';
import { startServeProcess, type ServeProcess } from '../stream/serveProcess.js';

/** The sample cache a loader of `bench cache` runs with. @internal */
export interface CacheTiers {
  /** `--cache-memory-bytes` (0: no memory tier). */
  memoryBytes: number;
  /** `--cache-dir`: the disk tier's folder (absent: no disk tier). */
  dir?: string;
  /** `--cache-disk-bytes`. */
  diskBytes?: number;
}

/** A `serve` child of `bench cache`. @internal */
export interface CacheServe extends ServeProcess {
  /** Resolves once it logged `sample cache on` (rejects after `timeoutMs`). */
  cacheOn(timeoutMs?: number): Promise<Record<string, unknown>>;
}

/**
 * Runs the real `serve` (one process, see `startServeProcess`) with the sample cache of
 * `cache` (undefined: none, whatever this process's environment says). Its `stop` is a
 * graceful shutdown: the disk tier commits and closes. This benchmark counts database reads
 * and cache hits from its `/metrics` between epochs.
 */
export async function startCacheServe(options: {
  db: DbConfig;
  cache: CacheTiers | undefined;
  onSpawn: (pid: number) => void;
}): Promise<CacheServe> {
  const { cache } = options;
  let cacheRecord: Record<string, unknown> | undefined;
  const serve = await startServeProcess({
    db: options.db,
    onSpawn: options.onSpawn,
    env: {
      SCYLLA_LOADER_CACHE_MEMORY_BYTES: String(cache?.memoryBytes ?? 0),
      // An empty variable unsets the folder: no disk tier.
      SCYLLA_LOADER_CACHE_DIR: cache?.dir ?? '',
      ...(cache?.dir !== undefined && cache.diskBytes !== undefined
        ? { SCYLLA_LOADER_CACHE_DISK_BYTES: String(cache.diskBytes) }
        : {}),
    },
    onRecord: (record) => {
      if (record['msg'] === 'sample cache on') cacheRecord = record;
    },
  });
  return {
    ...serve,
    cacheOn: async (timeoutMs = 5_000) => {
      const deadline = Date.now() + timeoutMs;
      while (cacheRecord === undefined) {
        if (Date.now() > deadline) {
          throw new Error(`the loader did not log 'sample cache on':\n${serve.output()}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return cacheRecord;
    },
  };
}
