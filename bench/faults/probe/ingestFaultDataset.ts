import type cassandra from 'cassandra-driver';
import { ingestDataset, readDatasetInfo, datasetExists } from '../../../src/core/index.js';

/** What {@link ingestFaultDataset} writes. @internal */
export interface FaultDatasetOptions {
  name: string;
  samples: number;
  /** Bytes of each sample (default 1,000). */
  sampleBytes?: number;
  /** Labels are `i mod classes` (default 10). */
  classes?: number;
}

/**
 * Makes dataset `name` hold `samples` generated samples through the real ingest (bytes in
 * memory, labels `i mod classes`, a text metadata column `grp` with 7 values so CreateSplits
 * can group by it); nothing is done when it already holds that many. The fault benchmarks
 * stream it; its bytes are not images, which a fuzzed transform must meet as DATA_LOSS.
 *
 * @internal
 */
export async function ingestFaultDataset(
  client: cassandra.Client,
  options: FaultDatasetOptions,
): Promise<void> {
  const { name, samples } = options;
  const size = options.sampleBytes ?? 1000;
  const classes = options.classes ?? 10;
  if (
    (await datasetExists(client, name)) &&
    (await readDatasetInfo(client, name)).sampleCount === samples
  ) {
    return;
  }
  await ingestDataset(client, {
    dataset: name,
    source: {
      description: `faults: ${samples} generated samples of ${size} bytes`,
      entries: Array.from({ length: samples }, (_, i) => ({
        sourceKey: `s/${i}`,
        filePath: `generated/${i}`,
        data: Buffer.from(`sample-${i}-`.padEnd(size, 'x')),
        label: i % classes,
        metadata: { grp: `g${i % 7}` },
        origin: `generated:${i}`,
      })),
      labelNames: [],
      columns: [{ name: 'grp', type: 'text' }],
    },
    replication: { class: 'SimpleStrategy', replicationFactor: 1 },
    concurrency: 64,
    strict: false,
  });
}
