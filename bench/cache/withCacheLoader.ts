import type { DbConfig } from '../../src/core/index.js';
import type { CacheBenchRun } from './measureEpoch.js';
import { startCacheServe, type CacheServe, type CacheTiers } from './startCacheServe.js';

/**
 * Runs `body` with a fresh loader reaching the database at `db` with the cache `tiers`
 * (checked to be on as asked; undefined: none), and stops it after, whatever happens. The
 * warnings it logged (a disk tier that failed, for one) become notes of the report. @internal
 */
export async function withCacheLoader<T>(
  run: CacheBenchRun,
  db: DbConfig,
  tiers: CacheTiers | undefined,
  label: string,
  body: (serve: CacheServe) => Promise<T>,
): Promise<T> {
  const serve = await startCacheServe({ db, cache: tiers, onSpawn: run.onSpawn });
  try {
    if (tiers) {
      const on = await serve.cacheOn();
      if (on['cacheMemoryBytes'] !== tiers.memoryBytes || on['cacheDir'] !== (tiers.dir ?? null)) {
        throw new Error(
          `${label}: the loader's cache is not the one asked for: ${JSON.stringify(on)}`,
        );
      }
    }
    return await body(serve);
  } finally {
    await serve.stop();
    for (const w of new Set(serve.warnings)) run.notes.push(`${label}: the loader warned: ${w}`);
  }
}
