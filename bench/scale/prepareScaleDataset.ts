import type cassandra from 'cassandra-driver';
import {
  invalidArgument,
  ingestDataset,
  readDatasetInfo,
  datasetExists,
  validateIdentifier,
} from '../../src/core/index.js';
import type { BenchProgressFactory } from '../stream/StreamBenchOptions.js';
import { SCALE_CLASSES, SCALE_SAMPLE_BYTES, scaleIngestEntry } from './scaleSample.js';

/** The scale benchmark's dataset as the database holds it. @internal */
export interface ScaleDataset {
  name: string;
  samples: number;
  totalBytes: number;
  classes: number;
  /** Whether this run wrote samples (false: it was already complete). */
  ingested: boolean;
  /** Seconds spent writing, 0 when it was already there. */
  prepareSeconds: number;
}

/**
 * Makes sure dataset `name` holds exactly samples 0..samples-1 of the scale benchmark
 * (`scaleIngestEntry`), written by the real ingest (`ingestDataset`, fed the bytes in memory):
 * nothing is done when its counts already say so; otherwise the ingest runs over all of them
 * and skips those already present, so an interrupted preparation resumes. A dataset with more
 * samples is refused.
 *
 * @internal
 */
export async function prepareScaleDataset(
  client: cassandra.Client,
  options: {
    name: string;
    samples: number;
    progress: BenchProgressFactory;
    concurrency?: number;
    signal?: AbortSignal;
  },
): Promise<ScaleDataset> {
  const { name, samples } = options;
  validateIdentifier(name, 'dataset');
  const present = (await datasetExists(client, name))
    ? (await readDatasetInfo(client, name)).sampleCount
    : 0;
  if (present > samples) {
    throw invalidArgument(
      `dataset ${name} holds ${present} samples, more than the ${samples} asked for; ` +
        'drop it (`DROP KEYSPACE`) or pick another --dataset',
    );
  }
  const expectedBytes = samples * SCALE_SAMPLE_BYTES;
  if (present === samples) {
    const info = await readDatasetInfo(client, name);
    return {
      name,
      samples,
      totalBytes: info.totalBytes,
      classes: info.classCounts.size,
      ingested: false,
      prepareSeconds: 0,
    };
  }

  const started = performance.now();
  const entries = Array.from({ length: samples }, (_, i) => scaleIngestEntry(i));
  const bar = options.progress(`ingest ${name}`, samples, 'samples');
  let summary;
  try {
    summary = await ingestDataset(client, {
      dataset: name,
      source: {
        description: `bench scale: ${samples} generated samples of ${SCALE_SAMPLE_BYTES} bytes`,
        entries,
        labelNames: Array.from({ length: SCALE_CLASSES }, (_, i) => `c${i}`),
        columns: [],
      },
      replication: { class: 'SimpleStrategy', replicationFactor: 1 },
      concurrency: options.concurrency ?? 64,
      strict: true,
      onProgress: (p) => bar.update(p.done, p.bytesWritten),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } finally {
    bar.stop();
  }
  const { sampleCount, totalBytes, classCounts } = summary.dataset;
  if (sampleCount !== samples || totalBytes !== expectedBytes) {
    throw invalidArgument(
      `dataset ${name} holds ${sampleCount} samples of ${totalBytes} bytes after the ingest, ` +
        `not ${samples} of ${expectedBytes}; drop it and run again`,
    );
  }
  return {
    name,
    samples,
    totalBytes,
    classes: classCounts.size,
    ingested: true,
    prepareSeconds: (performance.now() - started) / 1000,
  };
}
