import type cassandra from 'cassandra-driver';
import type { PhotoPresetName } from '../../src/datasets/photos/PhotoPreset.js';
import { readPhotoFolder } from '../../src/datasets/photos/readPhotoFolder.js';
import { writePhotoJpegs } from '../../src/datasets/photos/writePhotoJpegs.js';
import {
  invalidArgument,
  ingestDataset,
  readDatasetInfo,
  datasetExists,
  validateIdentifier,
} from '../../src/core/index.js';
import type { BenchProgressFactory } from './StreamBenchOptions.js';

/** The benchmark's dataset as the database holds it. @internal */
export interface StreamDataset {
  name: string;
  samples: number;
  totalBytes: number;
  meanBytes: number;
  /** Whether this run ingested it (false: it was already complete). */
  ingested: boolean;
  /** Seconds spent making images and ingesting them, 0 when it was already there. */
  prepareSeconds: number;
}

/**
 * Makes sure dataset `name` holds exactly images 0..samples-1 of the benchmark's ImageFolder
 * tree of photo crops ({@link writePhotoJpegs}, preset `payload`, default `imagenet`): nothing
 * is done when it already holds that many samples; otherwise the missing images are written
 * and the tree (those images only) goes through the real ingest, which skips the samples
 * already present. A dataset with more samples is refused (drop it first).
 *
 * @internal
 */
export async function prepareStreamDataset(
  client: cassandra.Client,
  options: {
    name: string;
    samples: number;
    imageRoot: string;
    /** Must match `imageRoot` (see `benchPaths`). */
    payload?: PhotoPresetName;
    progress: BenchProgressFactory;
    signal?: AbortSignal;
  },
): Promise<StreamDataset> {
  const { name, samples } = options;
  validateIdentifier(name, 'dataset');
  const present = (await datasetExists(client, name))
    ? (await readDatasetInfo(client, name)).sampleCount
    : 0;
  if (present > samples) {
    throw invalidArgument(
      `dataset ${name} holds ${present} samples, more than the ${samples} asked for; ` +
        'remove it with `bench stream --drop` (same --samples) or pick another --dataset',
    );
  }
  if (present === samples) {
    const info = await readDatasetInfo(client, name);
    return {
      name,
      samples,
      totalBytes: info.totalBytes,
      meanBytes: info.totalBytes / samples,
      ingested: false,
      prepareSeconds: 0,
    };
  }

  const started = performance.now();
  const images = options.progress(`images ${options.imageRoot}`, samples, 'images');
  try {
    await writePhotoJpegs({
      root: options.imageRoot,
      count: samples,
      preset: options.payload ?? 'imagenet',
      onProgress: (done, bytes) => images.update(done, bytes),
      log: (line) => images.log(line),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } finally {
    images.stop();
  }
  const source = await readPhotoFolder(options.imageRoot, samples);
  const ingest = options.progress(`ingest ${name}`, source.entries.length, 'samples');
  let summary;
  try {
    summary = await ingestDataset(client, {
      dataset: name,
      source,
      replication: { class: 'SimpleStrategy', replicationFactor: 1 },
      concurrency: 32,
      strict: true,
      onProgress: (p) => ingest.update(p.done, p.bytesWritten),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } finally {
    ingest.stop();
  }
  const { sampleCount, totalBytes } = summary.dataset;
  if (sampleCount !== samples) {
    throw invalidArgument(
      `dataset ${name} holds ${sampleCount} samples after the ingest, not ${samples}; ` +
        'remove it with `bench stream --drop` and run again',
    );
  }
  return {
    name,
    samples,
    totalBytes,
    meanBytes: totalBytes / samples,
    ingested: true,
    prepareSeconds: (performance.now() - started) / 1000,
  };
}

/**
 * Drops a benchmark dataset (its keyspace); a dataset that does not exist is fine.
 *
 * @internal
 */
export async function dropStreamDataset(client: cassandra.Client, name: string): Promise<boolean> {
  validateIdentifier(name, 'dataset');
  const existed = await datasetExists(client, name);
  await client.execute(`DROP KEYSPACE IF EXISTS ${name}`);
  return existed;
}
