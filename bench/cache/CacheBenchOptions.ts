import path from 'node:path';
import {
  batchSizeFlag,
  flag,
  parseFlags,
  PHOTO_OUTPUT_FLAGS,
  text,
  wholeNumber,
  type FlagInput,
} from '../cli/benchOptions.js';
import type { BenchInput } from '../stream/StreamBenchOptions.js';

/** The disk tier's smallest bound (`serve --cache-disk-bytes`). @internal */
export const MIN_DISK_BYTES = 16 * 1024 * 1024;

/** The flags of `bench cache` with their defaults (full: a few minutes; quick: about one). */
export const CACHE_FLAGS = {
  samples: flag(
    '--samples <n>',
    'samples in the split the legs and the sweep stream',
    wholeNumber('--samples', 100, 10_000_000),
    20_000,
    1_000,
  ),
  sampleBytes: flag(
    '--sample-bytes <n>',
    'bytes of every generated (random, incompressible) sample',
    wholeNumber('--sample-bytes', 100, 16 * 1024 * 1024),
    10_000,
  ),
  batchSize: batchSizeFlag(64),
  rttMs: flag(
    '--rtt <ms>',
    'added round trip (half each way) of the high-latency legs, the sweep and the split ' +
      'twice the cache (the low one is 0)',
    wholeNumber('--rtt', 1, 10_000),
    150,
  ),
  jobs: flag('--jobs <n>', 'concurrent jobs of the sweep', wholeNumber('--jobs', 2, 64), 4),
  ...PHOTO_OUTPUT_FLAGS,
  dataset: flag(
    '--dataset <name>',
    'dataset name (default bench_cache_n<samples>_b<bytes>); the split twice the cache, when ' +
      'it needs more samples, is <name>_x2',
    text,
  ),
};

/** What a caller of `bench cache` gives; the flags may be left out (defaults). */
export interface CacheBenchInput extends BenchInput, FlagInput<typeof CACHE_FLAGS> {
  toxiproxy: string;
}

/** `bench_cache_n<N>_b<bytes>`: one dataset per shape, so a quick run never spoils a full one. */
function defaultCacheDatasetName(samples: number, sampleBytes: number): string {
  return `bench_cache_n${samples}_b${sampleBytes}`;
}

/**
 * Fills in the defaults of `bench cache` (20,000 random samples of 10 kB, batches of 64, 0 and
 * 150 ms, a sweep of 4 jobs) or of its quick mode (1,000 samples), and sizes every cache:
 *
 * - the legs with a cache and the sweep: a memory tier the split fits in with room to spare
 *   and a disk tier bound to 4x the split (the disk tier keeps its pages to half its bound at
 *   first, and LMDB takes ~1.2x a 10 kB value), so nothing is evicted and the warm epochs
 *   measure a cache holding the whole split;
 * - the split twice the cache: no memory tier and the disk tier bound to half the split's
 *   bytes. The bound is at least 16 MiB, so that split has at least 32 MiB of samples: more
 *   samples than `--samples` when those are fewer (another dataset, `<name>_x2`).
 */
export function resolveCacheBenchOptions(input: CacheBenchInput) {
  const f = parseFlags(CACHE_FLAGS, input, input.quick);
  const splitBytes = f.samples * f.sampleBytes;
  const oversizeSamples = Math.max(f.samples, Math.ceil((2 * MIN_DISK_BYTES) / f.sampleBytes));
  const dataset = f.dataset ?? defaultCacheDatasetName(f.samples, f.sampleBytes);
  const oversizeDataset =
    oversizeSamples === f.samples
      ? dataset
      : f.dataset === undefined
        ? defaultCacheDatasetName(oversizeSamples, f.sampleBytes)
        : `${f.dataset}_x2`;
  return {
    db: input.db,
    toxiproxy: input.toxiproxy,
    samples: f.samples,
    sampleBytes: f.sampleBytes,
    batchSize: f.batchSize,
    dataset,
    /** The added round trips of the side-by-side legs, ms. */
    rttsMs: [0, f.rttMs],
    highRttMs: f.rttMs,
    jobs: f.jobs,
    /** Epochs per leg: the cold one (0), then the warm ones. */
    epochs: 3,
    cache: {
      memoryBytes: Math.ceil(splitBytes * 1.25) + f.samples * 1024,
      diskBytes: Math.max(MIN_DISK_BYTES, 4 * splitBytes),
    },
    oversize: {
      dataset: oversizeDataset,
      samples: oversizeSamples,
      memoryBytes: 0,
      diskBytes: Math.floor((oversizeSamples * f.sampleBytes) / 2),
    },
    outDir: f.outDir === undefined ? path.join(input.stateRoot, 'bench') : path.resolve(f.outDir),
    progress: input.progress,
    log: input.log,
    signal: input.signal,
  };
}

/** Settings of `runCacheBench`, as {@link resolveCacheBenchOptions} fills them in. */
export type CacheBenchOptions = ReturnType<typeof resolveCacheBenchOptions>;
