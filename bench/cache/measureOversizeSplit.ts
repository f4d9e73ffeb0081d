import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { DbConfig } from '../../src/core/index.js';
import type { CacheOversize } from './CacheBenchReport.js';
import { warmHitRatio, warmSamplesPerSecond } from './cacheGoals.js';
import { measureEpochs, type CacheBenchRun } from './measureEpoch.js';
import { withCacheLoader } from './withCacheLoader.js';

/**
 * A split larger than the cache: its epochs through a fresh loader with no memory tier and a
 * fresh disk tier in `dir` bound to `diskBytes`: the warm epochs' hit ratio and rate, and the
 * store's file (`<dir>/samples/data.mdb`) after every epoch and after the loader stopped (its
 * store committed and closed) against the bound. @internal
 */
export async function measureOversizeSplit(
  run: CacheBenchRun,
  options: {
    db: DbConfig;
    dir: string;
    diskBytes: number;
    dataset: string;
    samples: number;
    splitBytes: number;
    epochs: number;
    seed: number;
    rttMs: number;
  },
): Promise<CacheOversize> {
  const dataFile = path.join(options.dir, 'samples', 'data.mdb');
  const dataFileBytes: number[] = [];
  const dataFileAllocatedBytes: number[] = [];
  const sizeDataFile = async (): Promise<string> => {
    const { size, allocated } = await fileBytes(dataFile);
    dataFileBytes.push(size);
    dataFileAllocatedBytes.push(allocated);
    return `data.mdb ${mib(size)} MiB of ${mib(options.diskBytes)}`;
  };
  const tiers = { memoryBytes: 0, dir: options.dir, diskBytes: options.diskBytes };
  const label = `split twice the cache, ${options.rttMs} ms`;
  const epochs = await withCacheLoader(run, options.db, tiers, label, (serve) =>
    measureEpochs(run, serve, { ...options, label, afterEpoch: sizeDataFile }),
  );
  await sizeDataFile();
  return {
    rttMs: options.rttMs,
    dataset: options.dataset,
    samples: options.samples,
    splitBytes: options.splitBytes,
    diskBoundBytes: options.diskBytes,
    epochs,
    warmHitRatio: warmHitRatio(epochs),
    warmSamplesPerSecond: warmSamplesPerSecond(epochs),
    dataFileBytes,
    dataFileAllocatedBytes,
    dataFileOverBound: Math.max(...dataFileBytes) / options.diskBytes,
  };
}

const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);

/** Size of `file` and the bytes allocated to it on disk (it may be sparse); 0 while absent. */
async function fileBytes(file: string): Promise<{ size: number; allocated: number }> {
  try {
    const s = await stat(file);
    return { size: s.size, allocated: s.blocks * 512 };
  } catch {
    return { size: 0, allocated: 0 };
  }
}
