import { createHash } from 'node:crypto';
import { type DbConfig, listedSource } from '../../src/core/index.js';
import { ensureBenchDataset, withDbClient, type BenchDataset } from '../../test/support/index.js';
import type { BenchProgressFactory } from '../stream/StreamBenchOptions.js';

/**
 * The bytes of generated sample `i`: SHAKE256 of its index, `size` bytes. Random-looking, so
 * the database's compression and the page cache do not make reads cheaper than real images'
 * would be, and the same in every run, so an interrupted preparation resumes. @internal
 */
export function cacheSampleBytes(i: number, size: number): Buffer {
  return createHash('shake256', { outputLength: size }).update(`bench-cache-${i}`).digest();
}

/**
 * Makes sure dataset `name` holds `samples` generated samples of `sampleBytes` bytes each
 * (labels `i mod 10`), through the real ingest (see `ensureBenchDataset`). @internal
 */
export function ensureCacheDataset(
  db: DbConfig,
  options: {
    name: string;
    samples: number;
    sampleBytes: number;
    progress?: BenchProgressFactory | undefined;
    signal?: AbortSignal | undefined;
  },
): Promise<BenchDataset> {
  const { name, samples, sampleBytes } = options;
  return withDbClient(db, (client) =>
    ensureBenchDataset(client, {
      name,
      samples,
      totalBytes: samples * sampleBytes,
      concurrency: 64,
      progress: options.progress,
      signal: options.signal,
      source: async () =>
        listedSource({
          description: `bench cache: ${samples} random samples of ${sampleBytes} bytes`,
          entries: Array.from({ length: samples }, (_, i) => ({
            sourceKey: `s/${i}`,
            filePath: `generated/${i}`,
            data: cacheSampleBytes(i, sampleBytes),
            label: i % 10,
            metadata: {},
            origin: `generated:${i}`,
          })),
          labelNames: [],
          columns: [],
        }),
    }),
  );
}
